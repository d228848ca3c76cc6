"""The Python API an agent uses instead of fire-and-forget."""

from __future__ import annotations

import asyncio

import pytest
from testing.fixtures import Blog, article, wait_for
from testing.paths import ROOT

from gitpub import Publisher
from gitpub.core.errors import InputError


def test_submit_is_durable_and_idempotent(blog: Blog) -> None:
    pub = Publisher(blog.root)
    text = article("From the API", "Handed over by an agent.")
    first = pub.submit(text, key="req-1")
    again = pub.submit(text, key="req-1")
    assert first.created and not again.created and again.job_id == first.job_id
    # Visible to any other process right away: it is on disk, not in the caller's memory.
    (job,) = blog.status()
    assert job["job_id"] == first.job_id and job["state"] == "RECEIVED"


def test_asubmit_does_not_need_the_caller_to_wait_for_delivery(blog: Blog) -> None:
    pub = Publisher(blog.root)

    async def agent() -> str:
        submitted = await pub.asubmit(article("Async", "Awaited, not ensure_future'd."), key="a")
        return submitted.job_id

    job_id = asyncio.run(agent())
    assert pub.status(job_id)["state"] == "RECEIVED"
    pub.kick()  # a detached worker delivers it after we return
    wait_for(lambda: pub.status(job_id)["state"] == "PUBLISHED", "the detached worker")
    assert blog.commits_with_job(job_id) == 1


def test_api_rejects_bad_input_like_the_cli(blog: Blog) -> None:
    pub = Publisher(blog.root)
    with pytest.raises(InputError, match="empty"):
        pub.submit("   ", key="k")
    with pytest.raises(InputError, match="--target ../x.mdx"):
        pub.submit(article("T", "b"), key="k", target="../x.mdx")
    assert blog.status() == []


def test_status_for_people_groups_and_explains(blog: Blog) -> None:
    ok = blog.submit("ok", article("Fine", "A good article."))
    bad = blog.submit("bad", article("Broken", "<Note>\n\nnever closed\n"))
    blog.ok("run", "--until-idle")
    out = blog.ok("status").stdout
    needs, done = out.split("done")
    assert "needs a person (1):" in needs and bad[:8] in needs
    assert "tag <Note> is never closed" in needs
    assert ok[:8] in done and "PUBLISHED" in done


def test_contrib_agent_example_hands_over_and_the_worker_publishes(blog: Blog) -> None:
    import subprocess
    import sys

    example = ROOT / "contrib" / "agent_example.py"
    out = subprocess.run(
        [sys.executable, str(example), str(blog.root)], capture_output=True, text=True, check=True
    ).stdout
    assert "answered; publication" in out and "RECEIVED" in out
    (job,) = blog.status()
    wait_for(lambda: blog.job(job["job_id"])["job"]["state"] == "PUBLISHED", "the worker")
    assert blog.commits_with_job(job["job_id"]) == 1
