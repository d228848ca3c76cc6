"""external_sync: changes in the blog that belong to no job. Placeholder until it lands."""

from __future__ import annotations

from gitpub.context import Context


def register_hints(ctx: Context) -> int:
    """Turn durable hints written by the hooks into outbox events; returns how many."""
    return 0


def scan(ctx: Context) -> int:
    """Reconcile: find unsynced content changes (status, unpushed commits) and register them."""
    return 0


def sweep(ctx: Context) -> int:
    """Deliver due external_sync events; returns how many were delivered."""
    return 0
