"""The MCP server over stdio, built on the official SDK's low-level `Server`.

The low-level server rather than the decorator one: the tools' schemas are written out in
`tools.py` (exactly the fields, which are required, `show`'s one-of-two) instead of being
derived from Python signatures, and every answer is built here, both as text and as
structured content. Each call runs in a worker thread, so a slow call (a dry run's font
gate, a `wait`) never holds up the calls of the same agent or of the others."""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import cast

import anyio
import anyio.to_thread
import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from gitpub.core.errors import GitpubError, one_line
from gitpub.mcpserver import calls, tools, wire
from gitpub.scan.sanitize import sanitize
from gitpub.store.errors import StoreError

INSTRUCTIONS = (
    "gitpub publishes articles into this git-backed blog durably: `submit` records a job "
    "(safe to retry with the same key), a worker commits and pushes it, and `wait` tells you "
    "when it is live (PUBLISHED, with its target path and remote commit) or why it stopped. "
    "Use `dry_run` to preview, `status` and `show` to look around. Never pass `allow` "
    "unless your user confirmed the finding is not a secret."
)

POLL = 0.25
"""Seconds between two looks at a job in `wait`: one indexed read of the store each."""

_VALIDATORS = {name: Draft202012Validator(schema) for name, schema in tools.INPUT.items()}


def refusal(exc: BaseException) -> str:
    """The one line the CLI would print for this failure (without its `git blogpub: `)."""
    return one_line(_refusal(exc))


def _refusal(exc: BaseException) -> str:
    if isinstance(exc, GitpubError):
        return sanitize(exc.message)
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return sanitize(f"{exc.strerror or exc}{where}")
    if isinstance(exc, StoreError):
        return sanitize(f"job database: {exc} (`git blogpub doctor` says how to recover it)")
    return sanitize(
        f"internal error: {type(exc).__name__}: {exc} (the traceback is in the server's log)"
    )


def not_finite(args: Mapping[str, object]) -> str | None:
    """The argument (`timeout_s`, `assets/0/…`) holding NaN or an infinity, if any."""
    stack: list[tuple[object, str]] = [(args, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return where
        if isinstance(value, dict):
            stack.extend((v, f"{where}/{k}" if where else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(value))
    return None


def _error(line: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=line)], is_error=True)


def _answer(summary: str, data: Mapping[str, object]) -> types.CallToolResult:
    """A line for people, the object as JSON text (for clients that read only text, as the
    protocol asks), and the same object as structured content."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text=sanitize(summary)),
            types.TextContent(type="text", text=text),
        ],
        structured_content=dict(data),
    )


def _summary(name: str, data: Mapping[str, object]) -> str:
    """The line for people about a tool's answer (`data` is what the tool `name` answers)."""
    if name == "submit":
        made = cast(calls.Submitted, data)
        how = "created" if made["created"] else "existing job for this key"
        return f"{made['job_id']} {made['state']} ({how})"
    if name == "status":
        listed = cast(calls.Listed, data)
        return f"{len(listed['jobs'])} job(s) listed, {listed['unlisted']} finished not listed"
    if name == "show":
        shown = cast(calls.Shown, data)
        job = shown["job"]
        return f"{job['job_id']} {job['state']}, {len(shown['events'])} event(s)"
    if name == "dry_run":
        seen = cast(calls.Previewed, data)
        why = f": {seen['reason']}" if seen.get("reason") else ""
        return f"{seen['outcome']} ({seen['meaning']}){why}; target {seen['target'] or '-'}"
    waited = cast(calls.Waited, data)
    job, final = waited["job"], waited["final"]
    if job["state"] == "PUBLISHED":
        return f"{job['job_id']} PUBLISHED: {job['target_path']} at {job['remote_commit']}"
    if job["state"] == "SKIPPED":
        return f"{job['job_id']} SKIPPED: nothing to publish (`show` says why)"
    if final:
        code = f" ({job['failure_code']})" if job.get("failure_code") else ""
        return f"{job['job_id']} {job['state']}{code}: a person must act (`show` says why)"
    return f"{job['job_id']} still {job['state']} after {waited['waited_s']:g}s; wait again"


class Door:
    """The tools of one server process on one repository."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def list_tools(
        self, ctx: ServerRequestContext[object], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=name,
                    description=tools.DESCRIPTION[name],
                    input_schema=tools.INPUT[name],
                    output_schema=tools.OUTPUT[name],
                    annotations=types.ToolAnnotations(
                        read_only_hint=name != "submit",
                        destructive_hint=False,
                        idempotent_hint=True,
                        open_world_hint=False,
                    ),
                )
                for name in tools.NAMES
            ]
        )

    async def call_tool(
        self, ctx: ServerRequestContext[object], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name, args = params.name, dict(params.arguments or {})
        if name not in _VALIDATORS:
            # Not the tool's failure but the call's: a protocol error, as the spec asks.
            known = ", ".join(tools.NAMES)
            raise MCPError(types.INVALID_PARAMS, sanitize(f"no tool {name!r} (tools: {known})"))
        odd = not_finite(args)
        if odd is not None:
            # NaN compares false with every bound, so the schema alone would let it through
            # (`wait` would never return); another transport than ours may carry one.
            return _error(sanitize(f"{name}: {odd}: must be a finite number"))
        wrong = best_match(_VALIDATORS[name].iter_errors(args))
        if wrong is not None:
            where = "/".join(str(p) for p in wrong.absolute_path) or "arguments"
            # A rule of the whole object (show's one of two) is said in the schema's words.
            said = wrong.schema.get("description") if not wrong.absolute_path else None
            why = said if isinstance(said, str) and said else wrong.message
            return _error(sanitize(f"{name}: {where}: {why}"))
        data: Mapping[str, object]
        try:
            if name == "wait":
                data = await self.wait(ctx, args["job_id"], float(args["timeout_s"]))
            else:
                call = getattr(calls, name)
                data = await anyio.to_thread.run_sync(partial(call, self.root, args))
        except Exception as exc:  # every failure is the agent's to read, as one line
            if os.environ.get("GITPUB_DEBUG"):
                raise
            line = refusal(exc)
            if not isinstance(exc, (GitpubError, OSError, StoreError)):
                # A bug: its traceback, sanitized, to stderr, which the host keeps as the
                # server's log; the agent gets the one line and the server serves on.
                trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
                sys.stderr.write(f"git blogpub: mcp {name}: {line}\n{sanitize(trace)}")
            return _error(line)
        return _answer(_summary(name, data), data)

    async def wait(
        self, ctx: ServerRequestContext[object], job_id: str, timeout_s: float
    ) -> calls.Waited:
        """Look at the job until it is final or the time is up; the loop sleeps between
        looks, so a long wait costs nothing while other calls go on. A client that asked for
        progress hears each state the job passes through (seconds waited out of timeout_s)."""
        start, said = time.monotonic(), None
        while True:
            job, final = await anyio.to_thread.run_sync(calls.job, self.root, job_id)
            waited = time.monotonic() - start
            if job["state"] != said:  # a no-op unless the client asked for progress
                said = job["state"]
                message = f"{job['job_id']} {said}"
                await ctx.session.report_progress(round(waited, 3), timeout_s, message)
            if final or waited >= timeout_s:
                return {"job": job, "final": final, "waited_s": round(waited, 3)}
            await anyio.sleep(min(POLL, timeout_s - waited))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("git-blogpub")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return ""


def build(root: Path) -> Server[object]:
    door = Door(root)
    return Server(
        "gitpub",
        version=_version(),
        title="gitpub: durable publication into a git-backed blog",
        instructions=INSTRUCTIONS,
        on_list_tools=door.list_tools,
        on_call_tool=door.call_tool,
    )


async def serve(root: Path) -> None:
    """Serve one client on standard input and output until it closes them. The wire is read
    and written by `wire` (strictly: nothing replaced, every request answered); the SDK's
    server session gets only the messages that passed. While serving, descriptors 0 and 1
    point elsewhere, so nothing a step or a git child prints can reach the protocol stream."""
    server = build(root)
    pipes = wire.streams()
    with wire.claimed_stdio() as (inp, out):
        link = wire.Wire(inp, out, pipes)
        async with anyio.create_task_group() as tg:
            tg.start_soon(link.read)
            tg.start_soon(link.write)
            await server.run(pipes.from_wire, pipes.to_wire, server.create_initialization_options())
