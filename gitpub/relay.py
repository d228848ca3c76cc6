"""Delivery: fetch, rebase onto the remote branch, push, and confirm by trailers and content.

A push may succeed while its response is lost, and a rebase gives the job commit a new
hash, so "published" is decided only by finding the job's trailers on the remote-tracking
branch after a fetch — on a commit whose tree holds the job's manifest (see `confirm`) — and
the hash stored is the remote's own."""

from __future__ import annotations

import contextlib
import random
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

from gitpub import (
    confirm,
    crash,
    jobs,
    leases,
    objects,
    outbox,
    recheck,
    repair,
    replay,
    trailers,
    trust,
)
from gitpub.commit import point_job_refs, target_unchanged
from gitpub.context import Context
from gitpub.errors import GitCommandError, git_cause
from gitpub.gitrepo import run_git
from gitpub.jobs import Job
from gitpub.prepare import discard_worktree
from gitpub.states import State
from gitpub.store import at
from gitpub.types import Oid


@dataclass
class Result:
    kind: str  # published | retry | conflict | recheck
    reason: str = ""
    remote_commit: Oid | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    delta: recheck.Delta | None = None


def backoff(cfg_base: float, cfg_max: float, attempt: int) -> float:
    """Exponential backoff with 'equal jitter': half fixed, half random, capped."""
    delay: float = min(cfg_max, cfg_base * (2 ** max(0, attempt - 1)))
    return delay / 2 + random.uniform(0, delay / 2)


def deliver(ctx: Context, job: Job) -> Job:
    """Drive a job in LOCAL_COMMITTED, PUSHING, RETRY_WAIT (due) or FAILED (probe) onward."""
    probe = job.state is State.FAILED
    if job.state in (State.LOCAL_COMMITTED, State.RETRY_WAIT):
        job = jobs.transition(
            ctx.store, job, State.PUSHING, "relay:start", {"attempt": job.attempt + 1}
        )
    with ctx.locks.hold("delivery"):
        result = _deliver_locked(ctx, job, probe)
    job = jobs.get(ctx.store, job.job_id) or job  # the locked part may have recorded events
    if result.kind == "recheck":
        assert result.delta is not None
        # Judged outside the delivery lock: a slow judge must not hold up other deliveries.
        return _recheck(ctx, job, result.delta)
    job = _settle(ctx, job, result, probe)
    if job.state is State.CONFLICT:
        replay.worktree_for_person(ctx, job)
    if job.state is State.PUBLISHED:
        crash.point("after_published_before_cleanup")
        discard_worktree(ctx, job.job_id)
        fast_forward_live(ctx)
    return job


def _deliver_locked(ctx: Context, job: Job, probe: bool) -> Result:
    repo, pub = ctx.repo, ctx.config.publish
    failed = _fetch(ctx, job)
    if failed:
        return failed
    found = _confirmed(ctx, job)
    if found:
        # Already there: a previous push whose answer we never recorded. Never push twice.
        return Result("published", "found on remote before pushing", found)
    head = replay.job_commit(ctx, job)
    for race in range(ctx.config.retry.push_races):
        # A checkpoint before every push: network rounds can be slow, and a worker whose
        # lease was taken meanwhile must stop here rather than push.
        job = leases.renew(ctx.store, job, ctx.config.retry.lease_seconds)
        tip = repo.resolve(ctx.tracking_ref)
        if tip is None:
            return Result("retry", f"remote branch {pub.branch!r} does not exist")
        if not target_unchanged(ctx, job, tip):
            return Result(
                "conflict",
                f"{job.target_path} changed on the remote since the snapshot",
                detail={"failure_code": "target_changed", "paths": [job.target_path]},
            )
        if not probe:
            delta = recheck.pending(ctx, job, tip)
            if delta is not None:
                return Result("recheck", "new articles on the remote", delta=delta)
        job, rebased, conflict = replay.rebase(ctx, job, head, tip)
        if conflict is not None:
            return Result(
                "conflict",
                "rebase conflict in " + ", ".join(conflict),
                detail={"failure_code": "rebase_conflict", "paths": conflict},
            )
        assert rebased is not None
        head = rebased
        job = _record_local(ctx, job, head)
        crash.point("after_rebase_before_push")
        pushed = repo.push(pub.remote, head, pub.branch)
        if pushed.ok:
            crash.point("after_push_before_db")
            jobs.record(ctx.store, job, "push", {"commit": head, "race": race})
        elif not pushed.rejected_non_ff:
            return _push_failed(ctx, job, head, pushed.stderr)
        failed = _fetch(ctx, job)
        if failed:
            return failed
        found = _confirmed(ctx, job)
        if found:
            return Result("published", "confirmed by trailers and content", found)
        if pushed.ok:
            return Result("retry", "push accepted but the commit is not on the remote branch")
        jobs.record(ctx.store, job, "push:rejected", {"race": race, "reason": "non-fast-forward"})
    return Result("retry", f"remote moved during {ctx.config.retry.push_races} push attempts")


def _push_failed(ctx: Context, job: Job, head: Oid, stderr: str) -> Result:
    """A push that failed for another reason than a moved remote: git's own cause in the
    reason (not the porcelain's closing "Done"), its whole output in the event."""
    gone = objects.missing(ctx.repo, objects.closure(ctx.repo, head, replay.paths(ctx, job)))
    if gone:
        # A `git gc --prune=now` took objects of the job commit: forget it, so the next
        # attempt makes it again from the artifacts.
        with ctx.locks.hold("repo"):
            repair.repair(ctx.repo)
        return Result("retry", "objects of the job commit were removed; it will be made again")
    return Result(
        "retry", f"push failed: {git_cause(stderr) or 'no output'}", detail={"git": stderr}
    )


def _fetch(ctx: Context, job: Job) -> Result | None:
    """Fetch the published branch; a retry Result when the remote cannot be reached."""
    try:
        repaired = fetch_repairing(ctx)
    except GitCommandError as exc:
        return Result("retry", f"fetch failed: {git_cause(exc.stderr)}", detail={"git": exc.stderr})
    if repaired:
        jobs.record(ctx.store, job, "repair", repaired.summary())
    return None


def fetch_repairing(ctx: Context) -> repair.Repaired | None:
    """Fetch the published branch; when git blames the repository's own state (a half-made
    worktree, a ref at a pruned object, a lock a killed fetch left), repair and fetch again."""
    pub = ctx.config.publish
    try:
        ctx.repo.fetch(pub.remote, pub.branch)
        return None
    except GitCommandError as exc:
        if not repair.wedged(exc.stderr):
            raise
    with ctx.locks.hold("repo"):
        repaired = repair.repair(ctx.repo, ctx.tracking_ref)
    ctx.repo.fetch(pub.remote, pub.branch)
    return repaired


def _confirmed(ctx: Context, job: Job) -> Oid | None:
    return confirm.find_published(ctx, job)


def _record_local(ctx: Context, job: Job, head: Oid) -> Job:
    if head == job.local_commit:
        return job
    with ctx.locks.hold("repo"):
        point_job_refs(ctx, job.job_id, head, "rebase")
    return jobs.record(ctx.store, job, "rebase", {"commit": head}, local_commit=head)


def _recheck(ctx: Context, job: Job, delta: recheck.Delta) -> Job:
    """RECHECK_CANDIDATES: dedup-only judgement of the new remote delta. Never re-drafts."""
    job = jobs.transition(
        ctx.store,
        job,
        State.RECHECK_CANDIDATES,
        "recheck:start",
        {"tip": delta.tip, "paths": sorted(delta.texts)},
    )
    return _judge_delta(ctx, job, delta)


def _judge_delta(ctx: Context, job: Job, delta: recheck.Delta) -> Job:
    job = _decide_delta(ctx, job, delta)
    # The decision is recorded: its spooled answer has nothing left to be adopted for.
    shutil.rmtree(recheck.spool_dir(ctx, job, delta), ignore_errors=True)
    return job


def _decide_delta(ctx: Context, job: Job, delta: recheck.Delta) -> Job:
    store = ctx.store
    candidate = (ctx.state_dir / (job.artifact_dir or "") / (job.target_path or "")).read_text(
        "utf-8"
    )
    try:
        answer = recheck.judge(ctx, job, delta, candidate)
    except recheck.NotAllowed as exc:
        return jobs.transition(
            store,
            job,
            State.REVIEW,
            "recheck:not-allowed",
            {"reason": exc.message},
            failure_code=trust.FAILURE_CODE,
        )
    except recheck.StepFailed as exc:
        return jobs.transition(
            store,
            job,
            State.REVIEW,
            "recheck:undecided",
            {"reason": exc.message},
            failure_code="recheck_undecided",
        )
    if answer["decision"] == "SKIP":
        job = jobs.transition(
            store,
            job,
            State.SKIPPED,
            "recheck:skip",
            {"reason": answer.get("reason"), "tip": delta.tip},
            also=lambda conn: outbox.settle_publish(conn, job.job_id, "skipped"),
        )
        # The job commit is discarded locally and nothing is pushed.
        discard_worktree(ctx, job.job_id)
        ctx.repo.delete_ref(trailers.job_ref(job.job_id), f"gitpub: job {job.job_id} skipped")
        return job
    return jobs.transition(
        store,
        job,
        State.LOCAL_COMMITTED,
        "recheck:keep",
        {"reason": answer.get("reason"), "tip": delta.tip},
        last_recheck_head=delta.tip,
        last_recheck_delta_sha=delta.fingerprint,
    )


def resume_recheck(ctx: Context, job: Job) -> Job:
    """A job found in RECHECK_CANDIDATES (its worker died mid-judgement): look again."""
    # On a fetch failure judge what we last saw; the delivery fetches again anyway.
    with ctx.locks.hold("delivery"), contextlib.suppress(GitCommandError):
        fetch_repairing(ctx)
    tip = ctx.repo.resolve(ctx.tracking_ref)
    delta = recheck.pending(ctx, job, tip) if tip else None
    if delta is None:
        return jobs.transition(ctx.store, job, State.LOCAL_COMMITTED, "recheck:nothing-new")
    return _judge_delta(ctx, job, delta)


def _settle(ctx: Context, job: Job, result: Result, probe: bool) -> Job:
    store, retry = ctx.store, ctx.config.retry
    if result.kind == "published":
        return jobs.transition(
            store,
            job,
            State.PUBLISHED,
            "published",
            {"remote_commit": result.remote_commit, "how": result.reason, "probe": probe},
            remote_commit=result.remote_commit,
            failure_code=None,
            next_retry_at=None,
            also=lambda conn: outbox.settle_publish(conn, job.job_id, "delivered"),
        )
    if probe:
        # FAILED stays FAILED: a probe never resets the budget or regenerates anything.
        return jobs.record(
            store,
            job,
            "probe",
            {"result": result.kind, "reason": result.reason},
            next_retry_at=at(time.time() + retry.probe_interval),
        )
    if result.kind == "conflict":
        code = result.detail.get("failure_code", "conflict")
        return jobs.transition(
            store,
            job,
            State.CONFLICT,
            "conflict",
            {"reason": result.reason, "paths": result.detail.get("paths", [])},
            failure_code=code,
            also=lambda conn: outbox.settle_publish(conn, job.job_id, "conflict"),
        )
    attempt = job.attempt + 1
    exhausted = attempt >= job.max_attempts
    delay = (
        retry.probe_interval if exhausted else backoff(retry.base_delay, retry.max_delay, attempt)
    )
    job = jobs.transition(
        store,
        job,
        State.RETRY_WAIT,
        "retry:wait",
        {
            "reason": result.reason,
            "attempt": attempt,
            "delay": round(delay, 3),
            **({"git": result.detail["git"]} if "git" in result.detail else {}),
        },
        attempt=attempt,
        next_retry_at=at(time.time() + delay),
    )
    if exhausted:
        # The budget is spent: from now on only the (hourly) delivery probe, which never
        # resets the budget and never regenerates anything.
        job = jobs.transition(
            store,
            job,
            State.FAILED,
            "retry:exhausted",
            {"attempt": attempt, "max_attempts": job.max_attempts},
            failure_code="delivery_exhausted",
        )
    return job


def fast_forward_live(ctx: Context) -> str:
    """Bring the live checkout up to the remote branch when that is a clean fast-forward;
    otherwise leave the person's work exactly as it is. Returns what was done."""
    repo, branch = ctx.repo, ctx.config.publish.branch
    with ctx.locks.hold("checkout"):
        if repo.current_branch() != branch:
            return "not on the published branch"
        head, tip = repo.resolve("HEAD"), repo.resolve(ctx.tracking_ref)
        if head is None or tip is None or head == tip:
            return "up to date"
        if not repo.is_ancestor(head, tip):
            return "diverged"
        if not repo.is_clean():
            return "dirty"
        proc = run_git(["merge", "--ff-only", "--quiet", tip], repo.root, check=False)
        return "fast-forwarded" if proc.returncode == 0 else "merge refused"
