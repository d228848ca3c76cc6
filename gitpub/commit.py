"""The local commit: exactly the manifest's files, one commit, four trailers, one job ref."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gitpub import crash, jobs, objects, outbox, repair, trailers
from gitpub.context import Context
from gitpub.errors import GitpubError, JobFault
from gitpub.jobs import Job
from gitpub.prepare import branch_name, manifest
from gitpub.states import State
from gitpub.types import JobId, Oid, Sha256

REWRITES = 3
"""How often a job commit whose objects vanished under it is written again."""


class ArtifactsDamaged(GitpubError):
    """The job's artifact folder no longer matches its manifest."""


def load_manifest(ctx: Context, job: Job) -> list[manifest.Entry]:
    path = ctx.job_dir(job.job_id) / "manifest.json"
    if not path.is_file():
        raise ArtifactsDamaged(f"job {job.job_id}: manifest.json is missing")
    entries = manifest.load(path)
    if manifest.digest(entries) != job.artifact_sha256:
        raise ArtifactsDamaged(f"job {job.job_id}: manifest.json does not hash to artifact_sha256")
    return entries


def verified_artifacts(ctx: Context, job: Job) -> tuple[Path, list[manifest.Entry]]:
    entries = load_manifest(ctx, job)
    folder = ctx.state_dir / (job.artifact_dir or "")
    bad = manifest.verify(folder, entries)
    if bad:
        raise ArtifactsDamaged(f"job {job.job_id}: artifacts changed or missing: {', '.join(bad)}")
    return folder, entries


def commit_message(ctx: Context, job: Job) -> str:
    title = f"blog: publish {job.target_path}"
    return trailers.format_message(
        title,
        trailers.job_trailers(
            JobId(job.job_id),
            Sha256(job.artifact_sha256 or ""),
            Oid(job.base_commit or ""),
            ctx.config.node,
        ),
    )


def target_unchanged(ctx: Context, job: Job, at_commit: str) -> bool:
    """CAS on the target: its bytes at `at_commit` still hash to the snapshot's SHA-256.

    A SHA-256 of the file's bytes, never git's SHA-1 blob id: the two are not comparable."""
    if not job.target_path:
        return True
    data = ctx.repo.blob_at(at_commit, job.target_path)
    now = manifest.sha256_bytes(data) if data is not None else None
    return now == job.target_blob_sha256


def commit_job(ctx: Context, job: Job) -> Job:
    """READY_TO_COMMIT (or LOCAL_COMMITTING after recovery) → LOCAL_COMMITTED."""
    if job.state is State.READY_TO_COMMIT:
        job = jobs.transition(ctx.store, job, State.LOCAL_COMMITTING, "commit:start")
    oid = make_commit(ctx, job)
    job = jobs.transition(
        ctx.store,
        job,
        State.LOCAL_COMMITTED,
        "commit",
        {"commit": oid, "manifest": job.artifact_sha256},
        local_commit=oid,
        also=lambda conn: outbox.enqueue_publish(conn, job.job_id),
    )
    crash.point("after_local_committed")
    return job


def make_commit(ctx: Context, job: Job) -> Oid:
    """Commit exactly the manifest's files onto base_commit, in memory, and point the job ref
    and the job branch at it. The artifacts are verified first, so the same job always makes
    the same tree with the same trailers — which is what lets a lost commit be made again.

    A `git gc --prune=now` running meanwhile can delete objects written a moment ago, before
    any ref holds them; they are checked after the refs moved and written again if gone."""
    assert job.base_commit
    folder, entries = verified_artifacts(ctx, job)
    if not target_unchanged(ctx, job, job.base_commit):
        # Re-check the snapshot: the target prepare judged must be what the base holds.
        raise ArtifactsDamaged(f"job {job.job_id}: target changed under the snapshot")
    files = {e.path: (folder / e.path).read_bytes() for e in entries}
    repo = ctx.repo
    base_tree = str(repo.commit(job.base_commit).tree_id)
    for _ in range(REWRITES):
        crash.point("before_local_commit")
        tree = objects.tree_with(repo, base_tree, files)
        oid = objects.create_commit(
            ctx.config, repo, tree, [job.base_commit], commit_message(ctx, job)
        )
        crash.point("after_commit_object_before_ref")
        with ctx.locks.hold("repo"):
            point_job_refs(ctx, job.job_id, oid, "commit")
        crash.point("after_local_commit_before_db")
        if not objects.missing(repo, objects.closure(repo, oid, files)):
            return oid
    raise JobFault(
        "objects_missing",
        f"job {job.job_id}: the objects of the job commit keep disappearing "
        "(a `git gc --prune=now` running in a loop?)",
    )


def point_job_refs(ctx: Context, job_id: str, oid: str, why: str) -> None:
    """The job ref (the recovery index) and the job branch (what a person checks out) at the
    job commit, in one transaction. Called under the repo lock."""
    point_jobs_refs(ctx, {job_id: oid}, why)


def point_jobs_refs(ctx: Context, heads: Mapping[str, str], why: str) -> None:
    """`point_job_refs` for several jobs in one ref transaction: all move, or none."""
    refs: dict[str, str] = {}
    for job_id, oid in heads.items():
        repair.clear_private_locks(ctx.repo, job_id)
        refs[trailers.job_ref(job_id)] = oid
        refs[f"refs/heads/{branch_name(job_id)}"] = oid
    only = f"job {next(iter(heads))}" if len(heads) == 1 else f"{len(heads)} jobs"
    objects.point_refs(ctx.repo, refs, f"gitpub: {why} {only}")
