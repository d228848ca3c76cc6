"""What a store raises, whichever database it talks to.

Each store wraps its driver's failures in these (as procrastinate's connectors wrap theirs),
so no room above `gitpub.store` knows SQLite or PostgreSQL: intake tells a lost race from
other failures by `Duplicate`, the command line prints any `StoreError` as its one line and
exits 1. The message names the store (the database file, or the shared store's host and
database, never its URL) and says what to do about that store; `detail` keeps the driver's
own first line, already masked, for the rooms that quote it."""

from __future__ import annotations

from gitpub.core.errors import GitpubError


class StoreError(GitpubError):
    """The store refused or failed an operation; nothing of it was committed."""

    def __init__(self, message: str, detail: str = "") -> None:
        # One line whatever the driver said: libpq's hints come on lines of their own.
        super().__init__(" ".join(message.split()))
        self.detail = " ".join(detail.split())


class Duplicate(StoreError):
    """A row with this unique key (a job's idempotency key, an event's id) already exists."""


class Unavailable(StoreError):
    """The store cannot be used now for a reason outside its content: unreachable, the
    connection dropped, locked by another process, the disk full or failing. Never "lost":
    the same command succeeds once the machine or the server is back."""


class Damaged(StoreError):
    """The embedded database's own content is unusable (corrupt, not a database)."""
