"""Workers woken by the store, not by the clock: on the shared store a submission NOTIFYs
in its transaction, and a long-running `run --interval S` waits on that notification with
S as the longest wait, instead of sleeping S between passes. Timeouts here are far longer
than what is measured, so no result rests on a machine's speed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from testing.fixtures import Blog, article, wait_for

from gitpub import intake
from gitpub.context import open_context
from gitpub.store.blogs import blog_identity, schema_name

LONG = 30.0  # a wait this long would fail every test below: only a notification ends it


@pytest.fixture
def shared(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GITPUB_STORE", pg_url)
    return pg_url


def _submit(blog: Blog, key: str) -> str:
    with open_context(blog.root) as ctx:
        job, _ = intake.create(ctx, key=key, source=article(key.title(), f"About {key}."))
    return job.job_id


def test_a_submission_ends_a_waiting_workers_wait(blog: Blog, shared: str) -> None:
    with open_context(blog.root) as waiter:
        assert waiter.store.wait(0.05) is False  # nothing came: the timeout
        woken: list[bool] = []
        thread = threading.Thread(target=lambda: woken.append(waiter.store.wait(LONG)), daemon=True)
        started = time.monotonic()
        thread.start()
        _submit(blog, "wakes")
        thread.join(timeout=LONG / 2)
        assert woken == [True]
        assert time.monotonic() - started < LONG / 2


def test_work_that_came_during_a_pass_ends_the_next_wait_at_once(blog: Blog, shared: str) -> None:
    """A submission while the worker was busy (not waiting) is not lost: the next wait ends
    at once. A burst of them is one wake, not one per submission."""
    with open_context(blog.root) as waiter:
        assert waiter.store.wait(0.01) is False  # listening from here on
        for key in ("first", "second", "third"):
            _submit(blog, key)
        started = time.monotonic()
        assert waiter.store.wait(LONG) is True
        assert time.monotonic() - started < LONG / 2
        assert waiter.store.wait(0.05) is False  # drained: the burst woke it once


def test_a_long_running_worker_publishes_a_submission_without_waiting_its_interval(
    blog: Blog, shared: str
) -> None:
    """`run --interval 30`, started before anything was submitted: the job is published
    long before its interval has passed."""
    node = blog.clone("worker")
    argv = [sys.executable, "-m", "gitpub", "-C", str(node.root), "run", "--interval", str(LONG)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        # Its first pass found nothing; it waits now (its LISTEN is at the wait's start, so
        # give it until the store shows it idle: the submission must end a wait, not a pass).
        channel = schema_name(blog_identity(str(blog.remote), "main"))
        wait_for(lambda: _listening(shared, channel), "the worker to wait for work")
        job_id = _submit(blog, "woken")
        wait_for(
            lambda: blog.job(job_id)["job"]["state"] == "PUBLISHED",
            "the job to be published",
            timeout=LONG / 2,
        )
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert blog.commits_with_job(job_id) == 1


def _listening(pg_url: str, channel: str) -> bool:
    """Whether a session waits on this blog's channel, its LISTEN the last it sent (the
    worker's, the only one here: other tests on the same server listen on their own blogs'
    channels, and may be running at this moment)."""
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'idle' AND query = %s",
            (f"LISTEN {channel}",),
        ).fetchone()
    return bool(row and row[0])


def test_a_holders_own_step_wakes_nobody_and_a_lease_given_up_does(blog: Blog, shared: str) -> None:
    """A job its worker holds cannot be taken by another, so the holder moving it on (ready
    to commit, committed) wakes no waiting worker: each would make a pass for nothing. Once
    the holder gives the lease up on a job that is ready, the waiting workers are woken."""
    from gitpub.core.states import State
    from gitpub.store import jobs, leases

    job_id = _submit(blog, "held")
    with open_context(blog.root) as holder, open_context(blog.root) as waiter:
        waiter.store.wait(0.05)  # it listens from its first wait on
        job = leases.claim(holder.store, job_id, "holder", 60)
        assert job is not None
        for to in (State.PREPARING, State.READY_TO_COMMIT):
            job = jobs.transition(holder.store, job, to, "test:step")
        assert waiter.store.wait(0.5) is False
        leases.release_many(holder.store, [job])
        assert waiter.store.wait(LONG) is True
