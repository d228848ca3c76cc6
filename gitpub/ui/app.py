"""The web page's routes: the job list, a job, the fleet, `/metrics`, and with `--actions` the
operator's exits as POST forms.

Every value a template shows goes through the sanitizer on its way out (the environment's
`finalize`), and then through HTML escaping: a secret that reached a text by any road is
still not shown, and no text of a job can become markup. A change is a POST carrying the
server's CSRF token, made by the same functions `git blogpub retry` and `resolve` call, and
recorded in the job's history with who asked."""

from __future__ import annotations

import getpass
import os
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from gitpub.context import Context
from gitpub.core.errors import GitpubError
from gitpub.ops import actions as ops_actions
from gitpub.scan.sanitize import sanitize
from gitpub.ui import jobpage, pages
from gitpub.ui.figures import Figures
from gitpub.ui.server import Guard, Handle, Reader, exposure, guarded, metrics_endpoint, start

if TYPE_CHECKING:  # jinja2 and starlette are imported when the page starts, not before
    import jinja2
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

REFRESH_SECONDS = 5
ACTIONS_OFF = "actions are off: start `git blogpub ui --actions`"
NO_TOKEN = "refused: no valid CSRF token"
_MAX_FORM = 16 * 1024


def _shown(value: object) -> object:
    """What a template prints: every text sanitized, None as nothing."""
    if value is None:
        return ""
    return sanitize(value) if isinstance(value, str) else value


def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("gitpub.ui", "templates"),
        autoescape=True,
        finalize=_shown,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def actor(ctx: Context) -> dict[str, str]:
    """Who acts through the page: this node's user, named in the job's history."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no name for this uid (a container): its number then
        user = str(os.getuid())
    return {"by": user, "node": ctx.config.node, "via": "web page"}


def act(ctx: Context, job_id: str, verb: str) -> str:
    """Run one operator action on the job; its id (the action's own checks refuse one that
    does not apply, as the command line's do)."""
    who = actor(ctx)
    if verb == "retry":
        job = ops_actions.retry(ctx, job_id, actor=who)
    elif verb == "abandon":
        job = ops_actions.abandon(ctx, job_id, actor=who)
    else:
        job = ops_actions.resume(ctx, job_id, actor=who)
    return job.job_id


class Site:
    """One running web page: its templates, its CSRF token, whether it may act."""

    def __init__(self, reader: Reader, *, actions: bool) -> None:
        self.reader = reader
        self.actions = actions
        self.csrf = secrets.token_urlsafe(32)
        self.env = _environment()
        self.figures = Figures()

    def render(self, name: str, status: int = 200, **values: object) -> Response:
        from starlette.responses import HTMLResponse

        nonce = secrets.token_urlsafe(16)
        body = self.env.get_template(name).render(
            nonce=nonce,
            refresh=REFRESH_SECONDS,
            actions=self.actions,
            csrf=self.csrf,
            **values,
        )
        return HTMLResponse(body, status, headers=_headers(nonce))

    async def jobs(self, request: Request) -> Response:
        query = dict(request.query_params)
        model = await self.reader.run(pages.jobs_page, query)
        return self.render("jobs.html", section="jobs", **model)

    async def job(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            model = await self.reader.run(jobpage.job_page, job_id)
        except LookupError as exc:
            return self.render("error.html", 404, section="job", message=str(exc))
        return self.render(
            "job.html", section="job", done=request.query_params.get("done"), **model
        )

    async def fleet(self, request: Request) -> Response:
        model = await self.reader.run(pages.fleet_page)
        return self.render("fleet.html", section="fleet", **model)

    async def action(self, request: Request) -> Response:
        from starlette.responses import RedirectResponse

        job_id, verb = request.path_params["job_id"], request.path_params["verb"]
        if not self.actions:
            return self.render(
                "error.html",
                403,
                section="job",
                message=ACTIONS_OFF,
            )
        body = await request.body()
        form = parse_qs(body[:_MAX_FORM].decode("utf-8", "replace"))
        given = (form.get("csrf") or [""])[0]
        if not secrets.compare_digest(given.encode(), self.csrf.encode()) or _cross_site(request):
            return self.render("error.html", 403, section="job", message=NO_TOKEN)
        if verb not in ("retry", "continue", "abandon"):
            return self.render("error.html", 404, section="job", message=f"no action {verb!r}")
        try:
            done = await self.reader.run(act, job_id, verb)
        except GitpubError as exc:
            return self.render("error.html", 409, section="job", message=exc.message)
        return RedirectResponse(f"/job/{done}?done={verb}", 303)


def _cross_site(request: Request) -> bool:
    """A request another site made the browser send (a check beside the token)."""
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return True
    origin = request.headers.get("origin")
    return origin is not None and origin.split("://", 1)[-1] != request.headers.get("host")


def _headers(nonce: str) -> dict[str, str]:
    return {
        # Nothing from elsewhere, and only this response's own inline style and script.
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}';"
            " connect-src 'self'; img-src 'self' data:; form-action 'self';"
            " frame-ancestors 'none'; base-uri 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def application(reader: Reader, *, actions: bool, token: str | None) -> Guard:
    from starlette.applications import Starlette
    from starlette.routing import Route

    site = Site(reader, actions=actions)

    def get(path: str, endpoint: Callable[[Request], Awaitable[Response]]) -> Route:
        return Route(path, guarded(endpoint), methods=["GET", "HEAD"])

    routes = [
        get("/", site.jobs),
        get("/job/{job_id}", site.job),
        get("/fleet", site.fleet),
        Route("/metrics", metrics_endpoint(reader, site.figures, worker=False)),
        Route("/job/{job_id}/{verb}", guarded(site.action), methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), token=token)


def serve_page(
    root: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    actions: bool = False,
) -> Handle:
    """The web page of the repository at `root`, served on a thread until `close()`; the
    store is opened (and its trouble raised) before this returns."""
    exposure(host, token)
    reader = Reader(root)
    try:
        reader.call(lambda ctx: None).result()
        app = application(reader, actions=actions, token=token)
        return start(app, host, port, token=token, reader=reader)
    except BaseException:
        reader.close()
        raise
