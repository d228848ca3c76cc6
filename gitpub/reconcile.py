"""Recovery that needs nothing from memory: every decision comes from the store, the job
folder and git itself."""

from __future__ import annotations

from gitpub import jobs, trailers
from gitpub.commit import ArtifactsDamaged, verified_artifacts
from gitpub.context import Context
from gitpub.jobs import Job
from gitpub.outbox import enqueue_publish
from gitpub.states import State


def recover_local_commit(ctx: Context, job: Job) -> Job:
    """A job found in LOCAL_COMMITTING died between "commit" and "recorded": find out which.

    The O(1) job ref first, then a trailer search over local refs; a commit carrying the job's
    id and manifest means the commit happened. Otherwise the artifacts decide: intact (every
    manifest hash verified) → commit again; damaged → REVIEW, a person must look."""
    if job.state is State.LOCAL_COMMITTING:
        job = jobs.transition(ctx.store, job, State.RECOVERING, "recover:start")
    oid = trailers.find_local(ctx.repo, job.job_id, job.artifact_sha256)
    if oid is not None:
        if ctx.repo.resolve(trailers.job_ref(job.job_id)) != oid:
            ctx.repo.update_ref(
                trailers.job_ref(job.job_id), oid, None, f"gitpub: recover job {job.job_id}"
            )
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
