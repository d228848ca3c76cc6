"""The HTTP side of the web page and of `/metrics`: where it listens, who may ask, and the one
thread that reads the store for it.

uvicorn serves starlette's application on a thread of its own; every read of the store and
the repository runs on one more thread, the `Reader`'s, which opened the Context it reads
(an SQLite connection and a pygit2 repository belong to the thread that opened them, and one
reader at a time is all a page for a person needs).

Who may ask: on a loopback address, only requests that name a loopback host (a page of
another site cannot reach it through a name it controls, DNS rebinding); on any other
address, only requests carrying the token printed at start (a `?token=` link once, then a
cookie; a scraper sends `Authorization: Bearer`). A server that would listen beyond this
machine without a token is refused before it binds."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import socket
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlencode

from gitpub.context import Context, open_context
from gitpub.core.errors import InputError
from gitpub.scan.sanitize import sanitize

if TYPE_CHECKING:  # starlette and uvicorn are imported when a server starts, not before
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp, Receive, Scope, Send

    from gitpub.ui.figures import Figures

    Endpoint = Callable[[Request], Awaitable[Response]]

T = TypeVar("T")
COOKIE = "gitpub_ui_token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def parse_listen(addr: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6) → (host, port); InputError when it is neither."""
    host, sep, port_text = addr.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise InputError(f"{addr!r} is not HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080)")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host.strip("[]") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


class Reader:
    """The one thread that reads (and, for an action, changes) the store for a server."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gitpub-reader")
        self._ctx: Context | None = None

    def _with_context(self, fn: Callable[..., T], args: tuple[object, ...]) -> T:
        if self._ctx is None:
            self._ctx = open_context(self.root, need_remote=False)
        return fn(self._ctx, *args)

    def call(self, fn: Callable[..., T], *args: object) -> Future[T]:
        return self._pool.submit(self._with_context, fn, args)

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.wrap_future(self.call(fn, *args))

    def close(self) -> None:
        def shut() -> None:
            if self._ctx is not None:
                self._ctx.close()
                self._ctx = None

        self._pool.submit(shut).result()
        self._pool.shutdown()


class Guard:
    """ASGI middleware: the host check on loopback, the token everywhere else."""

    def __init__(self, app: ASGIApp, *, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse, RedirectResponse

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused: Response | None = None
        if self.token is None:
            if not is_loopback(_hostname(request.headers.get("host") or "")):
                refused = PlainTextResponse("unknown host: this page answers 127.0.0.1", 421)
        else:
            given = request.query_params.get("token")
            if given is not None and _same(given, self.token):
                # The token leaves the address bar (and any history or log of it) at once.
                query = urlencode(
                    [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                )
                refused = RedirectResponse(request.url.path + (f"?{query}" if query else ""), 303)
                refused.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
            elif not self._carries_token(request):
                refused = PlainTextResponse(
                    "a token is needed: open the address `git blogpub ui` printed", 401
                )
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _carries_token(self, request: Request) -> bool:
        assert self.token is not None
        cookie = request.cookies.get(COOKIE)
        bearer = request.headers.get("authorization", "")
        return (cookie is not None and _same(cookie, self.token)) or (
            bearer.startswith("Bearer ") and _same(bearer[7:], self.token)
        )


def _hostname(header: str) -> str:
    """The host of a Host header: `[::1]:7465` → `::1`, `localhost:7465` → `localhost`."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def guarded(endpoint: Endpoint) -> Endpoint:
    """An endpoint whose unexpected failure is one sanitized line on stderr and a plain 500,
    never a traceback with whatever it held."""

    async def answer(request: Request) -> Response:
        from starlette.responses import PlainTextResponse

        try:
            return await endpoint(request)
        except Exception as exc:  # one request's trouble must not end the server
            sys.stderr.write(sanitize(f"git blogpub ui: {type(exc).__name__}: {exc}") + "\n")
            return PlainTextResponse("gitpub could not answer this request", 500)

    return answer


def metrics_app(reader: Reader, figures: Figures, *, worker: bool, token: str | None) -> Guard:
    """An application that serves `/metrics` alone (a worker's)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    return Guard(
        Starlette(routes=[Route("/metrics", metrics_endpoint(reader, figures, worker=worker))]),
        token=token,
    )


def metrics_endpoint(reader: Reader, figures: Figures, *, worker: bool) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST
        from starlette.responses import Response

        from gitpub.ui.metrics import exposition

        body = await reader.run(lambda ctx: exposition(ctx, figures, worker=worker))
        return Response(body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    return guarded(endpoint)


class Handle:
    """A running server: where it listens, and `close()`."""

    def __init__(
        self, server: uvicorn.Server, thread: threading.Thread, sock: socket.socket, reader: Reader
    ) -> None:
        self._server, self._thread, self._sock, self._reader = server, thread, sock, reader
        host, port = sock.getsockname()[:2]
        self.host: str = host
        self.port: int = port
        self.token: str | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def wait(self) -> None:
        """Until the server stops (Ctrl-C in the thread that waits)."""
        while self._thread.is_alive():
            self._thread.join(0.5)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._reader.close()
        self._sock.close()


def exposure(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token."""
    if token is None and not is_loopback(host):
        raise InputError(
            f"{host}: listening beyond this machine needs a token (`git blogpub ui --listen` "
            "makes and prints one)"
        )


def start(app: ASGIApp, host: str, port: int, *, token: str | None, reader: Reader) -> Handle:
    """Bind `host:port` (port 0: any free one) and serve `app` on a thread until closed."""
    import uvicorn

    exposure(host, token)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        http="h11",
        server_header=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="gitpub-http", daemon=True
    )
    thread.start()
    while not server.started and thread.is_alive():
        thread.join(0.01)
    handle = Handle(server, thread, sock, reader)
    handle.token = token
    if not thread.is_alive():
        handle.close()
        raise InputError(f"cannot serve on {host}:{port}")
    return handle
