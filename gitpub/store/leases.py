"""Leases on jobs: one worker at a time drives a job, and a dead one does not block it.

Claim is one atomic UPDATE; the holder renews at checkpoints; a worker whose lease was taken
finds out at its next checkpoint (LeaseLost) and stops without side effects. Losing a claim
race is normal concurrency: the caller moves on."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence

from gitpub.scan.sanitize import sanitize
from gitpub.store.db import Connection, Store, at, now, parse_time
from gitpub.store.jobs import WAKES, Job, LeaseLost, get, note


def lease_holder_dead(owner: str | None) -> bool:
    """True when the lease owner ("host:pid") is a process of this host that no longer runs.

    A crashed worker cannot release its lease; waiting out the whole lease after a restart
    would stall recovery for nothing. Only a provably dead local owner is overridden: a pid
    that was reused merely makes us wait for the expiry, the safe direction."""
    if not owner or ":" not in owner:
        return False
    host, _, pid_text = owner.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _note_takeover(conn: Connection, job_id: str, owner: str | None, dead: bool) -> None:
    """A claim that took a lease someone still held is a takeover after a crash (or a worker
    that stalled past its lease): the history says whose, why, and where the job resumes."""
    row = conn.execute("SELECT state FROM blog_publication WHERE job_id = ?", (job_id,)).fetchone()
    last = conn.execute(
        "SELECT step FROM blog_publication_event WHERE job_id = ? ORDER BY seq DESC LIMIT 1",
        (job_id,),
    ).fetchone()
    note(
        conn,
        job_id,
        "lease:takeover",
        {
            "previous_owner": owner or "unknown",
            "why": "its process is gone" if dead else "its lease expired",
            "state": row["state"] if row else None,
            "resumes_after": last["step"] if last else None,
        },
    )


def claim(store: Store, job_id: str, owner: str, seconds: float) -> Job | None:
    """Take the job's lease; None when someone else holds it (or is taking it right now).

    Losing this race is normal concurrency, not an error: the caller moves on."""
    held = claim_many(store, [job_id], owner, seconds)
    return held[0] if held else None


def claim_many(store: Store, job_ids: Sequence[str], owner: str, seconds: float) -> list[Job]:
    """Take the leases of these jobs in one transaction; returns the ones this call now holds,
    each with its folder as the store recorded it.

    Each row is held for the claim (`Store.lease_of`: on the shared store, a row another
    worker is claiming this instant is skipped, not waited for). The token comes from the
    store (on the shared store, a sequence: a later claim always holds a larger token) and
    every write of the job checks it, so a worker whose lease was taken changes nothing."""
    if not job_ids:
        return []
    stamp = now()
    expires = at(parse_time(stamp) + seconds)
    mine: list[Job] = []
    with store.transaction() as conn:
        for job_id in job_ids:
            row = store.lease_of(conn, job_id)
            if row is None:
                continue  # gone, or being claimed by someone else right now
            dead = row["lease_token"] is not None and lease_holder_dead(row["lease_owner"])
            free = row["lease_token"] is None or row["lease_expires_at"] < stamp
            if not (free or dead):
                continue
            fresh = store.changed_row(
                conn,
                "UPDATE blog_publication SET lease_owner = ?, lease_token = ?, lease_expires_at = ?"
                " WHERE job_id = ?",
                (sanitize(owner), store.lease_token(conn), expires, job_id),
                job_id,
            )
            if fresh is None:
                continue
            mine.append(Job.from_row(fresh))
            if row["lease_token"] is not None:
                _note_takeover(conn, job_id, row["lease_owner"], dead)
    store.fetch_folders([j.job_id for j in mine])
    return mine


def claim_due(
    store: Store, due: tuple[str, Sequence[object]], owner: str, seconds: float, limit: int
) -> list[Job]:
    """Take the leases of up to `limit` jobs that the WHERE clause `due` (with its
    parameters) picks and nobody holds, oldest first, in one transaction (on the shared
    store, one statement: `Store.claim_rows`); each with its folder as the store recorded
    it. A job whose lease ran out is taken over, and its history says from whom."""
    stamp = now()
    where = f"{due[0]} AND (lease_token IS NULL OR lease_expires_at < ?)"
    lease = (sanitize(owner), at(parse_time(stamp) + seconds))
    with store.transaction() as conn:
        claimed = store.claim_rows(conn, where, [*due[1], stamp], lease, limit)
        for row, previous, token in claimed:
            if token is not None:
                _note_takeover(conn, row["job_id"], previous, dead=False)
    mine = [Job.from_row(c.row) for c in claimed]
    store.fetch_folders([j.job_id for j in mine])
    return mine


def release_many(store: Store, held: Sequence[Job]) -> None:
    """Give up these leases, in one statement (a lease another worker took meanwhile is
    its own: a token names one claim of one job)."""
    if not held:
        return
    marks = ", ".join("?" * len(held))
    with store.transaction() as conn:
        conn.execute(
            "UPDATE blog_publication SET lease_owner = NULL, lease_token = NULL,"
            f" lease_expires_at = NULL WHERE job_id IN ({marks}) AND lease_token IN ({marks})",
            [*(j.job_id for j in held), *(j.lease_token for j in held)],
        )
        if any(j.state in WAKES for j in held):
            store.announce(conn)  # free to take now: a waiting worker need not wait its interval


def renew(store: Store, job: Job, seconds: float) -> Job:
    """Extend the lease; LeaseLost when it was taken meanwhile."""
    kept = renew_many(store, [job], seconds)
    if not kept:
        raise LeaseLost(f"job {job.job_id}: lease taken by another worker")
    return kept[0]


def checkpoint(store: Store, job: Job, seconds: float) -> Job:
    """A worker's checkpoint: LeaseLost when the lease was taken, renewed once half of it is
    spent. A lease is taken only once it has run out, and only its holder writes a leased
    job's row, so while the job in hand (the store's answer to the holder's last claim,
    renewal or write) shows more than half of it left, the check needs no statement: a
    prepare passes a dozen checkpoints, each a round trip on the shared store. Past that,
    one read, and one write when the lease still holds."""
    if job.lease_token is not None and _left(job) > seconds / 2:
        return job
    fresh = get(store, job.job_id)
    if fresh is None or fresh.lease_token != job.lease_token:
        raise LeaseLost(f"job {job.job_id}: lease taken by another worker")
    if _left(fresh) > seconds / 2:
        return fresh
    return renew(store, fresh, seconds)


def _left(job: Job) -> float:
    """Seconds of the job's lease left, as its record says (0 without one)."""
    if not job.lease_expires_at:
        return 0.0
    return parse_time(job.lease_expires_at) - parse_time(now())


def renew_many(store: Store, held: Sequence[Job], seconds: float) -> list[Job]:
    """`renew` for many jobs in one statement; returns those whose lease still held, as they
    now are (a job whose lease was taken meanwhile is left out, and its new holder drives
    it). A token names one claim of one job, so matching the tokens matches the leases."""
    if not held:
        return []
    ids, tokens = [j.job_id for j in held], [j.lease_token for j in held]
    marks = ", ".join("?" * len(held))
    with store.transaction() as conn:
        rows = store.changed_rows(
            conn,
            "UPDATE blog_publication SET lease_expires_at = ?"
            f" WHERE job_id IN ({marks}) AND lease_token IN ({marks})",
            [at(parse_time(now()) + seconds), *ids, *tokens],
            ids,
        )
    fresh = {r["job_id"]: Job.from_row(r) for r in rows}
    return [
        fresh[j.job_id]
        for j in held
        if j.job_id in fresh and fresh[j.job_id].lease_token == j.lease_token
    ]


def release(store: Store, job: Job) -> None:
    release_many(store, [job])
