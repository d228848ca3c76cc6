"""What the web page (`gitpub.ui`) and the metrics read: pages of jobs under filters, counts,
the fleet's leases and lock, and the events the figures are made of.

Every query here is bounded by an index or by a page: a list is one LIMIT/OFFSET range of
the updated_at index (or of the state index under a state filter), a count reads an index
only, and a job's history is one range of the event table's primary key. The web page
refreshes itself every few seconds; a refresh must cost the store almost nothing."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import NamedTuple

from gitpub.core.ids import sha256_hex
from gitpub.core.states import State
from gitpub.store.db import Store
from gitpub.store.jobs import Job


class Filters(NamedTuple):
    """What a person narrowed the list to; every field is optional (empty: no filter)."""

    states: tuple[State, ...] = ()
    key: str = ""  # the idempotency key as submitted (matched by its hash) or its display
    node: str = ""  # the host holding the job's lease (`host:pid`), by prefix
    target: str = ""  # an article path, or the folder it starts with
    since: str = ""  # changed at or after this stamp (the store's own time text)
    text: str = ""  # anywhere in id, key, target, topic or failure code
    withdrawn: bool = False  # only publications taken off the remote branch


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _where(filters: Filters) -> tuple[str, list[object]]:
    clauses: list[str] = []
    args: list[object] = []
    if filters.states:
        clauses.append(f"state IN ({','.join('?' * len(filters.states))})")
        args += [s.value for s in filters.states]
    if filters.key:
        clauses.append("(idempotency_key = ? OR key_display = ?)")
        args += [sha256_hex(filters.key.encode("utf-8")), filters.key]
    if filters.node:
        clauses.append("lease_owner LIKE ? ESCAPE '\\'")
        args.append(_like(filters.node) + "%")
    if filters.target:
        clauses.append("(target_path = ? OR target_path LIKE ? ESCAPE '\\')")
        args += [filters.target, _like(filters.target.rstrip("/")) + "/%"]
    if filters.since:
        clauses.append("updated_at >= ?")
        args.append(filters.since)
    if filters.text:
        needle = "%" + _like(filters.text) + "%"
        fields = ("job_id", "key_display", "target_path", "topic", "failure_code")
        clauses.append("(" + " OR ".join(f"{f} LIKE ? ESCAPE '\\'" for f in fields) + ")")
        args += [needle] * len(fields)
    if filters.withdrawn:
        clauses.append("withdrawn_at IS NOT NULL")
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", args


def page(store: Store, filters: Filters, limit: int, offset: int = 0) -> list[Job]:
    """The jobs that match, the most recently changed first: one page of them."""
    where, args = _where(filters)
    # rowid breaks ties in the order of both updated_at indexes, so the page needs no sort.
    sql = (
        f"SELECT * FROM blog_publication {where} ORDER BY updated_at DESC, rowid DESC"
        f" LIMIT {int(limit)} OFFSET {int(offset)}"
    )
    return [Job.from_row(r) for r in store.conn.execute(sql, args)]


def count(store: Store, filters: Filters) -> int:
    where, args = _where(filters)
    row = store.conn.execute(f"SELECT COUNT(*) FROM blog_publication {where}", args).fetchone()
    return int(row[0]) if row is not None else 0


def by_state(store: Store) -> dict[State, int]:
    """How many jobs are in each state (read from the state index alone)."""
    rows = store.conn.execute("SELECT state, COUNT(*) FROM blog_publication GROUP BY state")
    return {State(state): int(n) for state, n in rows}


def withdrawn_count(store: Store) -> int:
    row = store.conn.execute(
        "SELECT COUNT(*) FROM blog_publication WHERE state = 'PUBLISHED'"
        " AND withdrawn_at IS NOT NULL"
    ).fetchone()
    return int(row[0]) if row is not None else 0


class Lease(NamedTuple):
    job_id: str
    state: State
    owner: str
    expires_at: str
    target_path: str | None


def live_leases(store: Store, stamp: str) -> list[Lease]:
    """Every job whose lease still runs at `stamp`: what the workers are doing right now."""
    rows = store.conn.execute(
        "SELECT job_id, state, lease_owner, lease_expires_at, target_path FROM blog_publication"
        " WHERE lease_token IS NOT NULL AND lease_expires_at >= ? ORDER BY lease_owner, job_id",
        (stamp,),
    )
    return [Lease(r[0], State(r[1]), r[2] or "", r[3], r[4]) for r in rows]


def fleet_lock(store: Store, name: str, stamp: str) -> tuple[str, str] | None:
    """(holder, until) of a fleet-wide lock of the shared store while it is held; None when
    it is free (or the store has no fleet: the embedded store's locks are files)."""
    if not store.shared:
        return None
    row = store.conn.execute(
        "SELECT holder, expires_at FROM blog_fleet_lock WHERE name = ? AND expires_at >= ?",
        (name, stamp),
    ).fetchone()
    if row is None or not row[0]:
        return None
    return str(row[0]).partition(" ")[0], str(row[1])  # "host:pid", without its token


def oldest_due(store: Store, active: Collection[State], stamp: str) -> str | None:
    """Since when the job that has waited longest for a worker has been due (the jobs of
    `gitpub.store.reads.due`): an active job since its last change, a scheduled one since
    its time, a retry since its retry time; a job under a live lease is not waiting."""
    marks = ",".join("?" * len(active))
    free = " AND (lease_token IS NULL OR lease_expires_at < ?)"
    row = store.conn.execute(
        "SELECT MIN(since) FROM ("
        f" SELECT MIN(updated_at) AS since FROM blog_publication WHERE state IN ({marks}){free}"
        " UNION ALL SELECT MIN(scheduled_at) FROM blog_publication"
        f"  WHERE state = 'SCHEDULED' AND scheduled_at <= ?{free}"
        " UNION ALL SELECT MIN(next_retry_at) FROM blog_publication"
        f"  WHERE state = 'RETRY_WAIT' AND next_retry_at <= ?{free}"
        ") AS due",
        (*[s.value for s in active], stamp, stamp, stamp, stamp, stamp),
    ).fetchone()
    return str(row[0]) if row and row[0] is not None else None


# ------------------------------------------------------------------ what the figures read


class Event(NamedTuple):
    job_id: str
    seq: int
    step: str
    to_state: str | None
    at: str


def changed_jobs(store: Store) -> dict[str, str]:
    """Every job's id and last change: what a long-lived reader compares with what it saw."""
    rows = store.conn.execute("SELECT job_id, updated_at FROM blog_publication")
    return {str(r[0]): str(r[1]) for r in rows}


def changed_since(store: Store, stamp: str) -> dict[str, str]:
    """The id and last change of every job changed at or after `stamp` (an index range)."""
    rows = store.conn.execute(
        "SELECT job_id, updated_at FROM blog_publication WHERE updated_at >= ?", (stamp,)
    )
    return {str(r[0]): str(r[1]) for r in rows}


def every_event(store: Store) -> Iterator[Event]:
    """Every event of the store, in order of job, then seq (the primary key's order)."""
    rows = store.conn.execute(
        "SELECT job_id, seq, step, to_state, at FROM blog_publication_event ORDER BY job_id, seq"
    )
    yield from map(Event._make, rows)


def events_of(store: Store, job_ids: Sequence[str]) -> Iterator[Event]:
    """The events of these jobs (in order of job, then seq), read in bounded batches."""
    for start in range(0, len(job_ids), 500):
        batch = job_ids[start : start + 500]
        rows = store.conn.execute(
            "SELECT job_id, seq, step, to_state, at FROM blog_publication_event"
            f" WHERE job_id IN ({','.join('?' * len(batch))}) ORDER BY job_id, seq",
            batch,
        )
        yield from map(Event._make, rows)
