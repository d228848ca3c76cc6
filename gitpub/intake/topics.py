"""The topic cursor: one job per close of a topic session, however often a close repeats."""

from __future__ import annotations

from collections.abc import Sequence

from gitpub.context import Context
from gitpub.core.errors import GitpubError, InputError
from gitpub.intake import by_key, create, same_request
from gitpub.scan.sanitize import sanitize
from gitpub.store import topics as cursor
from gitpub.store.db import Connection, Store
from gitpub.store.jobs import Job


def topic_close(
    ctx: Context, session: str, source: str, allow: Sequence[str] = ()
) -> tuple[Job, bool]:
    """Close a topic session: one job per close revision, however often the close repeats.

    The revision bump and the job insert are one transaction, so a crash can never leave a
    closed revision without its job (or a job without its revision)."""
    store = ctx.store
    session = sanitize(session)
    row = cursor.cursor(store, session)
    previous = row[0] if row else 0
    bump = row is None or row[1]
    revision = previous + 1 if bump else previous
    key = f"topic:{session}:{revision}"
    existing = by_key(store, key)
    if existing:
        # Closing a closed revision again with another text is refused like any reused key:
        # reopen the topic to publish again.
        allowed = ctx.config.scan.allow | frozenset(allow)
        return same_request(existing, key, source, None, allowed), False

    def bump_cursor(conn: Connection, job_id: str) -> None:
        if not bump:
            return
        if not cursor.close(conn, session, revision, previous):
            raise GitpubError(f"topic {session}: closed concurrently; close it again")

    return create(
        ctx,
        key=key,
        source=source,
        kind="topic",
        topic=session,
        allow=allow,
        conn_hook=bump_cursor,
    )


def topic_reopen(store: Store, session: str) -> None:
    """Reopen a closed session; a session never closed is a mistake (a typo, most often),
    not something to create silently."""
    session = sanitize(session)
    if not cursor.reopen(store, session):
        raise InputError(never_closed(session))


def never_closed(session: str) -> str:
    session = sanitize(session)
    return (
        f"topic {session}: no such session (never closed); `git blogpub topic close "
        f"{session} --source FILE` starts it"
    )
