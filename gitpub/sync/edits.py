"""external_sync: changes in the blog that belong to no job (typo fixes, admin edits, notes
written straight into the content folder) reach the remote without a judge and without a job.

What has to be delivered is always read from git itself: the live checkout's uncommitted
content changes and the published branch's unpushed commits. Hints from the hooks and the
periodic scan only register that state as outbox events, with ids derived from it
(uuid5 of the canonical payload, INSERT OR IGNORE), so losing every hint loses nothing and
finding the same state twice registers it once."""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gitpub.context import Context
from gitpub.core import clock
from gitpub.core.errors import GitCommandError, GitpubError
from gitpub.core.ids import Oid
from gitpub.deliver import withdrawn
from gitpub.deliver.relay import backoff
from gitpub.git.process import git_out
from gitpub.store import outbox
from gitpub.store.db import now
from gitpub.store.outbox import ExternalEvent
from gitpub.sync import editgit, held, hooks

SCAN_PERIOD = 300.0
"""Seconds between two reconcile scans of a running worker (hints make it sooner)."""
SCAN_STAMP = "external-scan"
"""File in the state dir whose mtime is the time of the last scan."""


# ------------------------------------------------------------------ registration


def register_hints(ctx: Context, *, at_once: bool = False) -> int:
    """Turn the hooks' hints into outbox events; returns how many events are new.

    A hint only says "look now": the scan reads the actual state. The claimed hint files are
    deleted after the scan, so a crash in between leaves them for the next pass. With no hint,
    the periodic scan still runs once SCAN_PERIOD has passed, and `at_once` (a person asking
    with `sweep`) scans at once."""
    hooks.write_branch_file(ctx.state_dir, ctx.config.publish.branch)
    claimed = _claim_hints(ctx.state_dir)
    if not claimed and not at_once and not _scan_due(ctx.state_dir):
        return 0
    found = scan(ctx)
    for path in claimed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return found


def scan(ctx: Context) -> int:
    """Reconcile: register the live checkout's uncommitted content changes and the published
    branch's unpushed content commits; returns how many events are new."""
    hooks.write_branch_file(ctx.state_dir, ctx.config.publish.branch)
    (ctx.state_dir / SCAN_STAMP).touch()
    new = 0
    for payload in (_worktree_payload(ctx), _commits_payload(ctx)):
        if payload is not None:
            new += outbox.register_external(ctx.store, payload)[1]
    return new


def _worktree_payload(ctx: Context) -> dict[str, object] | None:
    # Only with hand_edits = "all" is a person's uncommitted work committed for them.
    if ctx.config.sync.hand_edits != "all" or not editgit.observable(ctx):
        return None
    changes, secret = editgit.deliverable_changes(ctx)
    held.record(ctx.state_dir, secret)
    if not changes:
        return None
    return {
        "type": "worktree",
        "branch": ctx.config.publish.branch,
        # The commit the edit sits on: the same edit made again later is a new event.
        "head": ctx.repo.resolve("HEAD"),
        "changes": [list(c) for c in changes],
    }


def _commits_payload(ctx: Context) -> dict[str, object] | None:
    if ctx.config.sync.hand_edits == "off":
        return None
    local = ctx.repo.resolve(editgit.local_ref(ctx))
    tip = ctx.repo.resolve(ctx.tracking_ref)
    if local is None or tip is None or not editgit.unpushed_content(ctx, local, tip):
        return None
    taken = withdrawn.once_on_remote(ctx, local, tip)  # [] at once without a takedown
    if taken:
        unpushed = set(git_out(["rev-list", local, "--not", tip], ctx.repo.root).split())
        if unpushed <= set(taken):
            return None  # nothing new: what the remote once held and let go (a takedown)
    return {"type": "commits", "branch": ctx.config.publish.branch, "head": local}


def _claim_hints(state_dir: Path) -> list[Path]:
    # A hook appending right now either lands in the renamed file (read below) or starts a new
    # one (the next pass); either way its change happened before our scan reads git.
    with contextlib.suppress(FileNotFoundError):
        os.rename(state_dir / hooks.HINTS_FILE, state_dir / f"hints.{uuid.uuid4().hex}.claimed")
    return sorted(state_dir.glob("hints.*.claimed"))


def _scan_due(state_dir: Path) -> bool:
    try:
        last = (state_dir / SCAN_STAMP).stat().st_mtime
    except FileNotFoundError:
        return True
    return clock.time() - last >= SCAN_PERIOD


# ------------------------------------------------------------------ delivery


@dataclass
class Report:
    delivered: int = 0
    superseded: int = 0
    deferred: int = 0
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    branch: str = ""
    pushed: list[str] = field(default_factory=list)  # one line per push that landed


def sweep(ctx: Context) -> int:
    """Deliver due external_sync events; returns how many were delivered."""
    return deliver(ctx).delivered


def deliver(ctx: Context) -> Report:
    """One delivery pass: commit the live checkout's content changes, fetch, settle what the
    remote already holds, push the rest (rebased when the remote moved), confirm after a fetch.

    Network and commit under the delivery lock; the live-checkout commit and branch move under
    the checkout lock inside it. Failed attempts wait with backoff in the outbox, not in a sleep."""
    report = Report()
    rebased = None
    if ctx.config.sync.hand_edits == "off":
        return report
    # An open conflict is looked at too: the person may have merged and pushed it by hand,
    # or dropped it, and then no new event would ever come to settle it.
    if outbox.due_external(ctx.store) or outbox.external_events(ctx.store, outbox.CONFLICT):
        with ctx.locks.hold("delivery"):
            rebased = _deliver_locked(ctx, report)
    report.branch = editgit.catch_up(ctx, rebased)
    return report


def _deliver_locked(ctx: Context, report: Report) -> tuple[Oid, Oid] | None:
    """Returns (local tip, its pushed copy) when a push went through."""
    tips = _commit_and_fetch(ctx, report)
    if tips is None:
        return None
    local, tip = tips
    waiting = _sort_events(ctx, report, local, tip)
    _settle_merged_conflicts(ctx, tip, local)
    if not waiting:
        return None
    assert local is not None  # an event waits only on commits of the local branch
    taken = withdrawn.once_on_remote(ctx, local, tip)
    if taken:
        # A person's commits on top of a takedown would push the taken-down commits again:
        # a person decides (rebase them off it, or reset the branch to the remote's).
        for event in waiting:
            outbox.settle_external(ctx.store, event.event_id, outbox.CONFLICT)
        report.conflicts.extend(f"{o[:12]} (taken off the remote branch)" for o in taken)
        return None
    return _push_waiting(ctx, report, local, waiting)


def _commit_and_fetch(ctx: Context, report: Report) -> tuple[Oid | None, Oid] | None:
    """The live checkout's changes committed, the remote fetched: (local tip, remote tip),
    or None when either could not be done (the events wait, with the reason)."""
    repo, pub = ctx.repo, ctx.config.publish
    try:
        with ctx.locks.hold("checkout"):
            _commit_worktree(ctx)
    except GitpubError as exc:
        _defer(ctx, outbox.due_external(ctx.store), report, f"commit failed: {exc.message}")
        return None
    try:
        repo.fetch(pub.remote, pub.branch)
    except GitCommandError as exc:
        _defer(ctx, outbox.due_external(ctx.store), report, f"fetch failed: {exc.stderr[-300:]}")
        return None
    local, tip = repo.resolve(editgit.local_ref(ctx)), repo.resolve(ctx.tracking_ref)
    if tip is None:
        _defer(ctx, outbox.due_external(ctx.store), report, f"no remote branch {pub.branch!r}")
        return None
    return local, tip


def _sort_events(ctx: Context, report: Report, local: Oid | None, tip: Oid) -> list[ExternalEvent]:
    """Settle the events the remote already answers (delivered, superseded); the ones that
    need a push, in order. The rest wait for their next attempt."""
    watching = editgit.observable(ctx)
    waiting: list[ExternalEvent] = []
    later: list[ExternalEvent] = []
    for event in outbox.external_events(ctx.store):
        verdict = _verdict(ctx, event, local, tip, watching)
        if verdict == outbox.DELIVERED:
            outbox.settle_external(ctx.store, event.event_id, verdict)
            report.delivered += 1
        elif verdict == outbox.SUPERSEDED:
            outbox.settle_external(ctx.store, event.event_id, verdict)
            report.superseded += 1
        elif verdict == "push":
            waiting.append(event)
        else:
            later.append(event)
    _defer(ctx, [e for e in later if e.next_attempt_at <= now()], report, "")
    return waiting


def _push_waiting(
    ctx: Context, report: Report, local: Oid, waiting: list[ExternalEvent]
) -> tuple[Oid, Oid] | None:
    """Push the local branch (rebased onto the remote) and confirm each waiting event."""
    repo, pub = ctx.repo, ctx.config.publish
    try:
        pushed = editgit.push_branch(ctx, local)
    except GitpubError as exc:  # a failed git command, a font that cannot be built
        _defer(ctx, waiting, report, exc.message)
        return None
    if pushed.kind == "conflict":
        for event in waiting:
            outbox.settle_external(ctx.store, event.event_id, outbox.CONFLICT)
        report.conflicts.extend(pushed.paths)
        return None
    if pushed.kind == "retry" or pushed.commit is None:
        _defer(ctx, waiting, report, pushed.reason)
        return None
    try:
        repo.fetch(pub.remote, pub.branch)
    except GitCommandError as exc:
        _defer(ctx, waiting, report, f"fetch after push failed: {exc.stderr[-300:]}")
        return None
    tip = repo.resolve(ctx.tracking_ref)
    # What was pushed is the local branch rebased: every waiting event's change is in it.
    # Confirmation still reads the remote-tracking branch after the fetch.
    landed = tip is not None and repo.is_ancestor(pushed.commit, tip)
    unconfirmed = []
    for event in waiting:
        commits = event.payload.get("type") == "commits"
        if tip is not None and landed and (commits or _on_remote(ctx, event, tip)):
            outbox.settle_external(ctx.store, event.event_id, outbox.DELIVERED)
            report.delivered += 1
        else:
            unconfirmed.append(event)
    _defer(ctx, unconfirmed, report, "pushed, but not found on the remote branch")
    if landed:
        count = len(waiting) - len(unconfirmed)
        report.pushed.append(
            f"hand edits pushed to {pub.branch}: {pushed.commit[:12]} ({count} change(s))"
        )
    if tip is not None:
        _settle_merged_conflicts(ctx, tip, repo.resolve(editgit.local_ref(ctx)))
    return (local, pushed.commit) if landed else None


def _settle_merged_conflicts(ctx: Context, tip: str, local: str | None) -> None:
    """A conflict a person has merged by hand since, then pushed or let a later event push
    (delivered), or has dropped from the branch (superseded): either way no longer open."""
    for event in outbox.external_events(ctx.store, outbox.CONFLICT):
        if _on_remote(ctx, event, tip):
            outbox.settle_external(ctx.store, event.event_id, outbox.DELIVERED)
        elif local is not None and not _on_local(ctx, event, local, tip):
            outbox.settle_external(ctx.store, event.event_id, outbox.SUPERSEDED)


def _on_local(ctx: Context, event: ExternalEvent, local: str, tip: str) -> bool:
    """The event's change is still on the local branch, waiting for a person's merge."""
    kind, head = event.payload.get("type"), str(event.payload.get("head") or "")
    if kind == "worktree":
        return editgit.find_sync_commit(ctx, local, event.event_id, tip) is not None
    if kind == "commits":
        return bool(ctx.repo.resolve(head)) and editgit.contains_patches(ctx, local, head)
    return True  # written by a newer gitpub: not ours to judge


def _commit_worktree(ctx: Context) -> None:
    """The checkout's current content changes become their event's one commit."""
    payload = _worktree_payload(ctx)
    if payload is not None:
        event_id, _ = outbox.register_external(ctx.store, payload)
        editgit.commit_changes(ctx, event_id)


Verdict = Literal["delivered", "superseded", "push", "wait"]
"""What the remote says of a hand edit's event: settled (as its outbox status), or not yet."""


def _verdict(
    ctx: Context, event: ExternalEvent, local: str | None, tip: str, watching: bool
) -> Verdict:
    """delivered (the remote holds it), push (the local branch holds it, the remote not yet),
    superseded (the change is gone, or lives on as a later event) or wait (cannot tell now)."""
    kind = event.payload.get("type")
    if _on_remote(ctx, event, tip):
        return outbox.DELIVERED
    if kind == "worktree":
        if local and editgit.find_sync_commit(ctx, local, event.event_id, tip):
            return "push"
        # Its uncommitted state was either just committed under its own id (found above) or
        # has changed since: the current state has its own event now.
        return outbox.SUPERSEDED if watching else "wait"
    if kind == "commits":
        head = str(event.payload.get("head") or "")
        if local and ctx.repo.resolve(head) and editgit.contains_patches(ctx, local, head):
            return "push"
        return outbox.SUPERSEDED  # the person dropped those commits from the branch
    return "wait"  # written by a newer gitpub: not ours to judge


def _on_remote(ctx: Context, event: ExternalEvent, tip: str) -> bool:
    """Confirmation: the sync commit's trailer (worktree events) or the commits' patches
    (hand commits, rebased to new hashes) are in the remote branch's history."""
    kind, head = event.payload.get("type"), str(event.payload.get("head") or "")
    if kind == "worktree":
        return editgit.find_sync_commit(ctx, tip, event.event_id, head or None) is not None
    if kind == "commits":
        return bool(ctx.repo.resolve(head)) and editgit.contains_patches(ctx, tip, head)
    return False


def undelivered(ctx: Context) -> dict[str, list[str]]:
    """The paths of every hand edit still waiting ("pending") or stuck ("conflict"), so a
    person can see which files have not reached the remote."""
    out: dict[str, list[str]] = {}
    tip = ctx.repo.resolve(ctx.tracking_ref)
    for status in (outbox.CONFLICT, outbox.PENDING):
        paths: set[str] = set()
        for event in outbox.external_events(ctx.store, status):
            if event.payload.get("type") == "worktree":
                paths.update(str(c[0]) for c in event.payload.get("changes", []))
            elif event.payload.get("type") == "commits" and tip is not None:
                paths.update(editgit.commit_paths(ctx, tip, str(event.payload.get("head") or "")))
        if paths:
            out[status] = sorted(paths)
    return out


def _defer(ctx: Context, events: list[ExternalEvent], report: Report, reason: str) -> None:
    retry = ctx.config.retry
    for event in events:
        outbox.defer_external(
            ctx.store, event.event_id, backoff(retry.base_delay, retry.max_delay, event.attempt + 1)
        )
        report.deferred += 1
    if events and reason:
        report.problems.append(reason)
