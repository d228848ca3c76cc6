"""An agent's side of `git blogpub mcp`: the MCP SDK's own client over stdio, starting
`python -m gitpub mcp` in a real clone, as an agent host does from its `mcpServers` entry."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import select
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from testing.fixtures import Blog, article

_WORDS = """
    amber basalt cedar delta ember fjord glacier harbor indigo jasper kestrel lagoon meadow
    nebula orchid prairie quartz raven saffron tundra umber violet willow xenon yarrow zephyr
    anchor beacon canyon dune estuary falcon granite hollow island juniper kelp lantern
    marble nettle oasis pebble quill ridge summit thistle
"""
WORDS = _WORDS.split()


def distinct(title: str, seed: int) -> str:
    """An article no dedup judge would call a near-duplicate of another seed's."""
    rng = random.Random(seed)
    body = " ".join(rng.sample(WORDS, 18)) + f" (article {seed})."
    return article(title, body)


def server_argv(blog: Blog, *extra: str) -> list[str]:
    return [sys.executable, "-m", "gitpub", "-C", str(blog.root), "mcp", *extra]


@asynccontextmanager
async def connect(blog: Blog, *extra: str, errlog: TextIO | None = None) -> AsyncIterator[Agent]:
    """A started, initialized session with a `git blogpub mcp` server on `blog`."""
    argv = server_argv(blog, *extra)
    # The whole environment: the SDK passes only a few variables by default, and the
    # hermetic HOME, git identity and node name must reach the server and its worker.
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with (
        stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        yield Agent(session, init.server_info.name, init.instructions or "")


class Agent:
    def __init__(self, session: ClientSession, name: str, instructions: str) -> None:
        self.session = session
        self.name = name
        self.instructions = instructions

    async def call(self, tool: str, **args: Any) -> CallToolResult:
        return await self.session.call_tool(tool, args, read_timeout_seconds=120)

    async def ok(self, tool: str, **args: Any) -> dict[str, Any]:
        """A successful call's structured result (the client has checked it against the
        tool's output schema)."""
        res = await self.call(tool, **args)
        texts = [c.text for c in res.content if c.type == "text"]
        assert not res.is_error, texts
        assert isinstance(res.structured_content, dict), res
        # For clients that read only text: a line for people, then the same object as JSON.
        assert len(texts) == 2 and "\n" not in texts[0], texts
        assert json.loads(texts[1]) == res.structured_content
        return res.structured_content

    async def refused(self, tool: str, **args: Any) -> str:
        """A tool error's one line."""
        res = await self.call(tool, **args)
        assert res.is_error, res.structured_content
        assert res.structured_content is None
        (text,) = [c.text for c in res.content if c.type == "text"]
        assert "\n" not in text
        return text


def worker_pids(log: Path) -> list[int]:
    """The delivery workers a server said it started, in order."""
    return [int(p) for p in re.findall(r"delivery worker started \(pid (\d+)\)", log.read_text())]


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting for its parent to reap it does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-wire", "version": "1"},
    },
}


class RawWire:
    """`git blogpub mcp` spoken to byte by byte, as a careless or hostile client would: what
    the SDK's client can never send (bytes that are not UTF-8, `\\ud800` escapes, NaN)."""

    def __init__(self, blog: Blog, errlog: Path) -> None:
        self.errlog = errlog.open("wb")
        self.pending = b""
        self.proc = subprocess.Popen(
            server_argv(blog),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errlog,
            env=dict(os.environ),
        )
        self.send(json.dumps(INITIALIZE).encode())
        assert self.answer()["id"] == "init"
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60, after: object = None) -> dict[str, Any]:
        """The next message the server writes (each on one line, as JSON); `after` says
        what was sent before, should none come. Read from the descriptor into a buffer of
        our own: a buffered reader would hide a second line that came with the first from
        `select`."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            assert ready, f"no answer within {timeout:g}s after {after!r}"
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"the server closed its output after {after!r}"
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        found: dict[str, Any] = json.loads(line.decode("utf-8"))
        return found

    def call(self, line: bytes) -> dict[str, Any]:
        self.send(line)
        return self.answer()

    def close(self) -> list[dict[str, Any]]:
        """Close the server's input; every message it still writes before it exits."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        rest = self.pending + self.proc.stdout.read()
        assert self.proc.wait(60) == 0
        self.errlog.close()
        return [json.loads(line) for line in rest.decode("utf-8").splitlines()]


def tool_call(request_id: object, tool: str, arguments: bytes) -> bytes:
    """A `tools/call` line whose arguments are raw bytes (JSON or not, UTF-8 or not)."""
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call"})[:-1]
    return f'{head}, "params": {{"name": "{tool}", "arguments": '.encode() + arguments + b"}}"


class BlockingAgent:
    """An SDK client session kept on an event loop in a thread of its own, called from plain
    code: a hypothesis test is synchronous, and one session serves all its examples."""

    def __init__(self, blog: Blog) -> None:
        self.blog = blog
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self.agent: Agent | None = None
        self.stop: asyncio.Event | None = None
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),))

    async def _main(self) -> None:
        self.stop = asyncio.Event()
        try:
            async with connect(self.blog) as agent:
                self.agent = agent
                self.ready.set()
                await self.stop.wait()
        except BaseException as exc:  # said by __enter__ or __exit__, in the test's thread
            self.failure = exc
            self.ready.set()

    def __enter__(self) -> BlockingAgent:
        self.thread.start()
        assert self.ready.wait(120), "the server did not start"
        if self.failure is not None:
            raise self.failure
        return self

    def call(self, tool: str, args: dict[str, Any]) -> CallToolResult:
        assert self.agent is not None
        call = self.agent.session.call_tool(tool, args, read_timeout_seconds=120)
        return asyncio.run_coroutine_threadsafe(call, self.loop).result(150)

    def __exit__(self, *exc: object) -> None:
        if self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(120)
        self.loop.close()
        if self.failure is not None:
            raise self.failure
