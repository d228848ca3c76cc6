"""The SQLite job store: connection settings, schema and forward-only migrations.

No business logic lives here; `jobs` and `outbox` own the meaning of the rows.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gitpub.core import clock
from gitpub.core.errors import GitpubError
from gitpub.core.ids import sha256_hex
from gitpub.store import unavailable


def _hash_keys(conn: sqlite3.Connection) -> None:
    """Version 3: idempotency keys become the SHA-256 of the raw key.

    Versions 1 and 2 stored keys sanitized, so two secret-looking keys could collide. Those rows'
    raw keys are unknown: each keeps its sanitized key for display, hashed as its key, and is
    marked legacy — a lookup of a raw key whose sanitized form differs from it falls back to
    legacy rows by display, so a client resubmitting an old key still finds its job.

    store_meta.created_at says when this database began: jobs older than it that it does not
    know betray a lost database (see gitpub.ops.rebuild)."""
    conn.execute("ALTER TABLE blog_publication ADD COLUMN key_display TEXT NOT NULL DEFAULT ''")
    conn.execute("ALTER TABLE blog_publication ADD COLUMN key_legacy INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE TABLE store_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    rows = conn.execute("SELECT job_id, idempotency_key, created_at FROM blog_publication")
    earliest = ""
    for job_id, key, created_at in rows.fetchall():
        conn.execute(
            "UPDATE blog_publication SET idempotency_key = ?, key_display = ?, key_legacy = 1"
            " WHERE job_id = ?",
            (sha256_hex(key.encode("utf-8")), key, job_id),
        )
        earliest = min(earliest or created_at, created_at)
    conn.execute("INSERT INTO store_meta (name, value) VALUES ('created_at', ?)", (earliest,))


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
"""The event history, the outbox and the topic cursor: the same in both stores' SQL (the
shared store's schema, `gitpub.store.pg`, is made of them too)."""


_MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    # version 1
    """
    CREATE TABLE blog_publication (
        job_id TEXT PRIMARY KEY,
        idempotency_key TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('article', 'topic')),
        state TEXT NOT NULL,
        failure_code TEXT,
        source_sha256 TEXT NOT NULL,
        source_path TEXT NOT NULL,
        topic TEXT,
        base_commit TEXT,
        target_path TEXT,
        target_blob_sha256 TEXT,
        artifact_dir TEXT,
        artifact_sha256 TEXT,
        local_commit TEXT,
        remote_commit TEXT,
        attempt INTEGER NOT NULL DEFAULT 0,
        max_attempts INTEGER NOT NULL,
        next_retry_at TEXT,
        last_recheck_head TEXT,
        last_recheck_delta_sha TEXT,
        lease_owner TEXT,
        lease_token TEXT,
        lease_expires_at TEXT,
        requested_target TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX blog_publication_source ON blog_publication (source_sha256);
    CREATE INDEX blog_publication_state ON blog_publication (state, next_retry_at);
    """
    + HISTORY_TABLES,
    # version 2: `status` reads the newest finished jobs per state and jobs changed since a
    # moment through these, so its time does not grow with years of finished jobs. Additive
    # and idempotent: it only adds indexes.
    """
    CREATE INDEX IF NOT EXISTS blog_publication_state_updated
        ON blog_publication (state, updated_at);
    CREATE INDEX IF NOT EXISTS blog_publication_updated ON blog_publication (updated_at);
    """,
    # version 3
    _hash_keys,
    # version 4: a PUBLISHED job whose content left the published branch (a takedown, a
    # force-push) is marked withdrawn, never published again by itself.
    "ALTER TABLE blog_publication ADD COLUMN withdrawn_at TEXT",
    # version 5: publishing workflows. `submit --at` records when a SCHEDULED job becomes
    # due; review mode marks the job (its commit goes to a review branch, not the published
    # one) and names the branch it was pushed to, which the worker watches for a merge.
    """
    ALTER TABLE blog_publication ADD COLUMN scheduled_at TEXT;
    ALTER TABLE blog_publication ADD COLUMN review INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE blog_publication ADD COLUMN review_branch TEXT;
    CREATE INDEX IF NOT EXISTS blog_publication_scheduled
        ON blog_publication (state, scheduled_at);
    """,
)

SCHEMA_VERSION = len(_MIGRATIONS)


def now() -> str:
    """UTC timestamp text that sorts lexicographically in time order (gitpub's clock)."""
    return at(clock.time())


def at(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> float:
    """Seconds since the epoch of a timestamp as `now` and `at` write it."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def _identity(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


class Store:
    """What every job store offers the rooms above it: a connection for reads, one
    transaction per unit of work, fencing lease tokens, and the job folders kept.

    `SqliteStore` (the embedded default, `state.sqlite3` beside the job folders) and
    `gitpub.store.pg.PgStore` (a shared PostgreSQL store for fleets of workers) implement it;
    the queries of `gitpub.store` are written once, in the SQL both speak. `path` anchors the
    node's job folders (`path.parent / "jobs"`) whichever store holds the rows."""

    path: Path
    conn: Any
    shared = False
    """True when other nodes share the rows: the job folders here are a cache of the store."""
    skip_locked = ""
    """Appended to a claim's SELECT: where rows lock one by one, skip those being claimed."""
    clone: str | None = None
    """On a shared store, this clone's id: hand edits (external_sync rows) are a checkout's
    own, registered and delivered by the clone they were made in, invisible to the others."""

    def transaction(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def job_dir(self, job_id: str) -> Path:
        """The job's folder on this node (`Context.job_dir` for those holding a context)."""
        return self.path.parent / "jobs" / job_id

    def lease_token(self, conn: Any) -> str:
        """A fresh token for a claim, inside the claim's transaction."""
        import uuid  # here: `submit` and `status` never claim

        return uuid.uuid4().hex

    def keep_folder(self, conn: Any, job_id: str) -> None:
        """Inside a transaction that changes the job: make what its folder holds as durable as
        the change (the folder itself is the record on the embedded store)."""

    def fetch_folder(self, job_id: str) -> None:
        """Before a worker drives a job: its folder as the store last recorded it."""

    def replaced(self) -> bool:
        return False

    def fleet(self, name: str) -> contextlib.AbstractContextManager[None]:
        """Lock `name` among every node of the store (only the shared store has others)."""
        return contextlib.nullcontext()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SqliteStore(Store):
    """One connection to `state.sqlite3`. Open one per process or thread; never share."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unavailable.classify(exc, path) or exc from None
        try:
            # isolation_level=None: transactions are explicit, one per unit of work.
            self.conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA busy_timeout=30000")
            self._migrate()
            self._identity = _identity(path)
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            # A full disk or a failing filesystem is named as such, never as an unusable
            # (then "lost") database: the file is intact and must stay where it is.
            raise unavailable.classify(exc, path) or GitpubError(
                f"{path}: unusable job database: {exc}"
            ) from None

    def replaced(self) -> bool:
        """Whether the file this connection reads is no longer the one at its path (deleted
        with its state dir, or put back by someone): a long-running worker would otherwise
        keep working on an unlinked database no new submit ever reaches."""
        try:
            return _identity(self.path) != self._identity
        except OSError:
            return True

    def _close_quietly(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()

    def _migrate(self) -> None:
        with self.transaction():
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise GitpubError(
                    f"{self.path}: job database schema {version} is newer than this gitpub "
                    f"({SCHEMA_VERSION}); upgrade gitpub"
                )
            for target in range(version, SCHEMA_VERSION):
                step = _MIGRATIONS[target]
                if callable(step):
                    step(self.conn)
                else:
                    for statement in step.split(";"):
                        if statement.strip():
                            self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {target + 1}")
            if version == 0:
                # A new database: it knows every job from now on.
                self.conn.execute(
                    "UPDATE store_meta SET value = ? WHERE name = 'created_at'", (now(),)
                )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT: a writer's unit of work, rolled back on any error."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()
