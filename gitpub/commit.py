"""The local commit: exactly the manifest's files, one commit, four trailers, one job ref."""

from __future__ import annotations

import shutil
from pathlib import Path

from gitpub import crash, jobs, outbox, trailers
from gitpub.context import Context
from gitpub.errors import GitpubError
from gitpub.gitrepo import run_git
from gitpub.jobs import Job
from gitpub.prepare import branch_name, ensure_worktree, manifest
from gitpub.states import State
from gitpub.types import JobId, Oid, Sha256


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
    """Commit exactly the manifest's files on the job branch at base_commit; point the job
    ref at it. The artifacts are verified first, so the same job always makes the same
    tree with the same trailers — which is what lets a lost commit be made again."""
    assert job.base_commit
    folder, entries = verified_artifacts(ctx, job)
    branch = branch_name(job.job_id)
    worktree = ensure_worktree(ctx, job, job.base_commit)
    with ctx.locks.hold("repo"):
        if ctx.repo.resolve(f"refs/heads/{branch}") != job.base_commit:
            # Re-check HEAD: the branch must be exactly the snapshot prepare judged.
            run_git(["rebase", "--abort"], worktree, check=False)
            run_git(["reset", "--hard", "--quiet", job.base_commit], worktree)
        if not target_unchanged(ctx, job, job.base_commit):
            raise ArtifactsDamaged(f"job {job.job_id}: target changed under the snapshot")
        for e in entries:
            dest = worktree / e.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / e.path, dest)
        paths = [e.path for e in entries]
        run_git(["add", "--", *paths], worktree)
        crash.point("before_local_commit")
        run_git(
            ["commit", "--no-verify", "--quiet", "--allow-empty", "-F", "-", "--", *paths],
            worktree,
            input=commit_message(ctx, job).encode("utf-8"),
        )
        oid = ctx.repo.resolve(f"refs/heads/{branch}")
        assert oid is not None
        crash.point("after_local_commit_before_db")
        trailers.point_job_ref(ctx.repo, job.job_id, oid, "commit")
    return oid
