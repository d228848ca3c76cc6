"""`git blogpub gc`: remove the worktrees, branches and old job refs of finished jobs.

Finished: PUBLISHED or SKIPPED. Everything of a job in REVIEW, CONFLICT, FAILED or still in
flight stays (see gitpub/ops/cleanup.py)."""

from __future__ import annotations

from pathlib import Path

from gitpub.cli.commands.output import say
from gitpub.context import open_context
from gitpub.ops import cleanup as gc


def main(path: Path) -> None:
    with open_context(path, need_remote=False) as ctx:
        plan, said = gc.collect(ctx)
        for line in said:
            say(line)
        if plan.empty():
            say("gc: nothing to remove")
        if plan.kept:
            states = sorted({s.value for s in plan.kept.values()})
            say(
                f"gc: kept the worktrees, branches and refs of {len(plan.kept)} unfinished "
                f"job(s) ({', '.join(states)})"
            )
