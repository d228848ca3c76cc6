"""`git blogpub doctor`: each planted fault is reported with its fix; a healthy blog passes."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from testing.fixtures import Blog, article, git

from gitpub.core import crash
from gitpub.ops import doctor

HOLD = """
import sys, time, filelock
lock = filelock.FileLock(sys.argv[1], thread_local=False)
lock.acquire()
print("held", flush=True)
time.sleep(300)
"""


@pytest.fixture
def healthy(blog: Blog) -> Blog:
    blog.ok("install")
    blog.submit("first", article("Gardening", "Tomatoes need sun, water and patience."))
    blog.ok("run", "--until-idle")
    return blog


def _problems(blog: Blog) -> list[doctor.Finding]:
    return [f for f in doctor.diagnose(blog.root).findings if f.status == "problem"]


def _state(blog: Blog) -> Path:
    return blog.root / ".git" / "blogpub"


def test_doctor_passes_a_healthy_blog_and_lists_the_crash_points(healthy: Blog) -> None:
    res = healthy.blogpub("doctor")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PROBLEM" not in res.stdout
    report = healthy.ok("doctor", "--json").json()
    assert report["ok"] is True and report["problems"] == 0
    assert report["crash_points"] == list(crash.POINTS)
    checks = {f["check"] for f in report["findings"]}
    assert {"git", "repository", "config", "secrets", "hooks", "state dir", "database"} <= checks
    # Which secret ruleset guards this blog, and its version.
    assert report["ruleset"]["rules"] > 300
    assert "gitleaks v8.30.0" in report["ruleset"]["version"]
    assert "ruleset gitleaks" in res.stdout
    assert {"locks", "leases", "worktrees", "job refs"} <= checks


def test_doctor_on_a_fresh_clone_says_to_install_the_hooks_and_creates_nothing(
    blog: Blog,
) -> None:
    res = blog.blogpub("doctor")
    assert res.returncode == 1
    assert "post-commit is not installed" in res.stdout
    assert "fix: git blogpub install" in res.stdout
    assert res.stderr.strip() == "git blogpub: doctor: 2 problem(s) found"
    assert not _state(blog).exists()
    outside = blog.blogpub("-C", str(blog.root.parent), "doctor", "--json")
    assert outside.returncode == 1
    assert outside.json()["findings"][-1]["message"].endswith("not inside a git repository")


# ------------------------------------------------------------------ planted faults, one by one


def _hook_missing(blog: Blog) -> Iterator[list[str]]:
    hook = blog.root / ".git" / "hooks" / "post-commit"
    kept = hook.read_bytes()
    hook.unlink()
    yield []
    hook.write_bytes(kept)
    hook.chmod(0o755)


def _hook_outdated(blog: Blog) -> Iterator[list[str]]:
    hook = blog.root / ".git" / "hooks" / "reference-transaction"
    kept = hook.read_bytes()
    hook.write_bytes(kept.replace(b"version 2", b"version 0"))
    yield []
    hook.write_bytes(kept)


def _corrupt_database(blog: Blog) -> Iterator[list[str]]:
    db = _state(blog) / "state.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    kept = db.read_bytes()
    copy = db.with_name("copy.sqlite3")
    copy.write_bytes(kept)
    with copy.open("r+b") as fh:  # garbage over the second page and beyond
        fh.seek(4096 + 8)
        fh.write(b"\xff" * 6000)
    os.replace(copy, db)
    yield []
    db.write_bytes(kept)


def _stale_lock(blog: Blog) -> Iterator[list[str]]:
    lock = _state(blog) / "locks" / "delivery.lock"
    assert lock.is_file()
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield [f"held by pid {proc.pid}", "not a gitpub process", f"kill {proc.pid}"]
    finally:
        proc.kill()
        proc.wait()


def _orphan_worktree(blog: Blog) -> Iterator[list[str]]:
    orphan = str(uuid.uuid4())
    path = _state(blog) / "worktrees" / orphan
    git(blog.root, "worktree", "add", "--quiet", "-b", f"blogpub/job/{orphan}", str(path), "HEAD")
    yield [orphan]
    assert f"removed worktree and branch of job {orphan}" in blog.ok("gc").stdout


def _stale_lease(blog: Blog) -> Iterator[list[str]]:
    blog.submit("second", article("Sailing", "Reefing early keeps the boat upright."))
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_draft"})
    assert res.returncode == 137
    yield []
    blog.ok("run", "--until-idle")


def _ref_without_job(blog: Blog) -> Iterator[list[str]]:
    ref = f"refs/blog-jobs/{uuid.uuid4()}"
    git(blog.root, "update-ref", ref, "HEAD")
    yield [ref]
    git(blog.root, "update-ref", "-d", ref, env={"GITPUB_WRITER": "1"})


def _half_made_worktree(blog: Blog) -> Iterator[list[str]]:
    """What a kill inside a person's `git worktree add` leaves: HEAD of zeros, "initializing"."""
    path = blog.root.parent / "side"
    git(blog.root, "worktree", "add", "--quiet", "--detach", str(path), "HEAD")
    admin = blog.root / ".git" / "worktrees" / "side"
    (admin / "HEAD").write_text("0" * 40 + "\n")
    (admin / "locked").write_text("initializing")
    yield [str(path), f"rm -rf {admin}"]
    shutil.rmtree(admin)
    shutil.rmtree(path)


def _job_ref_at_missing_object(blog: Blog) -> Iterator[list[str]]:
    """What a `git gc --prune=now` racing a job commit leaves: its ref names nothing."""
    job_id = blog.status()[0]["job_id"]
    ref = blog.root / ".git" / "refs" / "blog-jobs" / job_id
    kept = ref.read_text()
    ref.write_text("1" * 40 + "\n")
    yield [f"refs/blog-jobs/{job_id}"]
    ref.write_text(kept)


FAULTS: list[tuple[Callable[[Blog], Iterator[list[str]]], str, str, str]] = [
    (_hook_missing, "hooks", "post-commit is not installed", "git blogpub install"),
    (_hook_outdated, "hooks", "from another gitpub version", "git blogpub install"),
    (_corrupt_database, "database", "state.sqlite3: ", ".recover"),
    (_stale_lock, "locks", "the delivery lock is held by pid", "kill "),
    (_orphan_worktree, "worktrees", "jobs the database does not know", "git blogpub gc"),
    (_stale_lease, "leases", "a process that no longer runs", "git blogpub run --until-idle"),
    (_ref_without_job, "job refs", "whose job is not in the database", "git blogpub gc"),
    (_half_made_worktree, "wedges", "half-made worktree", "git worktree prune"),
    (_job_ref_at_missing_object, "wedges", "job refs at missing objects", "made again"),
]


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="lock holders need /proc/locks")
def test_doctor_reports_each_planted_fault_with_its_fix(healthy: Blog) -> None:
    assert _problems(healthy) == []
    for plant, check, message, hint in FAULTS:
        undo = plant(healthy)
        extra = next(undo)
        found = _problems(healthy)
        assert len(found) == 1, (plant.__name__, found)
        assert found[0].check == check, plant.__name__
        assert message in found[0].message, (plant.__name__, found[0])
        assert found[0].hint and hint in found[0].hint, (plant.__name__, found[0])
        for text in extra:
            assert text in f"{found[0].message} {found[0].hint}", (plant.__name__, found[0])
        next(undo, None)
        assert _problems(healthy) == [], plant.__name__

    # Through the command line: two faults at once, each with its fix, and exit 1.
    undo_hook, undo_lock = _hook_missing(healthy), _stale_lock(healthy)
    next(undo_hook)
    pid = next(undo_lock)[0].split()[-1]
    res = healthy.blogpub("doctor")
    next(undo_hook, None), next(undo_lock, None)
    assert res.returncode == 1
    assert "PROBLEM  hooks      post-commit is not installed" in res.stdout
    assert "fix: git blogpub install" in res.stdout
    assert f"fix: see what it is with `ps -o pid,etime,args -p {pid}`" in res.stdout
    assert res.stderr.strip() == "git blogpub: doctor: 2 problem(s) found"
    assert healthy.blogpub("doctor").returncode == 0


def test_doctor_reports_a_job_going_round_in_circles_until_it_ends_in_review(
    tmp_path: Path,
) -> None:
    """A failure that is not known to repeat (the job folder's steps/ is a file) is tried once
    per pass; doctor names the job meanwhile; after max_attempts it ends in REVIEW."""
    from testing.fixtures import CONFIG, make_blog

    config = CONFIG.replace("max_attempts = 4", "max_attempts = 9") + "lease_seconds = 0.5\n"
    blog = make_blog(tmp_path, config)
    job_id = blog.submit("k", article("Circles", "The job folder is in the way."))
    (_state(blog) / "jobs" / job_id / "steps").write_text("not a folder")
    res = blog.blogpub("run", "--until-idle")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "File exists" in res.stderr
    # Built-in steps commit with the outcome: a prepare that fails is still RECEIVED.
    assert blog.job(job_id)["job"]["state"] == "RECEIVED"
    time.sleep(0.6)
    found = [f for f in _problems(blog) if f.check == "jobs"]
    assert len(found) == 1 and job_id in found[0].message, found
    assert "worker errors" in found[0].message and "File exists" in found[0].message
    assert found[0].hint and f"git blogpub show {job_id}" in found[0].hint
    for _ in range(8):
        blog.ok("run", "--until-idle")
        if blog.job(job_id)["job"]["state"] not in ("RECEIVED", "PREPARING"):
            break
    shown = blog.job(job_id)
    errors = [e for e in shown["events"] if e["step"] == "worker:error"]
    assert len(errors) == 9  # max_attempts tries, then an explicit state
    assert shown["job"]["state"] == "REVIEW" and shown["job"]["failure_code"] == "filesystem"
    assert [f for f in _problems(blog) if f.check == "jobs"] == []


def test_doctor_says_which_validation_runs_and_where_the_mdx_compiler_is(
    blog: Blog, tmp_path: Path
) -> None:
    from gitpub.config import load
    from gitpub.ops.doctor.report import Report
    from gitpub.ops.doctor.validation import check_validation

    compiler = tmp_path / "mdx-validate"
    (compiler / "node_modules" / "@mdx-js" / "mdx").mkdir(parents=True)
    (compiler / "node_modules" / "@mdx-js" / "mdx" / "package.json").write_text("{}")
    (compiler / "validate.mjs").write_text("")
    report = Report()
    check_validation(report, load(blog.root), compiler)
    lines = [f.message for f in report.findings]
    assert lines[0].startswith("builtin:mdx: ")
    if shutil.which("node"):
        assert lines[1].startswith("Node and the MDX compiler are here")
        assert str(compiler / "validate.mjs") in lines[1]
    (blog.root / ".blogpub.toml").write_text(
        (blog.root / ".blogpub.toml").read_text() + '\n[steps]\nvalidate = ["no-such-validator"]\n'
    )
    report = Report()
    check_validation(report, load(blog.root), compiler)
    assert [(f.status, f.message) for f in report.findings] == [
        ("problem", "the validate command 'no-such-validator' is not found")
    ]
