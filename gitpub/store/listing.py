"""Which jobs `status` lists, read with indexed queries only.

A blog publishes for years: the store fills with finished jobs nobody needs to look at
again. What needs a person and what is in flight is listed in full; the finished ones are
counted by state and only the newest few listed — every query here touches the open jobs
and a bounded number of finished ones, never all of them (the counts come from the state
index alone)."""

from __future__ import annotations

from typing import NamedTuple

from gitpub.core.states import NEEDS_PERSON, TERMINAL, State
from gitpub.store.db import Store
from gitpub.store.jobs import Job

FINISHED = tuple(sorted(TERMINAL - NEEDS_PERSON))  # PUBLISHED, SKIPPED
OPEN = tuple(sorted(set(State) - set(FINISHED)))
RECENT = 10  # finished jobs listed unless every job is asked for


class Listing(NamedTuple):
    # A NamedTuple, as Job is: `status` should not pay for creating a dataclass.
    jobs: list[Job]  # oldest first
    finished: dict[str, int]  # every finished job, by state
    unlisted: int = 0  # finished jobs counted above but not listed


def _rows(store: Store, where: str, args: tuple[object, ...], limit: int | None) -> list[Job]:
    """The newest `limit` rows that match (all of them, unordered, without a limit: an
    ORDER BY there would let SQLite walk the whole updated_at index to skip a small sort)."""
    sql = f"SELECT * FROM blog_publication {where}"
    if limit is not None:
        # rowid breaks ties in index order: both status indexes end in it, so no sort.
        sql += f" ORDER BY updated_at DESC, rowid DESC LIMIT {int(limit)}"
    return [Job.from_row(r) for r in store.conn.execute(sql, args)]


def finished_counts(store: Store) -> dict[str, int]:
    marks = ",".join("?" * len(FINISHED))
    rows = store.conn.execute(
        f"SELECT state, COUNT(*) FROM blog_publication WHERE state IN ({marks}) GROUP BY state",
        tuple(s.value for s in FINISHED),
    )
    return {state: count for state, count in rows}


def select(
    store: Store,
    *,
    state: State | None = None,
    since: str | None = None,
    limit: int | None = None,
    everything: bool = False,
) -> Listing:
    """The jobs to show. With a state, a time or `everything`, exactly the jobs that match
    (the newest `limit` of them); otherwise every open job and the newest finished ones."""
    counts = finished_counts(store)
    if state is not None or since is not None or everything:
        clauses, args = [], []
        if state is not None:
            clauses.append("state = ?")
            args.append(state.value)
        if since is not None:
            clauses.append("updated_at >= ?")
            args.append(since)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        chosen = _rows(store, where, tuple(args), limit)
        return Listing(_oldest_first(chosen), counts)  # --all: every row, by design
    marks = ",".join("?" * len(OPEN))
    open_jobs = _rows(store, f"WHERE state IN ({marks})", tuple(s.value for s in OPEN), None)
    recent: list[Job] = []
    wanted = RECENT if limit is None else limit
    for finished in FINISHED:  # one bounded index range per state, merged here
        recent += _rows(store, "WHERE state = ?", (finished.value,), wanted)
    recent = _newest(recent)[:wanted]
    if limit is not None:
        # `--limit N`: the newest N of everything listed, open or finished, as with a filter.
        keep = {j.job_id for j in _newest(open_jobs + recent)[:limit]}
        open_jobs = [j for j in open_jobs if j.job_id in keep]
        recent = [j for j in recent if j.job_id in keep]
    chosen = _oldest_first(open_jobs) + _oldest_first(recent)
    listed = len(recent)
    return Listing(chosen, counts, sum(counts.values()) - listed)


def _newest(rows: list[Job]) -> list[Job]:
    return sorted(rows, key=lambda j: (j.updated_at, j.job_id), reverse=True)


def _oldest_first(rows: list[Job]) -> list[Job]:
    return sorted(rows, key=lambda j: (j.created_at, j.job_id))


def reason(store: Store, job_id: str) -> str:
    """Why a job waits or stopped: the newest event that says so (one index range)."""
    row = store.conn.execute(
        "SELECT json_extract(detail, '$.reason') FROM blog_publication_event"
        " WHERE job_id = ? AND json_extract(detail, '$.reason') IS NOT NULL"
        " ORDER BY seq DESC LIMIT 1",
        (job_id,),
    ).fetchone()
    return str(row[0]) if row and row[0] is not None else ""
