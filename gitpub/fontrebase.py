"""Rebasing a job branch onto the remote, with font-only conflicts resolved by regeneration.

Placeholder: a plain rebase; any conflict is reported. The font engine replaces it."""

from __future__ import annotations

from pathlib import Path

from gitpub.context import Context
from gitpub.errors import GitCommandError
from gitpub.gitrepo import run_git
from gitpub.jobs import Job


def rebase_job(
    ctx: Context, job: Job, worktree: Path, upstream: str
) -> tuple[Job, list[str] | None]:
    """Rebase the job branch checked out in `worktree` onto `upstream`.

    Returns the (possibly updated) job and None on success, or the conflicting paths after
    aborting the rebase."""
    proc = run_git(
        ["rebase", "--quiet", "--no-verify", upstream],
        worktree,
        check=False,
        env={"GIT_EDITOR": "true"},
    )
    if proc.returncode == 0:
        return job, None
    unmerged = run_git(["diff", "--name-only", "--diff-filter=U"], worktree, check=False)
    paths = sorted(set(unmerged.stdout.decode("utf-8", "replace").split()))
    run_git(["rebase", "--abort"], worktree, check=False)
    if not paths:
        raise GitCommandError(
            ["git", "rebase", upstream], proc.returncode, proc.stderr.decode("utf-8", "replace")
        )
    return job, paths
