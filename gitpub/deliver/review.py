"""Review before publish: each job commit goes to its own branch on the remote, and a person
publishes it by merging that branch — in any way their forge offers.

- Delivery (`deliver_locked`) stacks the job commit on the published branch's tip exactly as a
  batch does (CAS, recheck, replay, the write-set guard), then pushes it to
  `<review_prefix><slug>` instead of the published branch: the job waits in IN_REVIEW. A new
  revision of the same article replaces its branch (the older job is superseded).
- Watching (`watch`) decides by content, after a fetch: a merge commit, a squash and a rebase
  all leave the manifest's bytes on the published branch, while only the first keeps the
  trailers. A job whose bytes arrived is PUBLISHED, with the first commit of the published
  branch that holds them as its remote commit; a job whose review branch is gone without that
  was rejected by its reviewer (REVIEW). A remote that cannot be reached decides nothing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import GitCommandError, git_cause
from gitpub.core.ids import Oid
from gitpub.core.states import State
from gitpub.deliver import batch, guard
from gitpub.deliver.batch import Result, Results
from gitpub.deliver.commit import ArtifactsDamaged, load_manifest
from gitpub.deliver.confirm import differing_paths
from gitpub.git.process import git_out
from gitpub.prepare import manifest
from gitpub.prepare.jobtree import discard_worktrees
from gitpub.store import jobs, leases, outbox, reads
from gitpub.store.db import Connection
from gitpub.store.jobs import Job, LeaseLost, Move

REJECTED = "rejected_in_review"
"""The failure code of a job whose review branch was deleted without a merge."""

HISTORY = 1000
"""Commits of the published branch (first parents, newest first) searched for a job's bytes."""


def branch_for(ctx: Context, job: Job) -> str:
    """`<review_prefix><slug>`: the slug is the article's file name without its suffix, kept
    to what every forge accepts in a branch name, so one article keeps one review branch."""
    stem = PurePosixPath(job.target_path or job.job_id).stem
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip(".-") or job.job_id[:8]
    slug = re.sub(r"\.{2,}", ".", slug).removesuffix(".lock")
    return ctx.config.publish.review_prefix + slug


def remote_branches(ctx: Context) -> dict[str, Oid]:
    """The review branches on the remote now (branch → commit); GitCommandError when the
    remote cannot be asked, which must never read as "deleted"."""
    pub = ctx.config.publish
    out = git_out(
        ["ls-remote", "--heads", pub.remote, f"refs/heads/{pub.review_prefix}*"], ctx.repo.root
    )
    found: dict[str, Oid] = {}
    for line in out.splitlines():
        oid, _, ref = line.partition("\t")
        if ref.startswith("refs/heads/"):
            found[ref.removeprefix("refs/heads/")] = Oid(oid)
    return found


# ------------------------------------------------------------------------------ delivery


def deliver_locked(ctx: Context, held: Sequence[Job], probes: frozenset[str]) -> Results:
    """Push each review job's commit, stacked alone on the published tip, to its review
    branch. Under the delivery lock; the caller records the outcomes ("in_review" carries
    the branch in `detail`)."""
    failed = batch.fetch_result(ctx, held)
    if failed:
        return {j.job_id: failed for j in held}
    try:
        there = remote_branches(ctx)
    except GitCommandError as exc:
        why = Result(
            "retry", f"ls-remote failed: {git_cause(exc.stderr)}", detail={"git": exc.stderr}
        )
        return {j.job_id: why for j in held}
    results: Results = {}
    tip = ctx.repo.resolve(ctx.tracking_ref)
    line = _first_parents(ctx, tip) if tip is not None else []
    for job in held:
        # Merged while its answer was lost (a crash after the push, then a person's merge):
        # pushing it again would only bring back a branch the person deleted.
        merged = _merged(ctx, job, line)
        if merged is not None:
            results[job.job_id] = Result("published", "merged from review", merged)
    heads = batch.job_commits(ctx, [j for j in held if j.job_id not in results], results)
    pub = ctx.config.publish
    for job in held:
        if job.job_id not in heads or job.job_id in results:
            continue
        if tip is None:
            results[job.job_id] = Result("retry", f"remote branch {pub.branch!r} does not exist")
            continue
        mine = leases.renew_many(ctx.store, [job], ctx.config.retry.lease_seconds)
        if not mine:
            continue  # taken by another worker: theirs to push
        checked = guard.Checked()
        stacked, head = batch.stack_jobs(ctx, mine, heads, tip, probes, results, checked)
        if not stacked:
            continue
        batch.record_stack(ctx, stacked, heads)
        branch = branch_for(ctx, job)
        # Replaced, not fast-forwarded, and only if it is still what we just saw: a branch
        # someone else moved meanwhile is looked at again on the next attempt.
        pushed = guard.push(
            ctx.repo, checked, pub.remote, tip, head, branch, expect=there.get(branch, "")
        )
        if not pushed.ok:
            results[job.job_id] = batch.push_failed(ctx, stacked, heads, pushed.stderr)
            continue
        crash.point("after_review_push_before_db")
        results[job.job_id] = Result(
            "in_review", f"pushed to {branch}", detail={"branch": branch, "commit": head}
        )
    return results


def in_review_moves(ctx: Context, job: Job, result: Result) -> list[Move]:
    """IN_REVIEW for the job pushed; SKIPPED for an older job whose review branch it took."""
    branch = str(result.detail["branch"])
    moves = [
        Move(
            job,
            State.IN_REVIEW,
            "review:pushed",
            {"branch": branch, "commit": result.detail["commit"]},
            {"review_branch": branch, "failure_code": None, "next_retry_at": None},
        )
    ]
    for older in reads.in_review(ctx.store):
        if older.review_branch == branch and older.job_id != job.job_id:
            moves.append(
                Move(
                    older,
                    State.SKIPPED,
                    "review:superseded",
                    {"by": job.job_id, "branch": branch},
                    {"failure_code": "superseded"},
                )
            )
    return moves


# ------------------------------------------------------------------------------ watching


def watch(ctx: Context) -> list[Job]:
    """Settle the IN_REVIEW jobs a person has decided: merged (by content) → PUBLISHED,
    branch deleted unmerged → REVIEW. The jobs settled now; nothing when the remote cannot be
    reached."""
    waiting = reads.in_review(ctx.store)
    if not waiting:
        return []
    try:
        with ctx.locks.hold("delivery"):
            batch.fetch_repairing(ctx)
            there = remote_branches(ctx)
    except GitCommandError:
        return []  # unreachable: a deleted branch and a dropped network look alike
    tip = ctx.repo.resolve(ctx.tracking_ref)
    if tip is None:
        return []
    line = _first_parents(ctx, tip)
    moves: list[Move] = []
    for job in waiting:
        merged = _merged(ctx, job, line)
        if merged is not None:
            moves.append(
                Move(
                    job,
                    State.PUBLISHED,
                    "published",
                    {
                        "remote_commit": merged,
                        "how": "merged from review",
                        "branch": job.review_branch,
                    },
                    {"remote_commit": merged, "failure_code": None},
                )
            )
        elif job.review_branch not in there:
            moves.append(
                Move(
                    job,
                    State.REVIEW,
                    "review:rejected",
                    {
                        "reason": f"rejected in review: {job.review_branch} was deleted unmerged",
                        "branch": job.review_branch,
                    },
                    {"failure_code": REJECTED},
                )
            )
    if not moves:
        return []
    crash.point("after_review_merged_before_db")
    settle = {m.job.job_id: ("delivered" if m.to is State.PUBLISHED else "review") for m in moves}

    def also(conn: Connection) -> None:
        for job_id, status in settle.items():
            outbox.settle_publish(conn, job_id, status)

    try:
        done = jobs.transition_all(ctx.store, moves, also=also)
    except LeaseLost:
        return []  # another watcher settled them first
    published = [j for j in done.values() if j.state is State.PUBLISHED]
    if published:
        discard_worktrees(ctx, [j.job_id for j in published])
    return list(done.values())


def _merged(ctx: Context, job: Job, line: list[Oid]) -> Oid | None:
    """The commit of the published branch that brought the job's bytes, or None (also when
    its manifest is damaged: nothing to match by, left for `doctor` and a person)."""
    try:
        entries = load_manifest(ctx, job)
    except ArtifactsDamaged:
        return None
    return _first_holding(ctx, line, entries)


def _first_parents(ctx: Context, tip: Oid) -> list[Oid]:
    """The published branch's own line (merges, squashes and rebased commits all land on
    it), oldest first."""
    out = git_out(["rev-list", "--first-parent", f"-n{HISTORY}", tip], ctx.repo.root)
    return [Oid(o) for o in reversed(out.split())]


def _first_holding(ctx: Context, line: list[Oid], entries: list[manifest.Entry]) -> Oid | None:
    """The oldest commit of `line` whose tree holds every file of the manifest with its bytes,
    provided the tip still does (an article that came and went is not published now)."""
    if not line or differing_paths(ctx, line[-1], entries):
        return None
    first = line[-1]
    for oid in reversed(line[:-1]):
        if differing_paths(ctx, oid, entries):
            break
        first = oid
    return first
