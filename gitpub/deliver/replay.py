"""The job commit at delivery time: found whole (or made again), and replayed onto the
remote tip — in memory, or in the job worktree when font subsets must be rebuilt."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pygit2

from gitpub.context import Context
from gitpub.core.ids import Oid
from gitpub.deliver import fontmerge
from gitpub.deliver.commit import ArtifactsDamaged, load_manifest, make_commit, point_job_refs
from gitpub.git import objects, repair, trailers, worktrees
from gitpub.git.rebase import abort as abort_rebase
from gitpub.prepare.jobtree import branch_name, ensure_worktree
from gitpub.store import jobs
from gitpub.store.jobs import Job


def paths(ctx: Context, job: Job) -> list[str]:
    """The files the job commit writes (its manifest's), for checking its objects are there."""
    try:
        return [e.path for e in load_manifest(ctx, job)]
    except ArtifactsDamaged:
        return [job.target_path] if job.target_path else []


def job_commit(ctx: Context, job: Job) -> Oid:
    """The job's commit, whole — whatever a crash or a person's `git gc --prune=now` left."""
    return job_commits(ctx, [job])[job.job_id]


def job_commits(ctx: Context, held: Sequence[Job]) -> dict[str, Oid]:
    """`job_commit` for many jobs: their objects checked with one question to git."""
    repo = ctx.repo
    found = {j.job_id: trailers.find_local(repo, j.job_id, j.artifact_sha256) for j in held}
    closures = {
        j.job_id: objects.closure(repo, oid, paths(ctx, j))
        for j in held
        if (oid := found[j.job_id]) is not None
    }
    gone = set(objects.missing(repo, [o for c in closures.values() for o in c]))
    broken = [i for i, c in closures.items() if gone.intersection(c)]
    if broken:
        with ctx.locks.hold("repo"):
            repair.repair(repo)
        found.update(dict.fromkeys(broken))
    out: dict[str, Oid] = {}
    for job in held:
        oid = found[job.job_id]
        if oid is None:
            # The commit is gone (a person deleted the branch and the job ref, or gc pruned
            # its objects): the verified artifacts make the very same commit again.
            oid = make_commit(ctx, job)
            jobs.record(ctx.store, job, "commit:remade", {"commit": oid})
        out[job.job_id] = oid
    return out


def rebase(ctx: Context, job: Job, head: Oid, tip: Oid) -> tuple[Job, Oid | None, list[str] | None]:
    """The job commit replayed onto tip: in memory, or — when the subsets must be rebuilt
    from the merged articles, or a partial clone lacks a blob the merge must read — in the
    job worktree with git's own rebase. A commit already on `tip` is its own replay, fonts
    or not: the subsets it carries were built from `tip`'s articles and the job's."""
    if objects.based_on(ctx.repo, head, tip):
        return job, head, None
    if ctx.config.fonts is None:
        try:
            new, conflicted = objects.cherry_pick(ctx.config, ctx.repo, head, tip)
        except (KeyError, pygit2.GitError):
            pass  # a blob this clone does not have: git fetches it on demand
        else:
            if conflicted:
                return job, None, conflicted
            return job, new, None
    worktree = _worktree_at(ctx, job, head)
    # Onto `tip`, the stack so far: a batch's jobs go out as one line of commits.
    job, conflict = fontmerge.rebase_job(ctx, job, worktree, tip)
    if conflict is not None:
        return job, None, conflict
    return job, ctx.repo.resolve(f"refs/heads/{branch_name(job.job_id)}"), None


def worktree_for_person(ctx: Context, job: Job) -> None:
    """A conflict is a person's to resolve: the job worktree, on the job commit, is where
    they do it (`resolve --continue` reads the job branch)."""
    head = trailers.find_local(ctx.repo, job.job_id, job.artifact_sha256)
    if head is None:
        return
    head = _on_its_base(ctx, job, head)
    with ctx.locks.hold("repo"):
        point_job_refs(ctx, job.job_id, head, "conflict")
    path = ensure_worktree(ctx, job, head)
    worktrees.reset(path, head)


def _on_its_base(ctx: Context, job: Job, head: Oid) -> Oid:
    """The job commit standing on the job's own base: a commit made on the one before it in
    its round (`commit._write_commits`) is replayed there, so the person sees the remote as
    the job found it plus the job's files, not another job's article too."""
    base = job.base_commit
    if base is None or ctx.config.fonts is not None or objects.based_on(ctx.repo, head, base):
        return head
    try:
        mine, conflicted = objects.cherry_pick(ctx.config, ctx.repo, head, base)
    except (KeyError, pygit2.GitError):
        return head  # a blob this clone lacks: the person's rebase still works from here
    return mine if mine is not None and not conflicted else head


def _worktree_at(ctx: Context, job: Job, head: Oid) -> Path:
    """The job worktree, clean, on the job commit — whatever a crash left behind."""
    with ctx.locks.hold("repo"):
        point_job_refs(ctx, job.job_id, head, "worktree")
    path = ensure_worktree(ctx, job, head)
    abort_rebase(path)  # a rebase a crash interrupted
    worktrees.reset(path, head)
    return path
