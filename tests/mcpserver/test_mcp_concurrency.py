"""Several agents, several servers, one clone: the same store, the same locks, and keys
that mean one request whichever server hears them."""

from __future__ import annotations

import asyncio
from typing import Any

from testing.fixtures import Blog
from testing.mcphelp import Agent, connect, distinct

PER_SERVER = 10


def texts(prefix: str) -> dict[str, str]:
    seeds = {"a": 100, "b": 200}
    return {
        f"{prefix}-{i}": distinct(f"Post {prefix} {i}", seeds[prefix] + i)
        for i in range(PER_SERVER)
    }


def test_two_servers_with_ten_keys_each_publish_twenty_jobs_once(blog: Blog) -> None:
    """Two servers, each with its own worker, take ten keys each at once — and each also
    hears the other's ten, as an agent retrying through another server would: twenty jobs,
    each created once, each published in exactly one commit."""
    own = {"a": texts("a"), "b": texts("b")}

    async def submit_all(agent: Agent, mine: str, other: str) -> list[dict[str, Any]]:
        calls = [agent.ok("submit", key=k, text=t) for k, t in own[mine].items()]
        calls += [agent.ok("submit", key=k, text=t) for k, t in own[other].items()]
        return list(await asyncio.gather(*calls))

    async def server(mine: str, other: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with connect(blog, "--worker", "--interval", "0.5") as agent:
            answers = await submit_all(agent, mine, other)
            ids = sorted({a["job_id"] for a in answers})
            done = await asyncio.gather(
                *(agent.ok("wait", job_id=job_id, timeout_s=240) for job_id in ids)
            )
            return answers, list(done)

    async def both() -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
        return list(await asyncio.gather(server("a", "b"), server("b", "a")))

    (answers_a, done_a), (answers_b, done_b) = asyncio.run(both())
    answers = answers_a + answers_b
    assert len(answers) == 4 * PER_SERVER
    created = [a["job_id"] for a in answers if a["created"]]
    assert len(created) == len(set(created)) == 2 * PER_SERVER  # one creation per key
    assert {a["job_id"] for a in answers} == set(created)
    # Both servers agree on which job each key is.
    by_key_a = {k: a["job_id"] for k, a in zip([*own["a"], *own["b"]], answers_a, strict=True)}
    by_key_b = {k: a["job_id"] for k, a in zip([*own["b"], *own["a"]], answers_b, strict=True)}
    assert by_key_a == by_key_b

    for done in done_a + done_b:
        assert done["final"] and done["job"]["state"] == "PUBLISHED", done
    jobs = {j["job_id"]: j for j in blog.ok("status", "--json", "--all").json()["jobs"]}
    assert set(jobs) == set(created)
    for key, job_id in by_key_a.items():
        assert jobs[job_id]["idempotency_key"] == key
        assert blog.commits_with_job(job_id) == 1
        text = (own["a"] | own["b"])[key]
        assert blog.remote_file(jobs[job_id]["target_path"]) == text.encode("utf-8")
