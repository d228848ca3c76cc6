"""Takedowns stay down. A publication whose article left the published branch (a deletion
commit, a rename, a person who reset the remote and force-pushed) is never pushed again by
gitpub: not as a job commit (a PUBLISHED job is final), and not as a hand edit (a commit the
remote once held is no person's new work). The job is marked withdrawn; only a person's
`retry` publishes it again.

What the remote once held is read from the remote-tracking ref's own history (its reflog:
every value a fetch gave it), so it needs nothing gitpub remembered; whether an article is
still published is read from the remote branch's tip."""

from __future__ import annotations

from gitpub.context import Context, memo
from gitpub.core.errors import GitCommandError
from gitpub.core.ids import Oid
from gitpub.deliver.batch import fetch_repairing
from gitpub.deliver.commit import ArtifactsDamaged, load_manifest
from gitpub.deliver.confirm import once_held
from gitpub.git.process import git_out
from gitpub.prepare import manifest
from gitpub.store import jobs, reads
from gitpub.store.db import now
from gitpub.store.jobs import Job, LeaseLost, Move


def once_on_remote(ctx: Context, local: Oid, tip: Oid) -> list[Oid]:
    """The commits of the local branch, not on the remote now, that the remote once held."""
    were = once_held(ctx, tip)
    if not were:
        return []
    mine = set(git_out(["rev-list", local, "--not", tip], ctx.repo.root).split())
    return sorted(Oid(o) for o in mine & were)


class _Noticed:
    """The remote tip this process last looked at for takedowns (a Context memo)."""

    tip: Oid | None = None


def notice(ctx: Context) -> list[Job]:
    """Mark withdrawn each PUBLISHED job whose article left the remote branch — by a deletion
    commit, a rename or a force-push alike; the jobs marked now. An article a person edited
    is still published. Cheap when the tip did not move; when it moved forward, only the
    paths its commits deleted are looked at.

    The tip at hand may be older than a publication the store holds (another node's, on a
    shared store, pushed after this clone's last fetch): what looks gone there is looked at
    again on a tip fetched after the jobs were read as PUBLISHED, and only what is gone from
    that one too is marked."""
    tip = ctx.repo.resolve(ctx.tracking_ref)
    seen = memo(ctx.memos, _Noticed)
    if tip is None or tip == seen.tip:
        return []
    deleted = _deleted_since(ctx, seen.tip, tip)
    looked = [
        job
        for job in reads.published_not_withdrawn(ctx.store)
        if deleted is None or job.target_path in deleted
    ]
    gone = _gone(ctx, looked, tip)
    if gone:
        now_tip = _fetched_tip(ctx)
        if now_tip is None:
            return []  # the remote is out of reach: looked at again on a later pass
        gone = _gone(ctx, gone, now_tip)
    marked = [m for m in (_mark(ctx, job, tip) for job in gone) if m is not None]
    seen.tip = tip  # the next look starts from the tip examined whole, not the one refetched
    return marked


def _gone(ctx: Context, looked: list[Job], tip: Oid) -> list[Job]:
    """The jobs whose article the branch at `tip` no longer publishes."""
    # Whose commit the branch still holds, in one walk (a first look sees every publication).
    held = ctx.repo.reachable(tip, {j.remote_commit for j in looked if j.remote_commit})
    return [job for job in looked if not _still_published(ctx, job, tip, held)]


def _fetched_tip(ctx: Context) -> Oid | None:
    """The remote branch's tip, fetched now; None when the fetch fails."""
    try:
        with ctx.locks.hold("delivery"):
            fetch_repairing(ctx)
    except GitCommandError:
        return None
    return ctx.repo.resolve(ctx.tracking_ref)


def withdrawal(job: Job, remote_commit: str | None, tip: Oid) -> Move:
    """The mark of a publication (`remote_commit`) that the branch at `tip` no longer holds:
    an event, and the time it was noticed."""
    detail = {"remote_commit": remote_commit, "tip": tip}
    return Move(job, None, "withdrawn", detail, {"withdrawn_at": now()})


def _mark(ctx: Context, job: Job, tip: Oid) -> Job | None:
    """The job marked withdrawn; None when it left PUBLISHED meanwhile (a person's retry).
    Not under the job's lease: the mark is what the remote shows, and the worker that
    published the job may be giving its lease up at this very moment."""
    unleased = job._replace(lease_token=None)
    try:
        marked = jobs.transition_all(ctx.store, [withdrawal(unleased, job.remote_commit, tip)])
    except LeaseLost:
        return None
    return marked[job.job_id]


def _still_published(ctx: Context, job: Job, tip: Oid, held: set[str]) -> bool:
    """The article is at the tip, and either the job's commit is still in the branch's
    history (`held`: a person may have edited the article since) or a rewritten history kept
    the job's own bytes. A force-push that put an older version back withdrew this one."""
    if job.target_path is None:
        return True
    data = ctx.repo.blob_at(tip, job.target_path)
    if data is None:
        return False
    if job.remote_commit is None or job.remote_commit in held:
        return True
    ctx.store.fetch_folder(job.job_id)  # its manifest, on any node
    try:
        own = {e.path: e.sha256 for e in load_manifest(ctx, job)}
    except ArtifactsDamaged:
        return True  # nothing to compare with: the article is there
    return own.get(job.target_path) == manifest.sha256_bytes(data)


def _deleted_since(ctx: Context, before: Oid | None, tip: Oid) -> set[str] | None:
    """The paths the commits from `before` to `tip` removed (a rename removes its old path),
    or None when every published article must be looked at (the first look of this process,
    or a history rewritten by a force-push)."""
    if before is None or ctx.repo.resolve(before) is None or not ctx.repo.is_ancestor(before, tip):
        return None
    out = git_out(
        ["diff", "--name-only", "--no-renames", "--diff-filter=D", "-z", before, tip],
        ctx.repo.root,
    )
    return {p for p in out.split("\0") if p}
