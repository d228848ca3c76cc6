"""A job's own worktree and branch (`blogpub/job/<job_id>`): where prepare writes the job's
files when they need a checkout, where a conflict waits for a person, and what is removed
once the job is delivered."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gitpub.context import Context
from gitpub.git import worktrees
from gitpub.store.jobs import Job


def needs_checkout(ctx: Context, base: str) -> bool:
    """Whether prepare writes a job's files into a checkout of base: for an external gate
    (it may build the whole site, contrib/site_build_gate.py) or a font gate that cannot read
    the commit (a source font linked elsewhere into the tree). Otherwise they are written
    where they are sealed, and the font gate reads the commit (`gitpub.fonts.treegate`: a
    checkout would write the blog's ~20 MB CJK font and every article for each job)."""
    steps = ctx.config.steps
    if steps.review or any(isinstance(s, tuple) and s for s in (steps.scan, steps.validate)):
        return True
    if ctx.config.fonts is None:
        return False
    from gitpub.fonts import treegate  # font blogs only: the font package is not light

    return not treegate.possible(ctx.config, ctx.repo, base)


def branch_name(job_id: str) -> str:
    return f"blogpub/job/{job_id}"


def ensure_worktree(ctx: Context, job: Job, start: str) -> Path:
    """The job's worktree on its branch, made (or remade) at `start` unless a whole one is
    there; under the repo lock."""
    path = ctx.worktree_dir(job.job_id)
    branch = branch_name(job.job_id)
    with ctx.locks.hold("repo"):
        if ctx.repo.resolve(f"refs/heads/{branch}") is not None and worktrees.ready(ctx.repo, path):
            return path
        worktrees.add(ctx.repo, path, start, branch)
    return path


def discard_worktree(ctx: Context, job_id: str) -> None:
    discard_worktrees(ctx, [job_id])


def discard_worktrees(ctx: Context, job_ids: Sequence[str]) -> None:
    """The jobs' worktrees and job branches gone (a delivered batch's, in one ref update)."""
    with ctx.locks.hold("repo"):
        worktrees.remove_many(ctx.repo, [(ctx.worktree_dir(j), branch_name(j)) for j in job_ids])
