"""`git blogpub gc`: what finished jobs left behind goes, an unfinished job keeps everything."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from testing.fixtures import CONFIG, Blog, article, git

from gitpub.core.states import State
from gitpub.git.repo import Repo
from gitpub.ops.cleanup import Inventory, JobInfo, plan


def _crash(blog: Blog, point: str) -> None:
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": point})
    assert res.returncode == 137, res.stderr


def _has_ref(blog: Blog, ref: str) -> bool:
    return blog.git("rev-parse", "--verify", "--quiet", ref, check=False) != ""


def _worktree(blog: Blog, job_id: str) -> Path:
    return blog.root / ".git" / "blogpub" / "worktrees" / job_id


def test_gc_removes_finished_jobs_leftovers_and_keeps_everything_of_an_unfinished_job(
    blog: Blog,
) -> None:
    blog.ok("install")  # the job-ref guard is on: gc's deletions must still go through
    done = blog.submit("done", article("Finished", "This one gets all the way to the remote."))
    # Published, but the worker died before removing the job branch (and a job worktree, had
    # the job needed one: job commits are made in memory, a worktree only for fonts or a
    # person's conflict).
    _crash(blog, "after_published_before_cleanup")
    pending = blog.submit("pending", article("Unfinished", "This one is committed, not pushed."))
    _crash(blog, "after_local_committed")
    assert blog.job(done)["job"]["state"] == "PUBLISHED"
    assert blog.job(pending)["job"]["state"] == "LOCAL_COMMITTED"
    for job_id in (done, pending):
        assert _has_ref(blog, f"refs/heads/blogpub/job/{job_id}")
        assert _has_ref(blog, f"refs/blog-jobs/{job_id}")

    out = blog.ok("gc").stdout
    assert f"removed worktree and branch of job {done} (job PUBLISHED)" in out
    assert not _worktree(blog, done).exists()
    assert not _has_ref(blog, f"refs/heads/blogpub/job/{done}")
    assert done not in blog.git("worktree", "list")
    assert _has_ref(blog, f"refs/blog-jobs/{done}")  # finished just now: younger than keep_days
    assert _has_ref(blog, f"refs/heads/blogpub/job/{pending}")
    assert _has_ref(blog, f"refs/blog-jobs/{pending}")
    assert "kept the worktrees, branches and refs of 1 unfinished job(s) (LOCAL_COMMITTED)" in out

    (blog.root / ".blogpub.toml").write_text(CONFIG + "\n[gc]\nkeep_days = 0\n")
    out = blog.ok("gc").stdout
    assert f"removed refs/blog-jobs/{done}" in out
    assert not _has_ref(blog, f"refs/blog-jobs/{done}")
    assert _has_ref(blog, f"refs/blog-jobs/{pending}")
    assert _has_ref(blog, f"refs/heads/blogpub/job/{pending}")

    # What gc kept is what the unfinished job needed: it is delivered as usual.
    blog.ok("run", "--until-idle")
    assert blog.job(pending)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(pending) == 1
    assert f"removed refs/blog-jobs/{pending}" in blog.ok("gc").stdout


def test_gc_removes_orphans_a_job_database_does_not_know(blog: Blog) -> None:
    state = blog.root / ".git" / "blogpub"
    known = blog.submit("known", article("Known", "A job the database knows."))
    orphan = str(uuid.uuid4())
    git(blog.root, "worktree", "add", "--quiet", "-b", f"blogpub/job/{orphan}",
        str(state / "worktrees" / orphan), "HEAD")  # fmt: skip
    stale_folder = state / "jobs" / str(uuid.uuid4())
    fresh_folder = state / "jobs" / str(uuid.uuid4())
    for folder in (stale_folder, fresh_folder):
        folder.mkdir(parents=True)
        (folder / "source.txt").write_text("a submit that died before its row\n")
    hour_ago = time.time() - 7200
    os.utime(stale_folder / "source.txt", (hour_ago, hour_ago))
    os.utime(stale_folder, (hour_ago, hour_ago))
    other = blog.root.parent / "elsewhere"  # a person's own worktree is none of gc's business
    git(blog.root, "worktree", "add", "--quiet", "-b", "mine", str(other), "HEAD")

    out = blog.ok("gc").stdout
    assert f"removed worktree and branch of job {orphan} (no such job)" in out
    assert not (state / "worktrees" / orphan).exists()
    assert not _has_ref(blog, f"refs/heads/blogpub/job/{orphan}")
    assert orphan not in blog.git("worktree", "list")
    assert not stale_folder.exists()
    assert fresh_folder.exists()  # could be a submit in progress
    assert other.is_dir() and str(other) in blog.git("worktree", "list")
    assert _has_ref(blog, "refs/heads/mine")
    assert (state / "jobs" / known).is_dir()
    assert blog.ok("gc").stdout.splitlines()[0] == "gc: nothing to remove"


def test_gc_plan_keeps_what_an_operator_may_still_need(blog: Blog) -> None:
    """REVIEW, CONFLICT and FAILED are terminal only until a person acts (`resolve --continue`
    works in the job worktree): however old, their worktree, branch and ref stay."""
    ids = {state: str(uuid.uuid4()) for state in State}
    long_ago = "2000-01-01T00:00:00.000000Z"
    known = {job_id: JobInfo(state, long_ago) for state, job_id in ids.items()}
    head = blog.git("rev-parse", "HEAD")
    inv = Inventory(
        worktree_dirs=set(ids.values()),
        branches=set(ids.values()),
        refs={job_id: head for job_id in ids.values()},
    )
    p = plan(Repo(blog.root), blog.root / ".git" / "blogpub", inv, known, 30, time.time())
    finished = {ids[State.PUBLISHED], ids[State.SKIPPED]}
    assert set(p.worktrees) == finished
    assert set(p.refs) == finished
    assert set(p.kept) == set(ids.values()) - finished
    assert {ids[State.REVIEW], ids[State.CONFLICT], ids[State.FAILED]} <= set(p.kept)
