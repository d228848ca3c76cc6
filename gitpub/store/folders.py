"""The job's durable record in its folder: `jobs/<job_id>/job.json`, beside `source.txt`.

The database is the working copy of every job; this record is what survives it. It is
written before `submit` returns (key hash, kind, target, topic, created_at), gains the
manifest when prepare seals the artifacts, and the outcome when the job ends, so that
`reconcile --rebuild` can make a lost database again from job folders, `refs/blog-jobs` and
the remote's trailers. Everything in it is sanitized; the raw key never is in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitpub.core.files import write_atomic
from gitpub.core.states import TERMINAL, State
from gitpub.scan.sanitize import sanitize_obj

if TYPE_CHECKING:
    from gitpub.store.jobs import Job

NAME = "job.json"
VERSION = 1


def path(job_dir: Path) -> Path:
    return job_dir / NAME


def load(job_dir: Path) -> dict[str, Any] | None:
    """The record, or None when it is missing or unreadable (a folder from before records)."""
    try:
        data = json.loads(path(job_dir).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _save(job_dir: Path, data: dict[str, Any], sync: bool = True) -> None:
    text = json.dumps(sanitize_obj(data), sort_keys=True, ensure_ascii=False, indent=1)
    write_atomic(path(job_dir), text.encode("utf-8") + b"\n", sync=sync)


def create(job_dir: Path, fields: dict[str, Any], sync: bool = True) -> None:
    _save(job_dir, {"version": VERSION, **fields}, sync)


def update(job_dir: Path, sync: bool = True, **changes: Any) -> None:
    """Merge `changes` into the record (a value of None removes the field). A folder without
    a record (made before records existed) is left without one."""
    data = load(job_dir)
    if data is None:
        return
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    _save(job_dir, data, sync)


def remember_prepared(job_dir: Path, job: Job, sync: bool = True) -> None:
    """Note the sealed manifest: with it, a rebuilt database finds the artifacts (and the
    commit made from them) instead of preparing the job again."""
    update(
        job_dir,
        sync,
        prepared={
            "base_commit": job.base_commit,
            "target_path": job.target_path,
            "target_blob_sha256": job.target_blob_sha256,
            "artifact_dir": job.artifact_dir,
            "artifact_sha256": job.artifact_sha256,
        },
    )


def remember_state(job_dir: Path, job: Job, sync: bool = True) -> None:
    """After the database, on a transition: a job that ended notes its outcome, and one sent
    back to RECEIVED (an operator's retry or continue) forgets its manifest and outcome.
    `sync`: whether the folder is what survives (`Store.folders_durable`)."""
    if job.state is State.RECEIVED:
        update(job_dir, sync, prepared=None, outcome=None)
    elif job.state in TERMINAL:
        # PUBLISHED is not synced: a rebuild finds it again on the remote (trailers and
        # content decide a publication anyway), and a delivered batch would pay one sync
        # per job. Outcomes only this record knows are.
        update(
            job_dir,
            sync=sync and job.state is not State.PUBLISHED,
            outcome={
                "state": job.state.value,
                "failure_code": job.failure_code,
                "remote_commit": job.remote_commit,
                "at": job.updated_at,
            },
        )
