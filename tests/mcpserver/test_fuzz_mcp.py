"""The agent's door, fuzzed: tool arguments of every shape through the SDK's own client, and
raw lines on the wire (bytes, JSON-RPC shapes bent every way) to one `git blogpub mcp`.

Through the client: every call gets a result; a refusal is one line (never an internal error)
and records nothing; no answer repeats a secret the arguments carried. On the wire: every
request gets exactly one answer (with its id, or id null when none can be read), a
notification or a response gets none, and the server serves on."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from testing import fuzzing
from testing.fixtures import Blog, article
from testing.mcphelp import BlockingAgent, RawWire

WORDS = fuzzing.words(surrogates=False)
SCALARS = st.one_of(
    WORDS,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**63, 10**400]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
JSONISH = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3), max_leaves=6)

TEXTS = st.one_of(
    st.sampled_from(
        [
            article("Agent", "A post from an agent."),
            article("Leak", f"deploy with {fuzzing.GH_TOKEN}"),
            "---\ntitle: [unclosed\n---\nbody\n",
            "\ufeff# BOM\n",
            "",
        ]
    ),
    WORDS,
)

ASSET = st.one_of(
    st.fixed_dictionaries(
        {
            "path": WORDS,
            "content_base64": st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()),
        }
    ),
    st.fixed_dictionaries({"path": WORDS, "content_base64": WORDS}),
    st.fixed_dictionaries({"path": WORDS, "text": TEXTS}),
    st.dictionaries(WORDS, SCALARS, max_size=3),
)

TIMEOUTS = st.one_of(
    st.sampled_from([0, 0.01, -1, 601, 1e308, 10**400, "1", None, True]),
    st.floats(min_value=0, max_value=0.2),
)
"""`wait` bounds: never a valid long wait (a job the fuzzer made might then hold it)."""

ARGS: dict[str, st.SearchStrategy[Any]] = {
    "key": st.one_of(WORDS, st.just(fuzzing.CREDENTIAL), SCALARS),
    "text": TEXTS,
    "target": st.one_of(WORDS, SCALARS),
    "assets": st.one_of(st.lists(ASSET, max_size=3), SCALARS),
    "allow": st.one_of(st.lists(WORDS, max_size=2), SCALARS),
    "state": st.one_of(st.sampled_from(["RECEIVED", "PUBLISHED", "received"]), SCALARS),
    "limit": st.one_of(st.integers(min_value=-5, max_value=2**70), SCALARS),
    "job_id": st.one_of(WORDS, SCALARS),
    "timeout_s": TIMEOUTS,
}
TOOLS = {
    "submit": ("key", "text", "target", "assets", "allow"),
    "status": ("state", "limit"),
    "show": ("job_id", "key"),
    "dry_run": ("text", "target", "assets"),
    "wait": ("job_id", "timeout_s"),
}


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(TOOLS)))
    names = TOOLS[tool]
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    args = {name: draw(ARGS[name]) for name in chosen}
    if draw(st.integers(0, 9)) == 0:
        args[draw(WORDS)] = draw(JSONISH)  # an argument no schema names
    return tool, args


def _texts(result: Any) -> list[str]:
    return [c.text for c in result.content if c.type == "text"]


def test_tool_arguments_of_every_shape(blog: Blog) -> None:
    with BlockingAgent(blog) as agent:

        @given(call=calls())
        @fuzzing.budget(1.5)
        def one(call: tuple[str, dict[str, Any]]) -> None:
            fuzzing.tried("mcp-tools")
            tool, args = call
            before = fuzzing.written(blog.root)
            result = agent.call(tool, args)
            texts = _texts(result)
            for text in texts:
                for secret in fuzzing.SECRETS:
                    assert secret not in text, (call, texts)
            if result.is_error:
                (line,) = texts
                fuzzing.check_line(line, call)
                assert not line.startswith("internal error"), (call, line)
                assert fuzzing.written(blog.root) == before, (call, line)
            else:
                assert isinstance(result.structured_content, dict), (call, texts)

        one()


# ---------------------------------------------------------------------------- the wire

_IDS = st.one_of(
    st.sampled_from(["int", "str"]),  # made unique per example (see `_unique`)
    st.sampled_from([None, 1.5, True, [], {}, "\ud800", -0.0]),
)
METHODS = st.one_of(
    st.sampled_from(
        [
            "ping",
            "tools/list",
            "tools/call",
            "initialize",
            "resources/list",
            "notifications/initialized",
            "notifications/cancelled",
            "notifications/progress",
        ]
    ),
    WORDS,
)
PARAMS = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(["status", "show", "nope"]),
            "arguments": st.dictionaries(WORDS, JSONISH, max_size=2),
        }
    ),
    st.dictionaries(WORDS, JSONISH, max_size=3),
    JSONISH,
)
STRANGE = st.sampled_from(["\ud800", "\udc80x", "\ud83d\ude00", "NaN", "Infinity", "1e999"])


@st.composite
def lines(draw: st.DrawFn, serial: list[int]) -> bytes:
    """One line for the wire: a JSON-RPC message bent in some way, or plain bytes."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.binary(max_size=40)).replace(b"\n", b" ")
    message: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        message["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0", 2]))
    kind = draw(_IDS)
    if draw(st.integers(0, 3)):
        serial[0] += 1
        message["id"] = serial[0] if kind == "int" else f"r{serial[0]}" if kind == "str" else kind
    if draw(st.integers(0, 7)):
        message["method"] = draw(METHODS)
    else:
        message[draw(st.sampled_from(["result", "error"]))] = draw(JSONISH)
    params = draw(PARAMS)
    if params is not None:
        message["params"] = params
    text = json.dumps(message)  # \\uXXXX escapes for any surrogate
    bend = draw(st.integers(0, 5))
    if bend == 0:  # a token JSON does not have, or an escape no text can hold
        token = draw(STRANGE)
        spot = text.rfind("}")
        text = (
            text[:spot]
            + f', "x": {token if token[0] in "NI1" else json.dumps(token)}'
            + text[spot:]
        )
    data = text.encode("utf-8")
    if bend == 1:
        spot = draw(st.integers(0, len(data)))
        data = data[:spot] + draw(st.sampled_from([b"\xff", b"\xe9", b"\xed\xa0\x80", b"\xc3"]))
        data += text.encode()[spot:]
    if bend == 2:
        data = data[: draw(st.integers(0, len(data)))]
    return data


def expected(line: bytes) -> tuple[int, object]:
    """How many answers a line is owed, and with which id: read with Python's own (lenient)
    parser, the oracle the server must agree with."""
    try:
        obj = json.loads(line.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return (0, None) if not line.strip() else (1, None)
    if not isinstance(obj, dict):
        return 1, None
    if "method" in obj:
        if "id" not in obj:
            return 0, None
    elif "result" in obj or "error" in obj:
        return 0, None
    rid = obj.get("id")
    fine = (isinstance(rid, int) and not isinstance(rid, bool)) or (
        isinstance(rid, str) and not any(0xD800 <= ord(c) <= 0xDFFF for c in rid)
    )
    return 1, rid if fine else None


def test_every_request_on_the_wire_gets_exactly_one_answer(blog: Blog, tmp_path: Path) -> None:
    wire = RawWire(blog, tmp_path / "server.log")
    serial = [0]
    sent: list[bytes] = []

    @given(line=lines(serial))
    @fuzzing.budget(3)
    def one(line: bytes) -> None:
        fuzzing.tried("mcp-wire")
        owed, rid = expected(line)
        sent.append(line)
        wire.send(line)
        serial[0] += 1
        probe = f"probe-{serial[0]}"
        wire.send(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode())
        # The probe's answer marks the end of what the line could have caused, once the
        # line's own answer (which a slower call may send after the probe's) is in too.
        heard: list[dict[str, Any]] = []
        probed = False
        while not probed or len(heard) < owed:
            answer = wire.answer(timeout=30, after=sent[-4:])
            if answer.get("id") == probe:
                probed = True
            else:
                heard.append(answer)
        assert len(heard) == owed, (line, heard)
        for secret in fuzzing.SECRETS:  # the SDK's refusals quote a method name, say
            assert secret not in json.dumps(heard), (line, heard)
        if owed:
            assert heard[0]["id"] == rid, (line, heard)
            if "error" in heard[0]:
                fuzzing.check_line(heard[0]["error"]["message"], line)

    one()
    assert wire.close() == []


# ---------------------------------------------------------------------------- what it found


def test_found_requests_the_sdk_would_leave_unanswered_or_answer_with_a_token(
    blog: Blog, tmp_path: Path
) -> None:
    """A request whose id no model takes (null, true, 1.5) passed for a notification, which
    nobody answers; the SDK's "Method not found" quoted the method, a token included."""
    wire = RawWire(blog, tmp_path / "server.log")
    for rid in ("null", "true", "1.5"):
        answer = wire.call(f'{{"jsonrpc": "2.0", "id": {rid}, "method": "ping"}}'.encode())
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        assert answer["error"]["message"] == "id: must be a string or an integer"
    token = json.dumps({"jsonrpc": "2.0", "id": 5, "method": fuzzing.GH_TOKEN}).encode()
    answer = wire.call(token)
    assert answer["id"] == 5 and answer["error"]["message"] == "Method not found"
    assert fuzzing.GH_TOKEN not in json.dumps(answer)
    assert wire.close() == []
