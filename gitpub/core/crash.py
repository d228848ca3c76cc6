"""Named crash points for fault-injection tests: GITPUB_CRASH_AT=<name> ends the process there."""

from __future__ import annotations

import os

POINTS = (
    "after_received",
    "after_draft",
    "after_gates",
    "during_font_regeneration",
    "before_local_commit",
    "after_commit_object_before_ref",
    "after_local_commit_before_db",
    "after_local_committed",
    "during_worktree_add",
    "during_batch_stacking",
    "after_batch_refs_before_db",
    "after_rebase_before_push",
    "after_push_before_db",
    "after_batch_confirmed_before_db",
    "after_published_before_cleanup",
    "during_external_sync_push",
    "after_schedule_due",
    "after_review_push_before_db",
    "after_review_merged_before_db",
)


def point(name: str) -> None:
    """Die like a SIGKILL (no cleanup, no atexit, no flush) when asked to at `name`."""
    assert name in POINTS, name
    if os.environ.get("GITPUB_CRASH_AT") == name:
        os._exit(137)
