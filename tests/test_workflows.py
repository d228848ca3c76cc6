"""Publishing workflows people run: a post scheduled for later (`submit --at`), and review
before publish (`[publish] review`, `submit --review`), each on a real bare remote."""

from __future__ import annotations

import time
from datetime import datetime

from conftest import Blog, article, wait_for


def due_time(job: dict[str, object]) -> float:
    stamp = str(job["scheduled_at"])
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_a_scheduled_post_waits_then_publishes(blog: Blog) -> None:
    before = blog.remote_log()
    text = article("Later", "Written now, published in a moment.")
    submitted = time.time()
    job_id = blog.submit("later", text, "--at", "+4s")
    # Nothing is due: the worker returns at once, leaving the job to wait for its time.
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert job["state"] == "SCHEDULED"
    assert submitted + 3.5 < due_time(job) <= time.time() + 4
    assert blog.remote_log() == before  # nothing reached the remote
    assert "scheduled for" in blog.ok("status").stdout

    wait_for(lambda: time.time() >= due_time(job), "the scheduled time")
    blog.ok("run", "--until-idle")
    done = blog.job(job_id)
    assert done["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    assert len(blog.remote_log()) == len(before) + 1
    steps = [e["step"] for e in done["events"]]
    assert steps[:2] == ["submit", "schedule:due"]


def test_the_worker_loop_publishes_a_scheduled_post_within_one_interval(blog: Blog) -> None:
    import subprocess
    import sys

    job_id = blog.submit("loop", article("Loop", "Published by the running worker."), "--at", "+2s")
    worker = subprocess.Popen(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--interval", "0.5"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: blog.job(job_id)["job"]["state"] == "PUBLISHED", "the post published", 30)
    finally:
        worker.terminate()
        worker.wait(10)
    assert blog.commits_with_job(job_id) == 1


def test_retry_publishes_a_scheduled_post_now_and_abandon_drops_it(blog: Blog) -> None:
    now_id = blog.submit("now", article("Now", "Not worth waiting for."), "--at", "+3d")
    never_id = blog.submit("never", article("Never", "Changed my mind."), "--at", "+3d")
    blog.ok("retry", now_id)
    blog.ok("resolve", never_id, "--abandon")
    blog.ok("run", "--until-idle")
    assert blog.job(now_id)["job"]["state"] == "PUBLISHED"
    assert blog.job(never_id)["job"]["state"] == "SKIPPED"
    assert blog.commits_with_job(never_id) == 0


def test_an_iso_time_with_an_offset_is_the_same_instant_anywhere(blog: Blog) -> None:
    job_id = blog.submit("iso", article("Iso", "Christmas."), "--at", "2099-12-24T08:00:00+01:00")
    job = blog.job(job_id)["job"]
    assert job["state"] == "SCHEDULED"
    assert job["scheduled_at"].startswith("2099-12-24T07:00:00")


def test_a_bad_time_is_one_line_and_records_nothing(blog: Blog) -> None:
    src = blog.root.parent / "bad.mdx"
    src.write_text(article("Bad", "Never recorded."))
    for when in ("tomorrow", "2099-12-24T08:00", "+3x"):
        res = blog.blogpub("submit", "--key", "bad", "--source", str(src), "--at", when)
        assert res.returncode == 1, res
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("git blogpub: --at ")
        assert "Traceback" not in res.stderr
    assert not (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()
