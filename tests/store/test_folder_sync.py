"""Which job-folder files are synced to disk before they count, by store.

On the embedded store a job's folder is what survives the database (`reconcile --rebuild`
remakes it from the folders): its source, record and manifest are synced before the database
refers to them. On a shared store the folder is a cache: the transaction that refers to a
file keeps it in the store, and a claim checks this disk's copy against it by hash, so a
sync there only costs the fleet time. Each sync is seen where it happens (`os.fsync` on the
file's descriptor), with the job run in this process."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from testing.fixtures import Blog, article

from gitpub import intake
from gitpub.context import open_context
from gitpub.ops.runner import Runner

DURABLE = {"source.txt", "job.json", "manifest.json"}
"""What a rebuilt database needs of a job published from the embedded store."""


def _synced_files(blog: Blog, monkeypatch: pytest.MonkeyPatch) -> tuple[str, set[str]]:
    """Submit one job and publish it; the job's id and the names (relative to its folder) of
    the files synced while that happened."""
    synced: list[str] = []
    plain = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        plain(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with open_context(blog.root) as ctx:
        job, _ = intake.create(ctx, key="synced", source=article("Synced", "Kept or cached."))
        runner = Runner(blog.root, concurrency=1)
        while runner.one_pass(ctx):
            pass
        folder = str(ctx.job_dir(job.job_id)) + os.sep
    assert blog.job(job.job_id)["job"]["state"] == "PUBLISHED"
    # A file is synced under its temporary name (`.job.json.<random>.tmp`), then renamed.
    names = {
        re.sub(r"^\.(.+)\.[0-9a-f]+\.tmp$", r"\1", Path(p).name)
        for p in synced
        if p.startswith(folder)
    }
    return job.job_id, names


def test_the_embedded_stores_folders_are_synced_before_they_count(
    blog: Blog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITPUB_STORE", raising=False)
    _, names = _synced_files(blog, monkeypatch)
    assert names >= DURABLE, names


def test_a_shared_stores_folders_are_a_cache_never_synced(
    blog: Blog, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITPUB_STORE", pg_url)
    job_id, names = _synced_files(blog, monkeypatch)
    assert names == set(), names
    # What the folder holds is in the store: a fresh clone publishes from it (asserted
    # elsewhere); here, that the files a rebuild would read are there.
    with open_context(blog.root) as ctx:
        kept = {
            row[0]
            for row in ctx.store.conn.execute(
                "SELECT name FROM blog_job_file WHERE job_id = ?", (job_id,)
            ).fetchall()
        }
    assert kept >= DURABLE, kept
