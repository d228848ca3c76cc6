"""Outbox rows: the durable record of what still has to reach the remote.

`blog_publish` rows belong to a job and are written in the same transaction that makes the
job LOCAL_COMMITTED; `external_sync` rows (job_id NULL) carry changes no job owns and get a
deterministic id, so re-registering the same change is a no-op."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple

from gitpub.core import clock
from gitpub.scan.sanitize import sanitize
from gitpub.store.db import Connection, Row, Store, at, now, parts

NAMESPACE = "5b0c1e9e-3f7a-5d8c-9a61-0e7f6b2d4c11"
"""The uuid5 namespace of external_sync event ids (text: `status` does not import uuid)."""


def canonical_payload(payload: Mapping[str, object]) -> str:
    return sanitize(json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def enqueue_publish(conn: Connection, job_id: str) -> None:
    enqueue_publish_all(conn, [job_id])


def enqueue_publish_all(conn: Connection, job_ids: Sequence[str]) -> None:
    """A pending `blog_publish` row for each job (kept where one exists), in one statement
    per hundred jobs: a committed round's."""
    stamp = now()
    for part in parts(job_ids, 100):
        rows_marks = ", ".join(["(?, 'blog_publish', ?, ?, 'pending', ?, ?)"] * len(part))
        values: list[object] = []
        for job_id in part:
            payload = canonical_payload({"job_id": job_id})
            values += [f"publish:{job_id}", job_id, payload, stamp, stamp]
        conn.execute(
            "INSERT OR IGNORE INTO blog_publication_outbox"
            " (event_id, kind, job_id, payload, status, next_attempt_at, created_at)"
            f" VALUES {rows_marks}",
            values,
        )


PublishStatus = Literal[
    "pending", "delivered", "skipped", "conflict", "review", "retried", "abandoned"
]
"""A job's `blog_publish` row: pending until its job is delivered or ends otherwise."""

ExternalStatus = Literal["pending", "delivered", "superseded", "conflict"]
"""An `external_sync` row (a hand edit): see the constants below."""


def settle_publish(conn: Connection, job_id: str, status: PublishStatus) -> None:
    """Mark the job's publish row with its final status (delivered, skipped, conflict, ...)."""
    settle_publish_all(conn, {job_id: status})


def settle_publish_all(conn: Connection, settled: Mapping[str, PublishStatus]) -> None:
    """`settle_publish` for many jobs: one statement per status (a batch's are mostly one)."""
    by_status: dict[PublishStatus, list[str]] = {}
    for job_id, status in settled.items():
        by_status.setdefault(status, []).append(f"publish:{job_id}")
    for status, events in by_status.items():
        for part in parts(events):
            marks = ", ".join("?" * len(part))
            conn.execute(
                f"UPDATE blog_publication_outbox SET status = ? WHERE event_id IN ({marks})",
                (status, *part),
            )


# ------------------------------------------------------------------ external_sync rows

PENDING: Final = "pending"
DELIVERED: Final = "delivered"  # confirmed on the remote branch
SUPERSEDED: Final = "superseded"  # the change it named is gone or was folded into a later event
CONFLICT: Final = "conflict"  # rebasing it onto the remote conflicts: a person has to merge

EXTERNAL_STATUSES: tuple[ExternalStatus, ...] = (PENDING, DELIVERED, SUPERSEDED, CONFLICT)


class ExternalEvent(NamedTuple):
    # A NamedTuple, not a frozen dataclass: `status` reads these and should not pay ~1 ms
    # to create the class (nor import `dataclasses`).
    event_id: str
    payload: dict[str, Any]
    status: ExternalStatus
    attempt: int
    next_attempt_at: str

    @classmethod
    def from_row(cls, row: Row) -> ExternalEvent:
        return cls(
            event_id=row["event_id"],
            payload=json.loads(row["payload"]),
            status=row["status"],
            attempt=row["attempt"],
            next_attempt_at=row["next_attempt_at"],
        )


def register_external(store: Store, payload: Mapping[str, object]) -> tuple[str, bool]:
    """Register an external_sync event (INSERT OR IGNORE on its uuid5 id).

    Returns the id and whether the row is newly pending. A superseded row comes back to
    pending: the change it named is there again (say, a branch switched away and back)."""
    import uuid  # here: `status` reads these rows but never registers one

    if store.clone is not None:
        payload = {**payload, "clone": store.clone}
    body = canonical_payload(payload)
    event_id = str(uuid.uuid5(uuid.UUID(NAMESPACE), body))
    stamp = now()
    with store.transaction() as conn:
        inserted = conn.execute(
            "INSERT OR IGNORE INTO blog_publication_outbox"
            " (event_id, kind, job_id, payload, status, next_attempt_at, created_at)"
            " VALUES (?, 'external_sync', NULL, ?, 'pending', ?, ?)",
            (event_id, body, stamp, stamp),
        ).rowcount
        revived = conn.execute(
            "UPDATE blog_publication_outbox SET status = 'pending', next_attempt_at = ?"
            " WHERE event_id = ? AND status = 'superseded'",
            (stamp, event_id),
        ).rowcount
    return event_id, bool(inserted or revived)


def external_events(store: Store, status: ExternalStatus | None = PENDING) -> list[ExternalEvent]:
    """This clone's external_sync rows (with `status`, or all when None), oldest first."""
    sql = "SELECT * FROM blog_publication_outbox WHERE kind = 'external_sync'"
    args: tuple[str, ...] = ()
    if status is not None:
        sql += " AND status = ?"
        args = (status,)
    if store.clone is not None:
        sql += " AND payload LIKE ?"
        args = (*args, f'%"clone":"{store.clone}"%')
    rows = store.conn.execute(sql + " ORDER BY created_at, event_id", args)
    return [ExternalEvent.from_row(r) for r in rows]


def due_external(store: Store) -> list[ExternalEvent]:
    stamp = now()
    return [e for e in external_events(store) if e.next_attempt_at <= stamp]


def settle_external(store: Store, event_id: str, status: ExternalStatus) -> None:
    """Give a pending external_sync row its final status (a conflict can still turn out
    delivered, once a person merged it)."""
    assert status in EXTERNAL_STATUSES and status != PENDING, status
    with store.transaction() as conn:
        conn.execute(
            "UPDATE blog_publication_outbox SET status = ? WHERE event_id = ?"
            " AND kind = 'external_sync' AND status IN ('pending', 'conflict')",
            (status, event_id),
        )


def defer_external(store: Store, event_id: str, delay: float) -> None:
    """Count a failed delivery attempt and make the row due again after `delay` seconds."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE blog_publication_outbox SET attempt = attempt + 1, next_attempt_at = ?"
            " WHERE event_id = ? AND kind = 'external_sync' AND status = 'pending'",
            (at(clock.time() + delay), event_id),
        )
