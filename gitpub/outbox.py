"""Outbox rows: the durable record of what still has to reach the remote.

`blog_publish` rows belong to a job and are written in the same transaction that makes the
job LOCAL_COMMITTED; `external_sync` rows (job_id NULL) carry changes no job owns and get a
deterministic id, so re-registering the same change is a no-op."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping
from typing import Any

from gitpub.sanitize import sanitize
from gitpub.store import Store, now

NAMESPACE = uuid.UUID("5b0c1e9e-3f7a-5d8c-9a61-0e7f6b2d4c11")


def canonical_payload(payload: Mapping[str, Any]) -> str:
    return sanitize(json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def enqueue_publish(conn: sqlite3.Connection, job_id: str) -> None:
    stamp = now()
    conn.execute(
        "INSERT OR IGNORE INTO blog_publication_outbox"
        " (event_id, kind, job_id, payload, status, next_attempt_at, created_at)"
        " VALUES (?, 'blog_publish', ?, ?, 'pending', ?, ?)",
        (f"publish:{job_id}", job_id, canonical_payload({"job_id": job_id}), stamp, stamp),
    )


def settle_publish(conn: sqlite3.Connection, job_id: str, status: str) -> None:
    """Mark the job's publish row with its final status (delivered, skipped, conflict, ...)."""
    conn.execute(
        "UPDATE blog_publication_outbox SET status = ? WHERE event_id = ?",
        (status, f"publish:{job_id}"),
    )


def enqueue_external(store: Store, payload: Mapping[str, Any]) -> str:
    """Register an external_sync event; the same payload always maps to the same event id."""
    body = canonical_payload(payload)
    event_id = str(uuid.uuid5(NAMESPACE, body))
    stamp = now()
    with store.transaction() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO blog_publication_outbox"
            " (event_id, kind, job_id, payload, status, next_attempt_at, created_at)"
            " VALUES (?, 'external_sync', NULL, ?, 'pending', ?, ?)",
            (event_id, body, stamp, stamp),
        )
    return event_id


def pending(store: Store, kind: str) -> list[sqlite3.Row]:
    return list(
        store.conn.execute(
            "SELECT * FROM blog_publication_outbox WHERE kind = ? AND status = 'pending'"
            " AND next_attempt_at <= ? ORDER BY created_at",
            (kind, now()),
        )
    )
