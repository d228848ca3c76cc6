"""The stdio wire of `git blogpub mcp`, read by gitpub itself, strictly.

The SDK's own stdio reader decodes standard input with `errors="replace"` — Latin-1
`café crème` arrived as `caf� cr�me` and was published so — and drops, unanswered, a line
its parser refuses: a `\\ud800` escape, which JSON can carry and no text can hold, left the
agent waiting forever. Here every line is bytes first. A line that is not UTF-8, not JSON
(`NaN`, `Infinity` included), holds a number no double can hold, a lone surrogate anywhere
(after JSON decoding), or is not a JSON-RPC message gets one JSON-RPC error answer naming the
problem — with the request's id when it can be read — and never reaches the SDK; nothing is
ever replaced. Every other line goes to the SDK's server session unchanged, through a pair of
memory streams this module drives, and every answer the session writes comes back out here.

A request still in flight when the client closes its side is answered before the server
exits (the SDK would cancel it unanswered): a `submit` may have recorded its job by then."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import BinaryIO, NamedTuple, NoReturn, cast

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from gitpub.scan.sanitize import sanitize, sanitize_obj

LINE_LIMIT = 256 * 1024 * 1024
"""Bytes in one message: far above any request the tools accept (an article is at most
`publish.max_source_bytes`, an asset `publish.max_asset_bytes`, base64 adds a third), and a
bound on what a client that never sends a newline can make the server hold."""

SETTLE_LIMIT = 660.0
"""Seconds the server waits, once the client closed its side, for the answers still due: the
longest a call can take (`wait`'s 600) and a margin; then the SDK cancels what is left."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Refused(Exception):  # noqa: N818 - a refusal of one message, not a failure of the server
    """A message the wire answers itself: its id (None when unreadable), code and line."""

    def __init__(self, code: int, message: str, request_id: types.RequestId | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = sanitize(message)
        self.request_id = request_id


class _NotJson(ValueError):
    """A token Python's parser takes and JSON does not (NaN, ±Infinity, 1e999)."""


def _constant(name: str) -> NoReturn:
    raise _NotJson(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"the number {text[:24]} is out of range (no finite double holds it)")
    return value


def lone_surrogate(text: str) -> bool:
    """Whether `text` holds a code point of the surrogate range: no UTF-8 can encode it, so
    no file, database row or git object can hold it."""
    return _LONE_SURROGATE.search(text) is not None


def request_id(obj: object) -> types.RequestId | None:
    """The id of a message as JSON-RPC reads it, when it is one a reply can carry."""
    if not isinstance(obj, dict):
        return None
    found = obj.get("id")
    if isinstance(found, bool):
        return None
    if isinstance(found, int) or (isinstance(found, str) and not lone_surrogate(found)):
        return found
    return None


def _lenient_id(text: str) -> types.RequestId | None:
    """The id of a message refused before it parsed, read as leniently as Python can."""
    try:
        return request_id(json.loads(text))
    except (ValueError, RecursionError):
        return None


def _segment(key: object) -> str:
    shown = json.dumps(key, ensure_ascii=lone_surrogate(str(key)))[:40]
    return shown[1:-1] if isinstance(key, str) else shown


def surrogate_at(obj: object) -> str | None:
    """Where the first lone surrogate of a decoded message sits (`params/arguments/key`), or
    None. Iterative: a deeply nested message must not exhaust the stack here either."""
    stack: list[tuple[object, str]] = [(obj, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if lone_surrogate(value):
                return where or "the message"
        elif isinstance(value, dict):
            for key, item in value.items():
                path = f"{where}/{_segment(key)}" if where else _segment(key)
                if lone_surrogate(key):
                    return f"a key in {where or 'the message'}"
                stack.append((item, path))
        elif isinstance(value, list):
            stack.extend((v, f"{where}/{i}" if where else str(i)) for i, v in enumerate(value))
    return None


def decode(line: bytes) -> types.JSONRPCMessage:
    """One line of the wire as the SDK's message, or Refused saying why not."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        rid = _lenient_id(line.decode("utf-8", "surrogateescape"))
        raise Refused(
            PARSE_ERROR,
            f"the message is not UTF-8 (byte 0x{line[exc.start]:02x} at offset {exc.start}); "
            "nothing is replaced: send UTF-8",
            rid,
        ) from None
    try:
        obj = json.loads(text, parse_constant=_constant, parse_float=_finite)
    except (ValueError, RecursionError) as exc:
        why = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise Refused(PARSE_ERROR, f"the message is not JSON: {why}", _lenient_id(text)) from None
    rid = request_id(obj)
    where = surrogate_at(obj)
    if where is not None:
        inside = where.startswith(("params", "a key in params"))
        code = INVALID_PARAMS if inside else INVALID_REQUEST
        raise Refused(code, f"{where}: a lone surrogate (\\ud800-\\udfff) is not Unicode text", rid)
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        loc = "/".join(str(p) for p in first["loc"][1:]) or "the message"
        raise Refused(
            INVALID_REQUEST, f"not a JSON-RPC 2.0 message: {loc}: {first['msg']}", rid
        ) from None
    if isinstance(message, types.JSONRPCNotification) and isinstance(obj, dict) and "id" in obj:
        # An id the model cannot take (null, 1.5, true) made a request read as a notification,
        # which nobody answers: it is a request with a bad id, and answered as one.
        raise Refused(INVALID_REQUEST, "id: must be a string or an integer", None)
    return message


def answers(obj: object) -> bool:
    """Whether a refused message gets an answer: a request does (with its id), and so does a
    line nobody can read as a message (id null, as JSON-RPC says); a notification or a
    client's response does not — JSON-RPC forbids answering those — and its refusal goes to
    the server's log instead."""
    if not isinstance(obj, dict):
        return True
    if "method" in obj:
        return "id" in obj
    return "result" not in obj and "error" not in obj


class _Streams(NamedTuple):
    to_sdk: MemoryObjectSendStream[SessionMessage | Exception]
    from_wire: MemoryObjectReceiveStream[SessionMessage | Exception]
    to_wire: MemoryObjectSendStream[SessionMessage]
    from_sdk: MemoryObjectReceiveStream[SessionMessage]


def streams() -> _Streams:
    to_sdk, from_wire = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_wire, from_sdk = anyio.create_memory_object_stream[SessionMessage](16)
    return _Streams(to_sdk, from_wire, to_wire, from_sdk)


class Wire:
    """Both directions of one client's stdio, and the requests still waiting for an answer."""

    def __init__(self, inp: BinaryIO, out: BinaryIO, pipes: _Streams) -> None:
        self.inp, self.out, self.pipes = inp, out, pipes
        self.pending: Counter[tuple[type, types.RequestId]] = Counter()
        self.settled = anyio.Event()
        self.lock = anyio.Lock()

    def _readline(self) -> bytes | None:
        """The next line without its newline; None at end of input. A line over the limit
        is read to its end and given back as `LINE_LIMIT + 1` bytes, which decode refuses."""
        line = self.inp.readline(LINE_LIMIT + 1)
        if not line:
            return None
        if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
            while True:
                rest = self.inp.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
        return line.rstrip(b"\n").removesuffix(b"\r")

    async def read(self) -> None:
        """Lines in, until end of input; then wait for every request read to be answered,
        and only then close the SDK's side."""
        async with self.pipes.to_sdk:
            while True:
                line = await anyio.to_thread.run_sync(self._readline, abandon_on_cancel=True)
                if line is None:
                    break
                await self._one(line)
            with anyio.move_on_after(SETTLE_LIMIT):
                while self.pending:
                    self.settled = anyio.Event()
                    await self.settled.wait()

    async def _one(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            if len(line) > LINE_LIMIT:
                raise Refused(INVALID_REQUEST, f"the message is over {LINE_LIMIT} bytes", None)
            message = decode(line)
        except Refused as refused:
            await self._refuse(line, refused)
            return
        meta = None
        if isinstance(message, types.JSONRPCRequest):
            key = (type(message.id), message.id)
            self.pending[key] += 1

            async def unanswered() -> None:  # cancelled by the client: no answer is due
                self._answered(key)

            meta = ServerMessageMetadata(on_request_unanswered=unanswered)
        await self.pipes.to_sdk.send(SessionMessage(message, metadata=meta))

    async def _refuse(self, line: bytes, refused: Refused) -> None:
        obj = None
        with suppress(ValueError, RecursionError):
            obj = json.loads(line.decode("utf-8", "surrogateescape")[:LINE_LIMIT])
        if not answers(obj):
            sys.stderr.write(f"git blogpub: mcp: dropped a message: {refused.message}\n")
            return
        error = types.ErrorData(code=refused.code, message=refused.message)
        reply = types.JSONRPCError(jsonrpc="2.0", id=refused.request_id, error=error)
        await self._write(reply)

    def _answered(self, key: tuple[type, types.RequestId]) -> None:
        if self.pending[key] > 0:
            self.pending[key] -= 1
            if not self.pending[key]:
                del self.pending[key]
        if not self.pending:
            self.settled.set()

    async def write(self) -> None:
        """The SDK's messages out, one line each, in the order it wrote them."""
        async with self.pipes.from_sdk:
            async for item in self.pipes.from_sdk:
                await self._write(item.message)

    async def _write(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCError):
            # The SDK's own refusals quote what they refuse (an unknown method's name): a
            # token sent there is not repeated either.
            error = message.error
            clean: dict[str, object] = {"message": sanitize(error.message)}
            if "data" in error.model_fields_set:
                clean["data"] = sanitize_obj(error.data)
            message = message.model_copy(update={"error": error.model_copy(update=clean)})
        try:
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        except (UnicodeEncodeError, PydanticSerializationError):
            # Text no UTF-8 holds (a name read from disk as surrogate escapes): never
            # replaced, the writer goes on, and the request still gets its one answer.
            rid = getattr(message, "id", None)
            error = types.ErrorData(
                code=types.INTERNAL_ERROR, message="the answer holds text that is not Unicode"
            )
            data = (
                types.JSONRPCError(jsonrpc="2.0", id=rid, error=error)
                .model_dump_json(by_alias=True, exclude_unset=True)
                .encode("ascii")
                + b"\n"
            )
        async with self.lock:
            await anyio.to_thread.run_sync(self._put, data)
        rid = getattr(message, "id", None)
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)) and rid is not None:
            self._answered((type(rid), rid))

    def _put(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()


@contextmanager
def claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The wire as private descriptors, while descriptors 0 and 1 point at the null device and
    at stderr: whatever a step, a git child or a stray print writes misses the protocol
    stream, and nothing else can read the client's messages. Restored on the way out."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)  # not inherited by children (PEP 446)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    # Never closed: a reading thread may still block on the descriptor when serving ends,
    # and a closed number could be reused under it; the process ends soon after anyway.
    inp = os.fdopen(wire_in, "rb", buffering=1 << 16, closefd=False)
    out = cast(BinaryIO, os.fdopen(wire_out, "wb", buffering=0, closefd=False))
    try:
        yield inp, out
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
