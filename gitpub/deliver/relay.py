"""Delivery: fetch, stack every ready job's commit on the remote branch, push them in one
push, and confirm each job by its trailers and its content (`batch` does the network part).

A push may succeed while its response is lost, and a rebase gives the job commit a new
hash, so "published" is decided only by finding the job's trailers on the remote-tracking
branch after a fetch — on a commit whose tree holds the job's manifest (see `confirm`) — and
the hash stored is the remote's own. Each step of a batch is one SQLite transaction for all
of its jobs, not one per job per transition."""

from __future__ import annotations

import contextlib
import dataclasses
import random
import shutil
from collections.abc import Sequence

from gitpub import trust
from gitpub.context import Context
from gitpub.core import clock, crash
from gitpub.core.errors import GitCommandError
from gitpub.core.states import State
from gitpub.deliver import batch, landmark, recheck, replay, review, withdrawn
from gitpub.deliver.batch import Result, fetch_repairing
from gitpub.git import trailers
from gitpub.git.process import run_git
from gitpub.prepare.jobtree import discard_worktree, discard_worktrees
from gitpub.store import jobs, outbox
from gitpub.store.db import Connection, at
from gitpub.store.jobs import Job, Move

DELIVERABLE = frozenset({State.LOCAL_COMMITTED, State.PUSHING, State.RETRY_WAIT, State.FAILED})
"""The states a job is delivered from: committed, interrupted mid-push, due for another
attempt, or (FAILED) due for its delivery probe."""


def backoff(cfg_base: float, cfg_max: float, attempt: int) -> float:
    """Exponential backoff with 'equal jitter': half fixed, half random, capped."""
    delay: float = min(cfg_max, cfg_base * (2 ** max(0, attempt - 1)))
    return delay / 2 + random.uniform(0, delay / 2)


@dataclasses.dataclass
class Delivered:
    """What a batch did: each job's new row, and the jobs whose own trouble (a damaged
    artifact, a git command that failed for it alone) the caller must note."""

    jobs: dict[str, Job]
    faults: dict[str, Exception]


def deliver_all(ctx: Context, held: Sequence[Job]) -> Delivered:
    """Deliver leased jobs in DELIVERABLE states together, in the order given."""
    probes = frozenset(j.job_id for j in held if j.state is State.FAILED)
    # Delivered before (interrupted mid-push, waiting to retry, probed): a push may have landed.
    again = frozenset(j.job_id for j in held if j.state is not State.LOCAL_COMMITTED)
    starting = [j for j in held if j.state in (State.LOCAL_COMMITTED, State.RETRY_WAIT)]
    fresh = jobs.transition_all(
        ctx.store,
        [Move(j, State.PUSHING, "relay:start", {"attempt": j.attempt + 1}) for j in starting],
    )
    held = [fresh.get(j.job_id, j) for j in held]
    plain = [j for j in held if not j.review]
    reviewed = [j for j in held if j.review]
    with ctx.locks.hold("delivery"):
        results = batch.deliver_locked(ctx, plain, probes, again) if plain else {}
        if reviewed:
            results.update(review.deliver_locked(ctx, reviewed, probes))
    # The locked part recorded events: settle from the rows as they are now.
    rows = jobs.get_many(ctx.store, [j.job_id for j in held if j.job_id in results])
    current: dict[str, Job] = {j.job_id: rows.get(j.job_id, j) for j in held if j.job_id in results}
    done: dict[str, Job] = {}
    faults: dict[str, Exception] = {}
    for job_id, result in results.items():
        if result.kind == "recheck":
            assert result.delta is not None
            # Judged outside the delivery lock: a slow judge must not hold up deliveries.
            done[job_id] = _recheck(ctx, current[job_id], result.delta)
        elif result.kind == "fault":
            assert result.error is not None
            faults[job_id] = result.error
    settled = _settle_all(
        ctx,
        [(current[i], r) for i, r in results.items() if r.kind not in ("recheck", "fault")],
        probes,
    )
    done.update(settled)
    _after(ctx, list(settled.values()))
    landmark.remove(
        ctx,
        {
            i: r.mark
            for i, r in results.items()
            if r.mark and i in settled and settled[i].state is State.PUBLISHED
        },
    )
    return Delivered(done, faults)


def _after(ctx: Context, settled: list[Job]) -> None:
    """What follows a settled batch outside the database: a conflict's worktree for the
    person who resolves it, published jobs' worktrees gone, the live checkout brought up."""
    for job in settled:
        if job.state is State.CONFLICT:
            replay.worktree_for_person(ctx, job)
    published = [j for j in settled if j.state is State.PUBLISHED]
    if published:
        crash.point("after_published_before_cleanup")
        discard_worktrees(ctx, [j.job_id for j in published])
        fast_forward_live(ctx)


def _settle_all(
    ctx: Context, outcomes: list[tuple[Job, Result]], probes: frozenset[str]
) -> dict[str, Job]:
    """Every outcome of a batch recorded in one transaction, with the outbox."""
    moves: list[Move] = []
    settle: dict[str, outbox.PublishStatus] = {}
    for job, result in outcomes:
        moves += _moves(ctx, job, result, job.job_id in probes)
        if result.kind == "published":
            settle[job.job_id] = "delivered"
        elif result.kind == "conflict" and job.job_id not in probes:
            settle[job.job_id] = "conflict"
        elif result.kind == "review" and job.job_id not in probes:
            settle[job.job_id] = "review"
    if not moves:
        return {}

    def also(conn: Connection) -> None:
        outbox.settle_publish_all(conn, settle)

    return jobs.transition_all(ctx.store, moves, also=also)


def _moves(ctx: Context, job: Job, result: Result, probe: bool) -> list[Move]:
    """What a delivery result does to its job: one outcome, or a wait before the next try."""
    if result.kind == "in_review":
        # On its review branch (a probe's push too): now it waits for a person's merge.
        return review.in_review_moves(ctx, job, result)
    if result.kind == "published":
        published = Move(
            job,
            State.PUBLISHED,
            "published",
            {"remote_commit": result.remote_commit, "how": result.reason, "probe": probe},
            {"remote_commit": result.remote_commit, "failure_code": None, "next_retry_at": None},
        )
        if result.taken_down_at is None:
            return [published]
        return [published, withdrawn.withdrawal(job, result.remote_commit, result.taken_down_at)]
    if probe:
        # FAILED stays FAILED: a probe never resets the budget or regenerates anything.
        return [
            Move(
                job,
                None,
                "probe",
                {"result": result.kind, "reason": result.reason},
                {"next_retry_at": at(clock.time() + ctx.config.retry.probe_interval)},
            )
        ]
    if result.kind in ("review", "conflict"):
        to = State.REVIEW if result.kind == "review" else State.CONFLICT
        return [
            Move(
                job,
                to,
                result.kind,
                {"reason": result.reason, "paths": result.detail.get("paths", [])},
                {"failure_code": str(result.detail.get("failure_code", result.kind))},
            )
        ]
    return _wait_moves(ctx, job, result)


def _wait_moves(ctx: Context, job: Job, result: Result) -> list[Move]:
    """RETRY_WAIT with backoff; once the budget is spent, FAILED with the hourly probe."""
    retry = ctx.config.retry
    attempt = job.attempt + 1
    exhausted = attempt >= job.max_attempts
    delay = (
        retry.probe_interval if exhausted else backoff(retry.base_delay, retry.max_delay, attempt)
    )
    moves = [
        Move(
            job,
            State.RETRY_WAIT,
            "retry:wait",
            {
                "reason": result.reason,
                "attempt": attempt,
                "delay": round(delay, 3),
                **({"git": result.detail["git"]} if "git" in result.detail else {}),
            },
            {"attempt": attempt, "next_retry_at": at(clock.time() + delay)},
        )
    ]
    if exhausted:
        # The budget is spent: from now on only the (hourly) delivery probe, which never
        # resets the budget and never regenerates anything.
        moves.append(
            Move(
                job,
                State.FAILED,
                "retry:exhausted",
                {"attempt": attempt, "max_attempts": job.max_attempts},
                {"failure_code": "delivery_exhausted"},
            )
        )
    return moves


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
    candidate = (
        (ctx.state_dir / (job.artifact_dir or "") / (job.target_path or ""))
        .read_bytes()
        .decode("utf-8")  # as they are: the judge sees the article's own line endings
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
