"""The questions other rooms ask of the job table, each answered by one query here: no room
outside `gitpub.store` writes SQL (tests/project/test_layers.py holds that), so a second store can
answer the same questions.

Reads that need a whole `Job` live in `gitpub.store.jobs` and `gitpub.store.listing`; these
answer with ids, paths and counts."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path

from gitpub.core.ids import Sha256
from gitpub.core.states import State
from gitpub.store.db import Connection, Row, SqliteConnection, Store, connect, parts
from gitpub.store.jobs import Job


def _marks(states: Collection[State]) -> tuple[str, list[str]]:
    return ",".join("?" * len(states)), [s.value for s in states]


def by_key(store: Store, key_sha256: Sha256, display: str | None) -> Job | None:
    """The job of an idempotency key's hash; `display` also finds a job from before keys were
    hashed, which kept only the sanitized key (None: the key has no other form)."""
    row = store.conn.execute(
        "SELECT * FROM blog_publication WHERE idempotency_key = ?", (key_sha256,)
    ).fetchone()
    if row is None and display is not None:
        row = store.conn.execute(
            "SELECT * FROM blog_publication WHERE key_legacy = 1 AND key_display = ?", (display,)
        ).fetchone()
    return Job.from_row(row) if row else None


def ids_in(store: Store, states: Collection[State]) -> tuple[str, ...]:
    marks, values = _marks(states)
    rows = store.conn.execute(
        f"SELECT job_id FROM blog_publication WHERE state IN ({marks}) ORDER BY created_at, job_id",
        values,
    )
    return tuple(r[0] for r in rows)


def due_clause(
    active: Collection[State],
    stamp: str,
    only: Collection[str] = (),
    skip: Collection[str] = (),
) -> tuple[str, list[object]]:
    """The WHERE clause (and its parameters) of the jobs with work to do at `stamp`, whatever
    their lease: active ones, scheduled ones whose time has come, retries whose time has come,
    and exhausted ones whose delivery probe is due; among `only` when given, never `skip`."""
    marks, values = _marks(active)
    where = (
        f"WHERE (state IN ({marks})"
        "  OR (state = 'SCHEDULED' AND scheduled_at <= ?)"
        "  OR (state = 'RETRY_WAIT' AND next_retry_at <= ?)"
        "  OR (state = 'FAILED' AND failure_code = 'delivery_exhausted' AND next_retry_at <= ?))"
    )
    params: list[object] = [*values, stamp, stamp, stamp]
    if only:
        where += f" AND job_id IN ({', '.join('?' * len(only))})"
        params += list(only)
    if skip:
        where += f" AND job_id NOT IN ({', '.join('?' * len(skip))})"
        params += list(skip)
    return where, params


def due(store: Store, active: Collection[State], stamp: str) -> list[str]:
    """Jobs with work to do at `stamp` and no live lease (`due_clause`)."""
    where, params = due_clause(active, stamp)
    rows = store.conn.execute(
        f"SELECT job_id FROM blog_publication {where}"
        " AND (lease_token IS NULL OR lease_expires_at < ?) ORDER BY created_at, job_id",
        (*params, stamp),
    )
    return [r[0] for r in rows]


def in_review(store: Store) -> list[Job]:
    """Jobs waiting for a person's merge of their review branch, oldest first."""
    rows = store.conn.execute(
        "SELECT * FROM blog_publication WHERE state = 'IN_REVIEW' ORDER BY created_at, job_id"
    )
    return [Job.from_row(r) for r in rows]


def leased(store: Store, active: Collection[State], stamp: str) -> list[tuple[str, str]]:
    """(job id, lease owner) of each job with work whose lease is still running at `stamp`:
    the active ones, and the waiting ones a worker claimed because they were due (`due`) —
    a scheduled job among them: a worker dies between the claim and its move to RECEIVED."""
    marks, values = _marks(active)
    rows = store.conn.execute(
        f"SELECT job_id, lease_owner FROM blog_publication WHERE lease_token IS NOT NULL"
        f" AND lease_expires_at >= ?"
        f" AND (state IN ({marks}) OR state IN ('SCHEDULED', 'RETRY_WAIT', 'FAILED'))"
        f" ORDER BY created_at, job_id",
        (stamp, *values),
    )
    return [(r[0], r[1]) for r in rows]


def sealed_before(
    store: Store, job: Job, states: Collection[State]
) -> Iterator[tuple[str, str, str | None]]:
    """(target path, artifact folder, artifact hash) of each job in `states` that was
    submitted before `job` and has sealed its artifacts, oldest first."""
    marks, values = _marks(states)
    rows = store.conn.execute(
        f"SELECT target_path, artifact_dir, artifact_sha256 FROM blog_publication"
        f" WHERE state IN ({marks}) AND artifact_dir IS NOT NULL AND target_path IS NOT NULL"
        f" AND job_id != ? AND (created_at < ? OR (created_at = ? AND job_id < ?))"
        f" ORDER BY created_at, job_id",
        (*values, job.job_id, job.created_at, job.created_at, job.job_id),
    )
    for row in rows:
        yield row[0], row[1], row[2]


def published_not_withdrawn(store: Store) -> list[Job]:
    rows = store.conn.execute(
        "SELECT * FROM blog_publication WHERE state = 'PUBLISHED' AND withdrawn_at IS NULL"
        " AND remote_commit IS NOT NULL ORDER BY created_at, job_id"
    )
    return [Job.from_row(r) for r in rows]


def published_since(store: Store, since: str) -> list[Job]:
    """The PUBLISHED jobs not withdrawn that were written at or after `since` (a timestamp as
    `now` writes it): the few a takedown look has not seen yet."""
    rows = store.conn.execute(
        "SELECT * FROM blog_publication WHERE state = 'PUBLISHED' AND updated_at >= ?"
        " AND withdrawn_at IS NULL AND remote_commit IS NOT NULL ORDER BY created_at, job_id",
        (since,),
    )
    return [Job.from_row(r) for r in rows]


def published_to(store: Store, path: str) -> list[Job]:
    """The PUBLISHED jobs whose article is `path`, withdrawn or not."""
    return published_to_each(store, [path]).get(path, [])


def published_to_each(store: Store, paths: Collection[str]) -> dict[str, list[Job]]:
    """`published_to` of each of these paths (those with none left out), one statement per
    500 paths."""
    found: dict[str, list[Job]] = {}
    for part in parts(sorted(set(paths))):
        marks = ", ".join("?" * len(part))
        rows = store.conn.execute(
            f"SELECT * FROM blog_publication WHERE state = 'PUBLISHED' AND target_path IN ({marks})"
            " AND remote_commit IS NOT NULL ORDER BY created_at, job_id",
            part,
        )
        for row in rows:
            found.setdefault(row["target_path"], []).append(Job.from_row(row))
    return found


def states_and_times(store: Store) -> dict[str, tuple[State, str]]:
    """Every job's state and last change."""
    rows = store.conn.execute("SELECT job_id, state, updated_at FROM blog_publication")
    return {r[0]: (State(r[1]), r[2]) for r in rows}


# What the doctor and a rebuild read from a database file they open themselves: they must
# not migrate it, and it may be damaged.


def open_raw(path: Path) -> SqliteConnection:
    """The embedded database file as it is: neither created when missing nor migrated."""
    return connect(path, create=False)


def health(conn: Connection) -> tuple[list[str], list[object], int]:
    """SQLite's integrity check, its broken foreign keys and the schema version."""
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    broken: list[object] = list(conn.execute("PRAGMA foreign_key_check").fetchall())
    version = conn.execute("PRAGMA user_version").fetchone()
    return rows, broken, int(version[0]) if version is not None else 0


def all_rows(conn: Connection) -> dict[str, Row]:
    return {r["job_id"]: r for r in conn.execute("SELECT * FROM blog_publication")}


def count(conn: Connection) -> int:
    row = conn.execute("SELECT COUNT(*) FROM blog_publication").fetchone()
    return int(row[0]) if row is not None else 0


def steps_newest_first(conn: Connection, job_id: str) -> list[tuple[str, str]]:
    """(step, detail) of a job's events, the newest first."""
    rows = conn.execute(
        "SELECT step, detail FROM blog_publication_event WHERE job_id = ? ORDER BY seq DESC",
        (job_id,),
    )
    return [(str(r[0]), r[1] or "") for r in rows]
