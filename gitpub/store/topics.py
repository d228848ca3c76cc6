"""The topic cursor: per session, its last closed revision and whether it is open again."""

from __future__ import annotations

from gitpub.scan.sanitize import sanitize
from gitpub.store.db import Connection, Store


def cursor(store: Store, session: str) -> tuple[int, bool] | None:
    """(last closed revision, open again) of a session; None when it never closed."""
    row = store.conn.execute(
        "SELECT close_revision, is_open FROM topic_publication_cursor WHERE session_id = ?",
        (session,),
    ).fetchone()
    return (int(row["close_revision"]), bool(row["is_open"])) if row else None


def close(conn: Connection, session: str, revision: int, previous: int) -> bool:
    """Move the cursor from `previous` to the closed `revision`; False when another close got
    there first."""
    moved = conn.execute(
        "INSERT INTO topic_publication_cursor (session_id, close_revision, is_open)"
        " VALUES (?, ?, 0) ON CONFLICT (session_id) DO UPDATE SET"
        " close_revision = excluded.close_revision, is_open = 0"
        " WHERE topic_publication_cursor.close_revision = ?",
        (sanitize(session), revision, previous),
    ).rowcount
    return bool(moved == 1)


def reopen(store: Store, session: str) -> bool:
    """Open a closed session again; False when it never closed."""
    with store.transaction() as conn:
        moved = conn.execute(
            "UPDATE topic_publication_cursor SET is_open = 1 WHERE session_id = ?",
            (sanitize(session),),
        ).rowcount
    return bool(moved == 1)


def restore(conn: Connection, session: str, revision: int) -> None:
    """A rebuilt database's cursor: the session closed at its highest job's revision."""
    conn.execute(
        "INSERT INTO topic_publication_cursor (session_id, close_revision, is_open)"
        " VALUES (?, ?, 0) ON CONFLICT (session_id) DO UPDATE SET"
        " close_revision = CASE"
        " WHEN excluded.close_revision > topic_publication_cursor.close_revision"
        " THEN excluded.close_revision ELSE topic_publication_cursor.close_revision END",
        (sanitize(session), revision),
    )
