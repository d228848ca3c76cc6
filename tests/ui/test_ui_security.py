"""What the web page refuses: listening beyond this machine without a token, a request
without the token when there is one, a host that is not this machine's, a POST without the
CSRF token, and any action unless the server was started with them. An action that is
allowed goes through the command line's own function and names who asked."""

from __future__ import annotations

import getpass
import re
from collections.abc import Iterator

import pytest
from testing.fixtures import Blog, article
from testing.uiworld import World, request

from gitpub.context import open_context
from gitpub.core.errors import InputError
from gitpub.ui import metrics
from gitpub.ui.app import serve_page
from gitpub.ui.server import Handle

TOKEN = "t0ken-for-this-test-only"


def test_listening_beyond_loopback_without_a_token_is_refused(world: World) -> None:
    for host in ("0.0.0.0", "::", "192.0.2.10", "blog.example"):
        with pytest.raises(InputError, match="needs a token"):
            serve_page(world.blog.root, host=host, port=0)
        with open_context(world.blog.root) as ctx, pytest.raises(InputError, match="needs a token"):
            metrics.serve(ctx, f"[{host}]:0" if ":" in host else f"{host}:0")


@pytest.fixture
def guarded_page(world: World) -> Iterator[Handle]:
    # Loopback, so the test talks to this machine only; the token rules are the same anywhere.
    handle = serve_page(world.blog.root, token=TOKEN)
    yield handle
    handle.close()


def test_with_a_token_every_request_must_carry_it(guarded_page: Handle) -> None:
    url = guarded_page.url
    for path in ("", "fleet", "metrics", "?tab=all"):
        assert request(url + path).status == 401, path
        assert request(url + path + "?token=wrong").status == 401, path
    first = request(url + f"?tab=all&token={TOKEN}")
    assert first.status == 303 and first.headers["location"] == "/?tab=all"  # out of the bar
    cookie = first.headers["set-cookie"].split(";")[0]
    assert "httponly" in first.headers["set-cookie"].lower()
    assert request(url + "?tab=all", headers={"Cookie": cookie}).status == 200
    scrape = request(url + "metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert scrape.status == 200 and "gitpub_jobs" in scrape.body


def test_a_loopback_page_answers_only_a_loopback_host(world: World) -> None:
    handle = serve_page(world.blog.root)
    try:
        for host in ("evil.example", "evil.example:7465", "127.0.0.1.evil.example"):
            answer = request(handle.url, headers={"Host": host})
            assert answer.status == 421, host
        assert request(handle.url, headers={"Host": f"localhost:{handle.port}"}).status == 200
    finally:
        handle.close()


def _stopped_job(blog: Blog) -> str:
    """A job in REVIEW: a near-duplicate of the blog's first post."""
    job_id = blog.submit("near", article("Hello", "The first post of this blog, written by hand!"))
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "REVIEW"
    return job_id


def _csrf(handle: Handle, job_id: str) -> str:
    body = request(handle.url + f"job/{job_id}").body
    found = re.search(r'name="csrf" value="([^"]+)"', body)
    assert found, "the job page offers no action"
    return found[1]


def test_actions_are_refused_unless_the_server_offers_them(blog: Blog) -> None:
    job_id = _stopped_job(blog)
    handle = serve_page(blog.root)
    try:
        assert 'method="post"' not in request(handle.url + f"job/{job_id}").body
        for verb in ("retry", "abandon", "continue"):
            answer = request(handle.url + f"job/{job_id}/{verb}", "POST", body="csrf=anything")
            assert answer.status == 403 and "--actions" in answer.body
    finally:
        handle.close()
    assert blog.job(job_id)["job"]["state"] == "REVIEW"


def test_a_post_without_the_csrf_token_changes_nothing(blog: Blog) -> None:
    job_id = _stopped_job(blog)
    handle = serve_page(blog.root, actions=True)
    try:
        token = _csrf(handle, job_id)
        url = handle.url + f"job/{job_id}/retry"
        assert request(url, "POST", body="").status == 403
        assert request(url, "POST", body="csrf=forged").status == 403
        # The right token from another site's page (the browser says so) is refused too.
        elsewhere = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
        assert request(url, "POST", body=f"csrf={token}", headers=elsewhere).status == 403
    finally:
        handle.close()
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    assert not any(e["step"].startswith("operator:") for e in shown["events"])


def test_an_action_is_the_command_lines_and_names_who_asked(blog: Blog) -> None:
    job_id = _stopped_job(blog)
    handle = serve_page(blog.root, actions=True)
    try:
        token = _csrf(handle, job_id)
        done = request(handle.url + f"job/{job_id}/retry", "POST", body=f"csrf={token}")
        assert done.status == 303 and done.headers["location"] == f"/job/{job_id}?done=retry"
        page = request(handle.url + f"job/{job_id}?done=retry").body
        assert "operator:retry" in page
        again = request(handle.url + f"job/{job_id}/retry", "POST", body=f"csrf={token}")
        assert again.status == 409 and "applies to REVIEW, CONFLICT or FAILED" in again.body
    finally:
        handle.close()
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "RECEIVED"
    event = next(e for e in shown["events"] if e["step"] == "operator:retry")
    assert event["detail"] == {
        "from": "REVIEW",
        "by": getpass.getuser(),
        "node": "test-node",
        "via": "web page",
    }
