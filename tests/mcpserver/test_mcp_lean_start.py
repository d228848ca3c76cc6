"""The MCP SDK is heavy to import (pydantic, anyio, starlette, jsonschema: seconds on a busy
machine); only `git blogpub mcp` may pay for it. The commands an agent or a hook runs by the
hundred — `submit`, `status` — and the worker never import it, read from `-X importtime`."""

from __future__ import annotations

import os
import subprocess
import sys

from testing.fixtures import Blog, article

SDK = {"mcp", "mcp_types", "anyio", "pydantic", "starlette", "jsonschema", "httpx"}


def imported(blog: Blog, *args: str, stdin: str | None = None) -> set[str]:
    """The top-level names of every module the command imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitpub", "-C", str(blog.root), *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "gitpub" in names  # the report was there to read
    return names


def test_submit_status_and_run_leave_the_sdk_out(blog: Blog) -> None:
    text = article("Lean", "No SDK on this path.")
    assert not imported(blog, "submit", "--key", "lean", "--source", "-", stdin=text) & SDK
    assert not imported(blog, "status", "--json") & SDK
    assert not imported(blog, "run", "--until-idle") & SDK
    assert not imported(blog, "show", "--key", "lean", "--json") & SDK
    # …and the server does import it (it serves until its stdin ends: here at once).
    assert {"mcp", "anyio", "jsonschema"} <= imported(blog, "mcp")
