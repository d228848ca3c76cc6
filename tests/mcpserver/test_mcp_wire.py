"""The wire itself, spoken byte by byte: what the SDK's client can never send — bytes that are
not UTF-8, `\\ud800` escapes, NaN — gets one JSON-RPC error answer naming the problem, with
the request's id; nothing is replaced, nothing is recorded, and the server serves on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from testing.fixtures import Blog, article
from testing.mcphelp import RawWire, tool_call

LATIN1 = article("Café crème", "Un café crème, s'il vous plaît.").encode("latin-1")


def jobs_on_disk(blog: Blog) -> list[str]:
    folder = blog.root / ".git" / "blogpub" / "jobs"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def wire(blog: Blog, tmp_path: Path) -> RawWire:
    return RawWire(blog, tmp_path / "server.log")


def _error(answer: dict, request_id: object) -> str:
    assert answer["id"] == request_id, answer
    assert "result" not in answer, answer
    message: str = answer["error"]["message"]
    assert "\n" not in message
    return message


def test_a_lone_surrogate_anywhere_gets_an_answer_naming_it(blog: Blog, wire: RawWire) -> None:
    said = _error(wire.call(tool_call(1, "show", b'{"key": "\\ud800"}')), 1)
    assert said == "params/arguments/key: a lone surrogate (\\ud800-\\udfff) is not Unicode text"
    text = json.dumps(article("Half", "A low half \udc00 alone."))
    said = _error(
        wire.call(tool_call("s", "submit", b'{"key": "k", "text": ' + text.encode() + b"}")), "s"
    )
    assert said.startswith("params/arguments/text: a lone surrogate")
    # In a key of the arguments, and in the id itself (then nobody can be answered by id).
    assert _error(wire.call(tool_call(3, "show", b'{"\\udfff": "x"}')), 3).startswith(
        "a key in params/arguments: a lone surrogate"
    )
    assert _error(wire.call(b'{"jsonrpc": "2.0", "id": "\\ud83d", "method": "ping"}'), None)
    # The server serves on, and recorded nothing.
    assert wire.call(b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}') == {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {},
    }
    assert wire.close() == []
    assert jobs_on_disk(blog) == []


def test_bytes_that_are_not_utf8_are_refused_never_replaced(blog: Blog, wire: RawWire) -> None:
    text = json.dumps(LATIN1.decode("latin-1"), ensure_ascii=False).encode("latin-1")
    said = _error(wire.call(tool_call(1, "submit", b'{"key": "cafe", "text": ' + text + b"}")), 1)
    assert said.startswith("the message is not UTF-8 (byte 0xe9 at offset ")
    assert "nothing is replaced" in said
    # The same article as UTF-8 is published byte for byte.
    good = json.dumps(LATIN1.decode("latin-1"), ensure_ascii=False).encode("utf-8")
    done = wire.call(tool_call(2, "submit", b'{"key": "cafe", "text": ' + good + b"}"))
    job = done["result"]["structuredContent"]
    assert job["created"] is True
    source = blog.root / ".git" / "blogpub" / "jobs" / job["job_id"] / "source.txt"
    assert source.read_bytes() == LATIN1.decode("latin-1").encode("utf-8")
    assert "\ufffd" not in source.read_text("utf-8")
    assert wire.close() == []
    assert jobs_on_disk(blog) == [job["job_id"]]


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e400"])
def test_wait_with_a_number_no_double_holds_is_refused_at_once(
    wire: RawWire, number: bytes
) -> None:
    said = _error(
        wire.call(tool_call(7, "wait", b'{"job_id": "abcd1234", "timeout_s": ' + number + b"}")),
        7,
    )
    assert said.startswith("the message is not JSON: ")
    assert number.decode().lstrip("-") in said
    wire.close()


def test_a_line_that_is_no_message_is_answered_with_id_null(wire: RawWire) -> None:
    assert _error(wire.call(b"garbage"), None).startswith("the message is not JSON: ")
    assert _error(wire.call(b"[1, 2]"), None).startswith("not a JSON-RPC 2.0 message")
    assert _error(wire.call(b'{"jsonrpc": "2.0", "id": 4, "method": 5}'), 4).startswith(
        "not a JSON-RPC 2.0 message"
    )
    assert _error(wire.call(b"[" * 100_000), None) == "the message is not JSON: nested too deeply"


def test_a_bad_notification_is_logged_not_answered(tmp_path: Path, wire: RawWire) -> None:
    wire.send(
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"r": "\\ud800"}}'
    )
    assert wire.call(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')["id"] == 1
    assert wire.close() == []
    log = (tmp_path / "server.log").read_text()
    assert "dropped a message: params/r: a lone surrogate" in log


def test_every_request_gets_exactly_one_answer_even_after_the_client_hung_up(
    blog: Blog, wire: RawWire
) -> None:
    """A client that writes its requests, closes its side and then reads (`printf … | git
    blogpub mcp`) still hears every answer: one per request, a submit's included."""
    lines = [
        tool_call(
            1, "submit", b'{"key": "late", "text": ' + json.dumps("# Late\n").encode() + b"}"
        ),
        tool_call(2, "show", b'{"key": "\\ud800"}'),
        tool_call(3, "status", b"{}"),
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}',
        tool_call(5, "wait", b'{"job_id": "abcd1234", "timeout_s": NaN}'),
        b'{"jsonrpc": "2.0", "id": 6, "method": "ping"}',
    ]
    for line in lines:
        wire.send(line)
    answers = wire.close()
    assert sorted(a["id"] for a in answers) == [1, 2, 3, 4, 5, 6]
    first = next(a for a in answers if a["id"] == 1)
    assert first["result"]["structuredContent"]["created"] is True
    assert len(jobs_on_disk(blog)) == 1


def test_a_key_holding_a_credential_is_never_repeated(blog: Blog) -> None:
    """`show` by a key that is a credential assignment: the refusal names the key redacted, in
    the tool error and on the CLI's stderr alike (the store may not even exist yet)."""
    import asyncio

    from testing.mcphelp import connect

    key = "password=Rk4Tn8vQ2zLm"

    async def agent() -> list[str]:
        async with connect(blog) as a:
            before = await a.refused("show", key=key)
            await a.ok("submit", key="other", text=article("Other", "Some other post."))
            return [before, await a.refused("show", key=key)]

    lines = asyncio.run(agent())
    for json_flag in ((), ("--json",)):
        res = blog.blogpub("show", "--key", key, *json_flag)
        assert res.returncode == 1
        lines.append(res.stderr)
    for line in lines:
        assert "Rk4Tn8vQ2zLm" not in line and "password=[REDACTED" in line, line


def test_an_asset_over_the_bound_is_refused_before_it_is_decoded(blog: Blog) -> None:
    """20 MB through MCP: the size is read off the base64 text, nothing is decoded or kept."""
    import asyncio
    import base64

    from testing.mcphelp import connect

    big = base64.b64encode(bytes(20 * 1024 * 1024)).decode()

    async def agent() -> str:
        async with connect(blog) as a:
            return await a.refused(
                "submit",
                key="big",
                text=article("Big", "A big picture."),
                assets=[{"path": "big.png", "content_base64": big}],
            )

    said = asyncio.run(agent())
    assert said == (
        "asset 'big.png' for key 'big': over the limit of 10485760 bytes (publish.max_asset_bytes)"
    )
    assert jobs_on_disk(blog) == []


def test_an_answer_no_utf8_can_hold_becomes_an_error_and_the_writer_goes_on(
    tmp_path: Path,
) -> None:
    """An answer carrying a lone surrogate (a name read from disk as surrogate escapes) cannot
    be written as it is: it is never replaced, the request gets an error in its place, and the
    next answer is written as usual."""
    import anyio
    import mcp_types as types

    from gitpub.mcpserver import wire

    out = tmp_path / "out"

    async def go() -> None:
        with out.open("wb") as sink, open(os.devnull, "rb") as source:
            link = wire.Wire(source, sink, wire.streams())
            await link._write(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={"t": "\udc80"}))
            await link._write(types.JSONRPCResponse(jsonrpc="2.0", id=2, result={"t": "ok"}))

    anyio.run(go)
    first, second = (json.loads(line) for line in out.read_bytes().splitlines())
    assert first == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "the answer holds text that is not Unicode"},
    }
    assert second == {"jsonrpc": "2.0", "id": 2, "result": {"t": "ok"}}
