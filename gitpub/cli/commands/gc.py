"""`git blogpub gc`: remove the worktrees, branches and old job refs of finished jobs, and the
landmarks of published jobs a crash left on the remote (gitpub/deliver/landmark.py).

Finished: PUBLISHED or SKIPPED. Everything of a job in REVIEW, CONFLICT, FAILED or still in
flight stays (see gitpub/ops/cleanup.py)."""

from __future__ import annotations

from pathlib import Path

from gitpub.cli.commands.output import say
from gitpub.context import Context, open_context
from gitpub.core.errors import GitCommandError, git_cause
from gitpub.deliver import landmark
from gitpub.ops import cleanup as gc


def main(path: Path) -> None:
    with open_context(path, need_remote=False) as ctx:
        plan, said = gc.collect(ctx)
        for line in said:
            say(line)
        removed = _landmarks(ctx)
        if plan.empty() and not removed:
            say("gc: nothing to remove")
        if plan.kept:
            states = sorted({s.value for s in plan.kept.values()})
            say(
                f"gc: kept the worktrees, branches and refs of {len(plan.kept)} unfinished "
                f"job(s) ({', '.join(states)})"
            )


def _landmarks(ctx: Context) -> int:
    """Remove the landmarks of published jobs a crash left on the remote; how many went."""
    if not ctx.repo.has_remote(ctx.config.publish.remote):
        return 0
    try:
        marks = landmark.stale(ctx)
    except GitCommandError as exc:
        say(f"gc: could not list the landmarks on the remote: {git_cause(exc.stderr)}")
        return 0
    if marks and landmark.remove(ctx, marks):
        say(f"removed {len(marks)} landmark(s) of published jobs from the remote")
        return len(marks)
    return 0
