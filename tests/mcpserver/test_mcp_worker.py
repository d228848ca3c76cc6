"""`mcp --worker`: the delivery worker is a child of the server that never outlives it,
and a worker that dies is replaced without the agent's connection noticing."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

from testing.fixtures import Blog, wait_for
from testing.mcphelp import alive, connect, distinct, server_argv, worker_pids


def test_the_worker_stops_when_the_agent_closes_the_server(blog: Blog, tmp_path: Path) -> None:
    log = tmp_path / "server.log"

    async def agent() -> None:
        with log.open("w") as errlog:
            async with connect(blog, "--worker", errlog=errlog) as a:
                wait_for(lambda: worker_pids(log), "the worker to start")
                assert (await a.ok("status"))["jobs"] == []

    asyncio.run(agent())
    (pid,) = worker_pids(log)
    wait_for(lambda: not alive(pid), f"worker {pid} to stop with its server", timeout=15)


def test_the_worker_stops_when_the_server_is_killed(blog: Blog, tmp_path: Path) -> None:
    """SIGKILL leaves the server no time to stop its child: the child notices by itself."""
    log = tmp_path / "server.log"
    with log.open("w") as errlog:
        server = subprocess.Popen(
            server_argv(blog, "--worker"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
        )
        try:
            (pid,) = wait_for(lambda: worker_pids(log), "the worker to start")
            assert alive(pid)
            server.send_signal(signal.SIGKILL)
            server.wait(10)
            wait_for(lambda: not alive(pid), f"orphaned worker {pid} to stop", timeout=15)
        finally:
            for orphan in worker_pids(log):  # only if the property broke: leave nothing behind
                if alive(orphan):
                    os.kill(orphan, signal.SIGKILL)
            if server.poll() is None:
                server.kill()
            assert server.stdin is not None and server.stdout is not None
            server.stdin.close()
            server.stdout.close()
            server.wait()


def test_a_killed_worker_is_replaced_and_jobs_still_publish_once(
    blog: Blog, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    text = distinct("After a worker died", 11)

    async def agent() -> dict:
        with log.open("w") as errlog:
            async with connect(blog, "--worker", "--interval", "0.2", errlog=errlog) as a:
                (first,) = wait_for(lambda: worker_pids(log), "the worker to start")
                os.kill(first, signal.SIGKILL)
                wait_for(lambda: len(worker_pids(log)) == 2, "a new worker", timeout=30)
                job_id = (await a.ok("submit", key="survivor", text=text))["job_id"]
                return await a.ok("wait", job_id=job_id, timeout_s=60)

    done = asyncio.run(agent())
    assert done["job"]["state"] == "PUBLISHED", done
    assert blog.commits_with_job(done["job"]["job_id"]) == 1
    assert "exited -9; starting another" in log.read_text()
    assert not any(alive(pid) for pid in worker_pids(log))
