"""The job store's tables, written once for both stores.

The job table's columns are one list (`JOB_COLUMNS`), each with the embedded store's schema
version that added it: SQLite's migrations create and extend the table from it, step by step
as they always did, and the shared store creates it whole from it. The event history, the
outbox, the topic cursor and `store_meta` are one text both dialects read. What only the
shared store needs (job folders, fleet locks, step spools) is its own.
`tests/store/test_schema.py` compares what each store ends up with, table by table."""

from __future__ import annotations

from typing import NamedTuple


class Column(NamedTuple):
    name: str
    decl: str  # the type and constraints, in the SQL both stores speak
    since: int  # the embedded store's schema version that added it


JOB_COLUMNS: tuple[Column, ...] = (
    Column("job_id", "TEXT PRIMARY KEY", 1),
    Column("idempotency_key", "TEXT NOT NULL UNIQUE", 1),
    Column("kind", "TEXT NOT NULL CHECK (kind IN ('article', 'topic'))", 1),
    Column("state", "TEXT NOT NULL", 1),
    Column("failure_code", "TEXT", 1),
    Column("source_sha256", "TEXT NOT NULL", 1),
    Column("source_path", "TEXT NOT NULL", 1),
    Column("topic", "TEXT", 1),
    Column("base_commit", "TEXT", 1),
    Column("target_path", "TEXT", 1),
    Column("target_blob_sha256", "TEXT", 1),
    Column("artifact_dir", "TEXT", 1),
    Column("artifact_sha256", "TEXT", 1),
    Column("local_commit", "TEXT", 1),
    Column("remote_commit", "TEXT", 1),
    Column("attempt", "INTEGER NOT NULL DEFAULT 0", 1),
    Column("max_attempts", "INTEGER NOT NULL", 1),
    Column("next_retry_at", "TEXT", 1),
    Column("last_recheck_head", "TEXT", 1),
    Column("last_recheck_delta_sha", "TEXT", 1),
    Column("lease_owner", "TEXT", 1),
    Column("lease_token", "TEXT", 1),
    Column("lease_expires_at", "TEXT", 1),
    Column("requested_target", "TEXT", 1),
    Column("created_at", "TEXT NOT NULL", 1),
    Column("updated_at", "TEXT NOT NULL", 1),
    # version 3: keys hashed; the sanitized key kept for display (see db._hash_keys)
    Column("key_display", "TEXT NOT NULL DEFAULT ''", 3),
    Column("key_legacy", "INTEGER NOT NULL DEFAULT 0", 3),
    # version 4: a PUBLISHED job whose content left the published branch (a takedown, a
    # force-push) is marked withdrawn, never published again by itself.
    Column("withdrawn_at", "TEXT", 4),
    # version 5: publishing workflows. `submit --at` records when a SCHEDULED job becomes
    # due; review mode marks the job (its commit goes to a review branch, not the published
    # one) and names the branch it was pushed to, which the worker watches for a merge.
    Column("scheduled_at", "TEXT", 5),
    Column("review", "INTEGER NOT NULL DEFAULT 0", 5),
    Column("review_branch", "TEXT", 5),
)


def create_job_table(version: int | None = None, extra: str = "") -> str:
    """`CREATE TABLE blog_publication` with the columns of `version` (None: all of them)."""
    cols = [f"{c.name} {c.decl}" for c in JOB_COLUMNS if version is None or c.since <= version]
    body = ",\n        ".join(cols + ([extra] if extra else []))
    return f"CREATE TABLE blog_publication (\n        {body}\n    )"


def add_job_columns(version: int) -> list[str]:
    """The `ALTER TABLE … ADD COLUMN` of each column `version` added."""
    return [
        f"ALTER TABLE blog_publication ADD COLUMN {c.name} {c.decl}"
        for c in JOB_COLUMNS
        if c.since == version
    ]


JOB_INDEXES = """
    CREATE INDEX blog_publication_source ON blog_publication (source_sha256);
    CREATE INDEX blog_publication_state ON blog_publication (state, next_retry_at);
"""

HISTORY_TABLES = """
    CREATE TABLE blog_publication_event (
        job_id TEXT NOT NULL REFERENCES blog_publication (job_id),
        seq INTEGER NOT NULL,
        from_state TEXT,
        to_state TEXT,
        step TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '{}',
        at TEXT NOT NULL,
        PRIMARY KEY (job_id, seq)
    );
    CREATE TABLE blog_publication_outbox (
        event_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('blog_publish', 'external_sync')),
        job_id TEXT REFERENCES blog_publication (job_id),
        payload TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempt INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        CHECK ((kind = 'external_sync') = (job_id IS NULL))
    );
    CREATE INDEX blog_publication_outbox_due ON blog_publication_outbox (status, next_attempt_at);
    CREATE TABLE topic_publication_cursor (
        session_id TEXT PRIMARY KEY,
        close_revision INTEGER NOT NULL DEFAULT 0,
        is_open INTEGER NOT NULL DEFAULT 1
    );
"""
"""The event history, the outbox and the topic cursor: the same in both stores' SQL."""

STORE_META = "CREATE TABLE store_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
"""What a database says of itself: `created_at` (see gitpub.store.lost); on the shared
store also `schema_version`."""


def statements(script: str) -> list[str]:
    """A script's statements (none of ours holds a `;` inside a literal)."""
    return [s for s in script.split(";") if s.strip()]


# The shared store's schema, version by version. Version 1 is the embedded store's schema 5,
# plus what a disposable worker needs from the store rather than from its disk. `rowid`
# orders rows as SQLite's implicit one does.
PG_SCHEMA: tuple[str, ...] = (
    create_job_table(extra="rowid BIGSERIAL NOT NULL")
    + ";"
    + JOB_INDEXES
    + """
    CREATE INDEX blog_publication_state_updated ON blog_publication (state, updated_at, rowid);
    CREATE INDEX blog_publication_updated ON blog_publication (updated_at, rowid);
    CREATE INDEX blog_publication_scheduled ON blog_publication (state, scheduled_at);
    """
    + HISTORY_TABLES
    + STORE_META
    + """;
    CREATE SEQUENCE blog_lease_token;
    CREATE TABLE blog_job_file (
        job_id TEXT NOT NULL REFERENCES blog_publication (job_id),
        name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        data BYTEA NOT NULL,
        PRIMARY KEY (job_id, name)
    );
    CREATE TABLE blog_fleet_lock (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    CREATE TABLE blog_step_spool (
        job_id TEXT NOT NULL,
        name TEXT NOT NULL,
        owner TEXT NOT NULL,
        started_at TEXT NOT NULL,
        status TEXT,
        answer BYTEA,
        PRIMARY KEY (job_id, name)
    );
    """,
)

PG_SCHEMA_VERSION = len(PG_SCHEMA)
