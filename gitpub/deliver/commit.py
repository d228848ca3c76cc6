"""The local commit: exactly the manifest's files, one commit, four trailers, one job ref."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import GitCommandError, GitpubError, JobFault
from gitpub.core.ids import JobId, Oid, Sha256
from gitpub.core.states import State
from gitpub.git import objects, repair, trailers
from gitpub.prepare import manifest
from gitpub.prepare.jobtree import branch_name
from gitpub.store import jobs, outbox
from gitpub.store.db import Connection
from gitpub.store.jobs import Job, Move

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


class Committed(NamedTuple):
    jobs: dict[str, Job]  # job id → the job, LOCAL_COMMITTED
    damaged: list[Job]  # LOCAL_COMMITTING jobs whose artifacts no longer match: recovery's


def commit_all(ctx: Context, batch: Sequence[Job]) -> Committed:
    """READY_TO_COMMIT (or LOCAL_COMMITTING after recovery) → LOCAL_COMMITTED, for the jobs of
    a round together: one transaction to start, the commits made in memory, one ref
    transaction, one object check and one transaction to record them. A crash anywhere
    leaves each job LOCAL_COMMITTING, which recovery settles from its job ref."""
    starting = [Move(j, State.LOCAL_COMMITTING, "commit:start") for j in batch]
    started = jobs.transition_all(
        ctx.store, [m for m in starting if m.job.state is State.READY_TO_COMMIT]
    )
    batch = [started.get(j.job_id, j) for j in batch]
    made = make_commits(ctx, batch)
    moves = [
        Move(
            job,
            State.LOCAL_COMMITTED,
            "commit",
            {"commit": made.oids[job.job_id], "manifest": job.artifact_sha256},
            {"local_commit": made.oids[job.job_id]},
        )
        for job in batch
        if job.job_id in made.oids
    ]

    def enqueue(conn: Connection) -> None:
        outbox.enqueue_publish_all(conn, [move.job.job_id for move in moves])

    done = jobs.transition_all(ctx.store, moves, also=enqueue)
    crash.point("after_local_committed")
    damaged = [j for j in batch if j.job_id in made.damaged]
    return Committed(done, damaged)


class Made(NamedTuple):
    oids: dict[str, Oid]  # job id → its commit, the job ref and job branch at it
    damaged: dict[str, ArtifactsDamaged]  # job id → why no commit was made


def make_commit(ctx: Context, job: Job) -> Oid:
    """`make_commits` for one job; ArtifactsDamaged when its artifacts fail their check."""
    made = make_commits(ctx, [job])
    if job.job_id in made.damaged:
        raise made.damaged[job.job_id]
    return made.oids[job.job_id]


def _fetch_missing_bases(ctx: Context, batch: Sequence[Job]) -> None:
    """A job prepared by another node (a shared store) may rest on a remote tip this clone
    never fetched: bring that commit, by id, before building on it."""
    for base in sorted({j.base_commit for j in batch if j.base_commit}):
        if ctx.repo.resolve(base) is None:
            with contextlib.suppress(GitCommandError):  # gone from the remote: repaired below
                ctx.repo.fetch_commit(ctx.config.publish.remote, base)


def make_commits(ctx: Context, batch: Sequence[Job]) -> Made:
    """Commit exactly each job's manifest files onto its base_commit, in memory, and point
    the job refs and job branches at them in one ref transaction. The artifacts are verified
    first, so the same job always makes the same tree with the same trailers — which is what
    lets a lost commit be made again.

    A `git gc --prune=now` running meanwhile can delete objects written a moment ago, before
    any ref holds them; they are checked after the refs moved (one `cat-file` for the batch)
    and the commits that lost any are written again."""
    repo = ctx.repo
    damaged: dict[str, ArtifactsDamaged] = {}
    files: dict[str, dict[str, bytes]] = {}
    for job in batch:
        try:
            files[job.job_id] = _files(ctx, job)
        except ArtifactsDamaged as exc:
            damaged[job.job_id] = exc
    todo = [j for j in batch if j.job_id in files]
    _fetch_missing_bases(ctx, todo)
    oids: dict[str, Oid] = {}
    for rewrite in range(REWRITES):
        if not todo:
            return Made(oids, damaged)
        heads = _write_commits(ctx, todo, files, chain=rewrite == 0)
        crash.point("after_commit_object_before_ref")
        with ctx.locks.hold("repo"):
            point_jobs_refs(ctx, heads, "commit")
        crash.point("after_local_commit_before_db")
        oids.update(heads)
        needs = {j: objects.closure(repo, oid, files[j]) for j, oid in heads.items()}
        gone = set(objects.missing(repo, [o for closure in needs.values() for o in closure]))
        todo = [j for j in todo if gone.intersection(needs[j.job_id])]
    if not todo:
        return Made(oids, damaged)
    raise JobFault(
        "objects_missing",
        f"job {todo[0].job_id}: the objects of the job commit keep disappearing "
        "(a `git gc --prune=now` running in a loop?)",
    )


def _write_commits(
    ctx: Context, todo: Sequence[Job], files: Mapping[str, Mapping[str, bytes]], chain: bool
) -> dict[str, Oid]:
    """Each job's commit of its files. With `chain`, a job prepared on the same base as the
    one before it, writing none of the paths the chain wrote, is made on that job's commit:
    the round's jobs are then already the line of commits delivery stacks on the remote tip,
    and while the tip is their base nothing is replayed (each diff to its parent is still the
    job's files alone). Font outputs are shared by every job, so with fonts each job stands
    on its base; a rewrite after pruned objects does too."""
    repo = ctx.repo
    heads: dict[str, Oid] = {}
    parent: tuple[str, str] | None = None  # the chain so far: its base, its last commit
    written: set[str] = set()
    for job in todo:
        crash.point("before_local_commit")
        assert job.base_commit
        mine = files[job.job_id]
        linked = (
            chain
            and ctx.config.fonts is None
            and parent is not None
            and parent[0] == job.base_commit
            and written.isdisjoint(mine)
        )
        on = parent[1] if linked and parent is not None else job.base_commit
        if not linked:
            written = set()
        tree = objects.tree_with(repo, str(repo.commit(on).tree_id), mine)
        heads[job.job_id] = objects.create_commit(
            ctx.config, repo, tree, [on], commit_message(ctx, job)
        )
        parent = (job.base_commit, heads[job.job_id])
        written.update(mine)
    return heads


def _files(ctx: Context, job: Job) -> dict[str, bytes]:
    """The job's verified artifacts, path → bytes, on a base that still holds the target
    prepare judged."""
    assert job.base_commit
    folder, entries = verified_artifacts(ctx, job)
    if not target_unchanged(ctx, job, job.base_commit):
        raise ArtifactsDamaged(f"job {job.job_id}: target changed under the snapshot")
    return {e.path: (folder / e.path).read_bytes() for e in entries}


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
