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
from gitpub.store.db import at, now, parse_time
from gitpub.store.jobs import Job, LeaseLost, Move


def once_on_remote(ctx: Context, local: Oid, tip: Oid) -> list[Oid]:
    """The commits of the local branch, not on the remote now, that the remote once held."""
    were = once_held(ctx, tip)
    if not were:
        return []
    mine = set(git_out(["rev-list", local, "--not", tip], ctx.repo.root).split())
    return sorted(Oid(o) for o in mine & were)


class _Noticed:
    """What this process's last takedown look saw (a Context memo)."""

    tip: Oid | None = None  # the remote tip it examined
    since: str | None = None  # the store's time it began, less LATE
    held: frozenset[str] = frozenset()  # the jobs it found still published at `tip`


LATE = 60.0
"""Seconds a publication may be recorded before a look began and committed after it (a
recovery's, another node's): such a job is looked at again on the next look."""


def notice(ctx: Context) -> list[Job]:
    """Mark withdrawn each PUBLISHED job whose article left the remote branch — by a deletion
    commit, a rename or a force-push alike; the jobs marked now. An article a person edited
    is still published. Cheap when the tip did not move (only jobs published since the last
    look); when it moved forward, only the paths its commits deleted are looked at, and the
    jobs published since.

    The tip at hand may be older than a publication the store holds (another node's, on a
    shared store, pushed after this clone's last fetch): what looks gone there is looked at
    again on a tip fetched after the jobs were read as PUBLISHED, and only what is gone from
    that one too is marked."""
    tip = ctx.repo.resolve(ctx.tracking_ref)
    if tip is None:
        return []
    seen = memo(ctx.memos, _Noticed)
    began = now()
    deleted = set() if tip == seen.tip else _deleted_since(ctx, seen.tip, tip)
    looked = _to_look_at(ctx, seen, deleted)
    gone = _gone(ctx, looked, tip)
    lost = {j.job_id for j in gone}
    still = {j.job_id for j in looked} - lost
    if gone:
        now_tip = _fetched_tip(ctx)
        if now_tip is None:
            return []  # the remote is out of reach: looked at again on a later pass
        gone = _gone(ctx, gone, now_tip)
    marked = [m for m in (_mark(ctx, job, tip) for job in gone) if m is not None]
    # The next look starts from the tip examined whole, not the one refetched. What it found
    # published there stays so while the branch only moves forward without deleting it.
    kept = seen.held - lost if deleted is not None else frozenset()
    seen.tip, seen.held, seen.since = tip, kept | still, at(parse_time(began) - LATE)
    return marked


def _to_look_at(ctx: Context, seen: _Noticed, deleted: set[str] | None) -> list[Job]:
    """The publications whose article the branch may have lost since the last look (`seen`):
    every one at a first look or after a rewritten history (`deleted` None); else those at a
    path the new commits deleted, and those recorded since the last look (a delivery that
    found its push had landed, a recovery) that it did not find published."""
    since = seen.since
    if deleted is None or since is None:
        return reads.published_not_withdrawn(ctx.store)
    # One statement: every publication when a path went (a few are at it), else the recent.
    if deleted:
        candidates = reads.published_not_withdrawn(ctx.store)
    else:
        candidates = reads.published_since(ctx.store, since)
    return [
        j
        for j in candidates
        if j.target_path in deleted or (j.updated_at >= since and j.job_id not in seen.held)
    ]


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
