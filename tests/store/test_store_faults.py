"""Store faults are named for what they are: a job database on a full filesystem says "disk
full", is left untouched and is never called lost (a rebuild would move its history aside);
a state dir removed under a running worker is noticed at its next pass. Real SQLite on a real
small tmpfs, real git."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from testing.fixtures import Blog, article, make_blog, wait_for


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"a small tmpfs for a full disk cannot be mounted here: {proc.stderr!r}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


def digest(folder: Path) -> dict[str, str]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def test_a_full_disk_is_named_never_lost_and_the_store_is_left_alone(small_disk: Path) -> None:
    blog = make_blog(small_disk)
    job_id = blog.submit("k", article("Full", "Submitted before the disk filled up."))
    state = blog.root / ".git" / "blogpub"
    filler = fill(small_disk)
    before = digest(state)

    for command in (["status"], ["show", job_id], ["run", "--until-idle"]):
        res = blog.blogpub(*command)
        assert res.returncode == 1, res
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
        assert f"job database {state / 'state.sqlite3'}: disk full" in res.stderr, res.stderr
        assert "lost;" not in res.stderr and "--rebuild" not in res.stderr
    doctor = blog.blogpub("doctor")
    line = next(ln for ln in doctor.stdout.splitlines() if " database " in ln)
    assert "disk full" in line and "lost:" not in line, doctor.stdout
    assert "--rebuild" not in doctor.stdout
    refused = blog.blogpub("reconcile", "--rebuild")
    assert refused.returncode == 1 and "disk full" in refused.stderr, refused
    # Nothing moved aside, nothing rewritten (SQLite's own -wal/-shm may have appeared empty).
    after = digest(state)
    kept = {name: h for name, h in after.items() if name in before}
    assert kept == before and not [n for n in after if ".lost-" in n], after

    filler.unlink()
    assert [j["job_id"] for j in blog.status()] == [job_id]  # the history is all there
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1


def _removed(folder: Path) -> bool:
    shutil.rmtree(folder, ignore_errors=True)
    return not folder.exists()


def test_a_state_dir_removed_under_a_running_worker_is_noticed_at_the_next_pass(
    blog: Blog, tmp_path: Path
) -> None:
    log = tmp_path / "worker.err"
    with log.open("w") as err:
        worker = subprocess.Popen(
            [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--interval", "0.3"],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        first = blog.submit("k1", article("First", "Published by the worker."))
        wait_for(lambda: blog.commits_with_job(first) == 1, "the first job on the remote")
        # As `rm -rf` under a process still writing there: what it wrote meanwhile goes too.
        state = blog.root / ".git" / "blogpub"
        wait_for(lambda: _removed(state), "the state dir removed")
        second = blog.submit("k2", article("Second", "Submitted into a new job database."))
        wait_for(lambda: blog.commits_with_job(second) == 1, "the second job on the remote")
        # On the remote first, then confirmed: the state follows within the same pass.
        wait_for(lambda: blog.job(second)["job"]["state"] == "PUBLISHED", "its confirmation")
        assert worker.poll() is None, log.read_text()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    said = log.read_text()
    assert said.count("state.sqlite3 was removed or replaced; reopened") == 1, said
