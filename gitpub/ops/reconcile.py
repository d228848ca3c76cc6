"""Recovery that needs nothing from memory: every decision comes from the store, the job
folder and git itself."""

from __future__ import annotations

from gitpub.context import Context
from gitpub.core.states import State
from gitpub.deliver.commit import ArtifactsDamaged, verified_artifacts
from gitpub.git import repair, trailers
from gitpub.store import jobs, leases, reads
from gitpub.store.db import Connection
from gitpub.store.jobs import Job
from gitpub.store.outbox import enqueue_publish


def recover_local_commit(ctx: Context, job: Job) -> Job:
    """A job found in LOCAL_COMMITTING died between "commit" and "recorded": find out which.

    The O(1) job ref first, then a trailer search over local refs; a commit carrying the job's
    id and manifest means the commit happened. Otherwise the artifacts decide: intact (every
    manifest hash verified) → commit again; damaged → REVIEW, a person must look."""
    if job.state is State.LOCAL_COMMITTING:
        job = jobs.transition(ctx.store, job, State.RECOVERING, "recover:start")
    oid = trailers.find_local(ctx.repo, job.job_id, job.artifact_sha256)
    if oid is not None:
        trailers.point_job_ref(ctx.repo, job.job_id, oid, "recover")
        return jobs.transition(
            ctx.store,
            job,
            State.LOCAL_COMMITTED,
            "recover:found-commit",
            {"commit": oid},
            local_commit=oid,
            also=lambda conn: enqueue_publish(conn, job.job_id),
        )
    try:
        verified_artifacts(ctx, job)
    except ArtifactsDamaged as exc:
        return jobs.transition(
            ctx.store,
            job,
            State.REVIEW,
            "recover:unsafe",
            {"reason": exc.message},
            failure_code="artifacts_damaged",
        )
    return jobs.transition(ctx.store, job, State.LOCAL_COMMITTING, "recover:artifacts-intact")


def repair_repository(ctx: Context) -> repair.Repaired:
    """What a killed worker or a person's `git gc --prune=now` left: gitpub's half-made
    worktrees and its refs at missing objects go (the relay makes a lost job commit again
    from the artifacts), before anything fetches."""
    with ctx.locks.hold("repo"):
        return repair.repair(ctx.repo)


_RELEASE = jobs.JobUpdate(lease_owner=None, lease_token=None, lease_expires_at=None)


def settle_interrupted_commits(ctx: Context, owner: str) -> list[str]:
    """Start-up fast path for many jobs that died between "committed" and "recorded".

    Each such job is claimed, looked up through its job ref, and moved LOCAL_COMMITTING →
    RECOVERING → LOCAL_COMMITTED with both events — all of them in one transaction, since a
    durable commit per transition would cost more than the lookups. Jobs whose commit is not
    found are left (unclaimed) to the one-by-one path, which decides from their artifacts."""
    store = ctx.store
    lease = ctx.config.retry.lease_seconds
    stuck = reads.ids_in(store, (State.LOCAL_COMMITTING, State.RECOVERING))
    moves: list[jobs.Move] = []
    claimed = leases.claim_many(store, list(stuck), owner, lease)
    for job in claimed:
        oid = trailers.find_local(ctx.repo, job.job_id, job.artifact_sha256)
        if oid is None:
            continue
        trailers.point_job_ref(ctx.repo, job.job_id, oid, "recover")
        if job.state is State.LOCAL_COMMITTING:
            moves.append(jobs.Move(job, State.RECOVERING, "recover:start"))
            job = job._replace(state=State.RECOVERING)
        moves.append(
            jobs.Move(
                job,
                State.LOCAL_COMMITTED,
                "recover:found-commit",
                {"commit": oid},
                jobs.JobUpdate({**_RELEASE, "local_commit": oid}),
            )
        )
    settled: list[str] = [m.job.job_id for m in moves if m.to is State.LOCAL_COMMITTED]

    def enqueue(conn: Connection) -> None:
        for job_id in settled:
            enqueue_publish(conn, job_id)

    if moves:
        jobs.transition_all(store, moves, also=enqueue)
    leases.release_many(store, [j for j in claimed if j.job_id not in settled])
    return settled
