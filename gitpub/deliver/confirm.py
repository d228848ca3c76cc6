"""Confirmation of publication: the job's trailers on the remote branch AND its content there.

Anyone with push access can write `Blog-Job-Id: <id>` and `Blog-Manifest-Sha256: <hash>` into
a commit message (`show --json` prints both values). Trailers only point at a candidate; a job
is published when that commit's tree holds every file of the job's manifest with the
manifest's bytes. A candidate carrying the trailers with other content is recorded as an event
and passed over, and delivery goes on with the job's own commit."""

from __future__ import annotations

from collections.abc import Sequence

from gitpub.context import Context
from gitpub.core.ids import Oid
from gitpub.deliver.commit import ArtifactsDamaged, load_manifest
from gitpub.git import trailers
from gitpub.prepare import manifest
from gitpub.store import jobs
from gitpub.store.jobs import Job

CONTENT_DIFFERS = "confirm:content-differs"
"""The event recorded for a commit that carries the job's trailers but not its content."""


def once_held(ctx: Context, tip: Oid) -> set[str]:
    """The commits the remote-tracking branch held at an earlier value and no longer holds at
    `tip`: what a force-push or a reset took off the remote (`Repo.let_go`)."""
    return ctx.repo.let_go(ctx.tracking_ref, tip)


def taken_down_since(ctx: Context, held: Sequence[Job], tip: Oid) -> dict[str, Oid]:
    """Of jobs not on the remote branch, those whose own commit it held once and let go: a
    push that landed while its worker died before recording it (a successful push moves the
    remote-tracking ref, so its history remembers), then a person took that publication down.
    Pushing such a job again would undo the takedown."""
    mine = {j.job_id: j.local_commit for j in held if j.local_commit}
    once = once_held(ctx, tip) if mine else set()
    return {job_id: Oid(commit) for job_id, commit in mine.items() if commit in once}


def differing_paths(ctx: Context, oid: str, entries: list[manifest.Entry]) -> list[str]:
    """The manifest's paths whose bytes at commit `oid` are not the manifest's (or absent)."""
    bad = []
    for e in entries:
        data = ctx.repo.blob_at(oid, e.path)
        if data is None or len(data) != e.size or manifest.sha256_bytes(data) != e.sha256:
            bad.append(e.path)
    return bad


def find_published(ctx: Context, job: Job) -> Oid | None:
    """The commit on the remote-tracking branch that publishes this job, or None.

    Its `Blog-Job-Id` and `Blog-Manifest-Sha256` trailers match the job, and its tree holds
    the manifest's files with the manifest's bytes. Every candidate whose content differs is
    recorded once as a `confirm:content-differs` event."""
    return find_published_all(ctx, [job]).get(job.job_id)


def find_published_all(ctx: Context, held: Sequence[Job]) -> dict[str, Oid | None]:
    """`find_published` for many jobs, walking the remote branch once per base commit
    among them (a batch usually shares one) instead of once per job."""
    wanted = [j for j in held if j.artifact_sha256]
    found: dict[str, Oid | None] = {j.job_id: None for j in held}
    by_base: dict[str | None, list[Job]] = {}
    for job in wanted:
        by_base.setdefault(job.base_commit, []).append(job)
    for base, group in by_base.items():
        claims = trailers.find_remote_many(
            ctx.repo,
            ctx.tracking_ref,
            base,
            {(j.job_id, j.artifact_sha256 or "") for j in group},
        )
        for job in group:
            candidates = claims.get((job.job_id, job.artifact_sha256 or ""), [])
            if candidates:
                found[job.job_id] = _first_with_content(ctx, job, candidates)
    return found


def _first_with_content(ctx: Context, job: Job, candidates: list[Oid]) -> Oid | None:
    try:
        entries = load_manifest(ctx, job)
    except ArtifactsDamaged as exc:
        # Without the manifest no candidate can be checked, so none confirms: the relay then
        # stops on the same damage with its reason, which is what a person must look at.
        jobs.record(ctx.store, job, "confirm:no-manifest", {"reason": exc.message})
        return None
    for oid in candidates:
        bad = differing_paths(ctx, oid, entries)
        if not bad:
            return oid
        _note_forgery(ctx, job, oid, bad)
    return None


def _note_forgery(ctx: Context, job: Job, oid: Oid, bad: list[str]) -> None:
    seen = {
        ev["detail"].get("commit")
        for ev in jobs.events(ctx.store, job.job_id)
        if ev["step"] == CONTENT_DIFFERS
    }
    if oid in seen:
        return
    jobs.record(
        ctx.store,
        job,
        CONTENT_DIFFERS,
        {
            "commit": oid,
            "paths": bad,
            "reason": f"trailers on {oid}, content differs ({', '.join(bad)})",
        },
    )
