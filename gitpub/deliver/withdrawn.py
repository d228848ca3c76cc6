"""Takedowns stay down. A publication whose commit left the published branch (a person reset
the remote and force-pushed, a takedown) is never pushed again by gitpub: not as a job commit
(a PUBLISHED job is final), and not as a hand edit (a commit the remote once held is no
person's new work). The job is marked withdrawn; only a person's `retry` publishes it again.

What the remote once held is read from the remote-tracking ref's own history (its reflog:
every value a fetch gave it), so it needs nothing gitpub remembered."""

from __future__ import annotations

from gitpub.context import Context
from gitpub.core.ids import Oid
from gitpub.deliver.commit import ArtifactsDamaged, load_manifest
from gitpub.git.process import git_out
from gitpub.prepare import manifest
from gitpub.store import jobs, reads
from gitpub.store.db import now
from gitpub.store.jobs import Job

HISTORY = 200
"""Values of the remote-tracking ref looked at: a takedown is noticed within that many fetches."""


def left_remote(ctx: Context, tip: Oid) -> list[Oid]:
    """Earlier tips of the remote-tracking branch that are not in its history any more."""
    out = git_out(
        ["reflog", "show", f"-n{HISTORY}", "--format=%H", ctx.tracking_ref, "--"],
        ctx.repo.root,
        check=False,
    )
    seen = dict.fromkeys(line for line in out.split() if line)
    return [Oid(o) for o in seen if o != tip and not ctx.repo.is_ancestor(o, tip)]


def once_on_remote(ctx: Context, local: Oid, tip: Oid) -> list[Oid]:
    """The commits of the local branch, not on the remote now, that the remote once held."""
    gone = left_remote(ctx, tip)
    if not gone:
        return []
    mine = set(git_out(["rev-list", local, "--not", tip], ctx.repo.root).split())
    if not mine:
        return []
    were = set(git_out(["rev-list", *gone, "--not", tip], ctx.repo.root).split())
    return sorted(Oid(o) for o in mine & were)


def notice(ctx: Context) -> list[Job]:
    """Mark withdrawn each PUBLISHED job whose content left the remote branch; the jobs
    marked now. Cheap when nothing left the branch: one reflog read."""
    tip = ctx.repo.resolve(ctx.tracking_ref)
    if tip is None or not left_remote(ctx, tip):
        return []
    marked = []
    for job in reads.published_not_withdrawn(ctx.store):
        if job.remote_commit is None or ctx.repo.is_ancestor(job.remote_commit, tip):
            continue
        if _content_still_there(ctx, job, tip):
            continue  # the history was rewritten, the article kept: still published
        marked.append(
            jobs.record(
                ctx.store,
                job,
                "withdrawn",
                {"remote_commit": job.remote_commit, "tip": tip},
                withdrawn_at=now(),
            )
        )
    return marked


def _content_still_there(ctx: Context, job: Job, tip: Oid) -> bool:
    try:
        entries = load_manifest(ctx, job)
    except ArtifactsDamaged:
        return job.target_path is not None and ctx.repo.blob_at(tip, job.target_path) is not None
    for e in entries:
        data = ctx.repo.blob_at(tip, e.path)
        if data is None or manifest.sha256_bytes(data) != e.sha256:
            return False
    return True
