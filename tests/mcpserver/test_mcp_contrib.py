"""contrib/mcp/: the `mcpServers` entry starts a server an agent can publish through, as
written (only the blog's path filled in)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client
from testing.fixtures import Blog
from testing.mcphelp import distinct
from testing.paths import ROOT

ENTRY = ROOT / "contrib" / "mcp" / "mcp-servers.json"
PLACEHOLDER = "/path/to/your/blog"


def test_the_example_entry_starts_a_server_that_publishes(blog: Blog) -> None:
    entry = json.loads(ENTRY.read_text())["mcpServers"]["blog"]
    assert PLACEHOLDER in entry["args"] and "--worker" in entry["args"]
    args = [str(blog.root) if a == PLACEHOLDER else a for a in entry["args"]]
    # As a host starts it: its own env entries over the environment; `git blogpub` is this
    # interpreter's console script, as after `pip install`.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, **entry["env"]}
    params = StdioServerParameters(command=entry["command"], args=args, env=env)
    text = distinct("Through the example entry", 31)

    async def agent() -> dict:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            sent = await session.call_tool("submit", {"key": "contrib", "text": text})
            assert not sent.is_error, sent.content
            job_id = sent.structured_content["job_id"]  # type: ignore[index]
            done = await session.call_tool("wait", {"job_id": job_id, "timeout_s": 60})
            assert not done.is_error, done.content
            return done.structured_content  # type: ignore[return-value]

    done = asyncio.run(agent())
    assert done["job"]["state"] == "PUBLISHED", done
    assert blog.remote_file(done["job"]["target_path"]) == text.encode("utf-8")
    trailers = blog.remote_git("log", "-1", "--format=%(trailers:key=Blog-Writer-Node)", "main")
    assert trailers == f"Blog-Writer-Node: {entry['env']['GITPUB_NODE']}"
