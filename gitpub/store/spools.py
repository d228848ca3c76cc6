"""Step runs in the shared store: which external step of a job is running since when, and the
answer its wrapper landed when it ended.

On the embedded store a running step's spool folder is the record a restarted worker adopts
from. A disposable worker's disk may be gone with it, so on the shared store the step's own
wrapper lands the (sanitized) answer here when the command ends, whether or not the worker
that started it still lives, and the next worker — on any node — adopts it."""

from __future__ import annotations

from typing import NamedTuple

from gitpub.scan.sanitize import sanitize
from gitpub.store.db import Store, now
from gitpub.store.jobs import LeaseLost


class Run(NamedTuple):
    owner: str
    started_at: str
    landed: bytes | None  # the wrapper's record once the command ended, else None


def get(store: Store, job_id: str, name: str) -> Run | None:
    row = store.conn.execute(
        "SELECT owner, started_at, answer FROM blog_step_spool WHERE job_id = ? AND name = ?",
        (job_id, name),
    ).fetchone()
    if row is None:
        return None
    return Run(row[0], row[1], bytes(row[2]) if row[2] is not None else None)


def begin(store: Store, job_id: str, name: str, owner: str, token: str | None) -> str:
    """A run of the step starts now (replacing any earlier one's record); when, which names
    the run to its lander. Written only while `token` is still the job's lease: a worker that
    lost the job, however short the moment since its last checkpoint, starts nothing (raises
    LeaseLost), and the job's new holder finds this record and waits for that run's answer
    instead of paying for the step twice.

    The job's row is locked before the record is written, not merely read: a worker stopped
    between writing the record and committing it (a stall, a swapped-out process) holds the
    job, so no other worker takes it over meanwhile and, finding no record yet, begins a
    second run that would replace this one once it commits."""
    started = now()
    with store.transaction() as conn:
        held = conn.execute(
            "UPDATE blog_publication SET updated_at = updated_at"
            " WHERE job_id = ? AND lease_token = ?",
            (job_id, token),
        ).rowcount
        if held == 1:
            conn.execute(
                "INSERT INTO blog_step_spool (job_id, name, owner, started_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (job_id, name) DO UPDATE SET owner = excluded.owner,"
                " started_at = excluded.started_at, status = NULL, answer = NULL",
                (job_id, name, sanitize(owner), started),
            )
    if held != 1:
        raise LeaseLost(f"job {job_id}: lease taken by another worker before its {name} step")
    return started


def land(store: Store, job_id: str, name: str, started: str, status: str, record: bytes) -> None:
    """The command ended: its record (already sanitized by the caller) is the answer of the
    run that began at `started`, if that run is still the step's (a worker that took the
    answer from the command itself may have cleared it, or begun the step anew)."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE blog_step_spool SET status = ?, answer = ?"
            " WHERE job_id = ? AND name = ? AND started_at = ?",
            (status, record, job_id, name, started),
        )


def clear(store: Store, job_id: str, name: str | None = None) -> None:
    """Recorded (or refused): nothing left to adopt. Without `name`, every step's run (an
    operator's retry runs them again)."""
    if not store.shared:
        return  # the embedded store keeps runs in spool folders only
    with store.transaction() as conn:
        if name is None:
            conn.execute("DELETE FROM blog_step_spool WHERE job_id = ?", (job_id,))
        else:
            conn.execute(
                "DELETE FROM blog_step_spool WHERE job_id = ? AND name = ?", (job_id, name)
            )
