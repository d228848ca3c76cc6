"""A blog with a job in every state people look for on the web page, made the way they arise:
real runs of the worker on a real bare remote, a person's pushes, a remote that goes away.

Built once per test session (a dozen worker runs) under an environment as hermetic as each
test's; the page's tests only read it. Tests that act on a job make a small blog of their
own."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testing import secret_corpus
from testing.fixtures import CONFIG, Blog, article, make_blog, until_due

SECRET = secret_corpus.one("np.slack.2")
"""What the draft step leaks into one article: the page must name it, never show it."""

DRAFT = """\
import json, sys
req = json.load(sys.stdin)
text = req["source"]
if "LEAK-ME" in text:
    text += "\\nslack: %s\\n"
print(json.dumps({"text": text}))
"""


@dataclass
class World:
    blog: Blog
    ids: dict[str, str]  # what the job shows (published, withdrawn, review, …) → its id


def hermetic(mp: pytest.MonkeyPatch, home: Path) -> None:
    """The environment of `tests/conftest.py`'s hermetic fixture, for a session's build."""
    for key in list(os.environ):
        if key.startswith(("GIT_", "GITPUB_")):
            mp.delenv(key)
    for key, value in {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.invalid",
        "GIT_COMMITTER_NAME": "Test Committer",
        "GIT_COMMITTER_EMAIL": "committer@example.invalid",
        "GIT_EDITOR": "false",
        "GITPUB_NODE": "test-node",
    }.items():
        mp.setenv(key, value)
    (home / ".gitconfig").write_text(
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
    )


def _failing_and_waiting(blog: Blog, ids: dict[str, str]) -> None:
    """With the remote gone: one job that used up its attempts (FAILED), one waiting to
    retry (RETRY_WAIT)."""
    away = blog.remote.with_name("away.git")
    blog.remote.rename(away)
    try:
        ids["failed"] = blog.submit("failing", article("Unreachable", "The remote is gone."))
        for _ in range(12):
            blog.ok("run", "--until-idle")
            job = blog.job(ids["failed"])["job"]
            if job["state"] == "FAILED":
                break
            until_due(job)
        ids["retry_wait"] = blog.submit("waiting", article("Patient", "It will be tried again."))
        blog.ok("run", "--until-idle")
    finally:
        away.rename(blog.remote)
        os.environ.pop("GITPUB_CLOCK_SKEW", None)


def build(base: Path) -> World:
    script = base / "draft.py"
    script.write_text(DRAFT % SECRET)
    blog = make_blog(base, CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{script}"]\n')
    blog.trust()
    ids: dict[str, str] = {}
    ids["published"] = blog.submit("pub", article("Published", "A post that went out."))
    ids["withdrawn"] = blog.submit("gone", article("Gone", "A post a person took down."))
    blog.ok("run", "--until-idle")
    person = blog.clone("person")
    person.git("reset", "--quiet", "--hard", "HEAD~1")  # the newest post, taken down
    person.git("push", "--quiet", "--force", "origin", "HEAD:main")
    hello = article("Hello", "The first post of this blog, written by hand.")
    ids["skipped"] = blog.submit("dup", hello, "--target", "content/posts/again.mdx")
    ids["scheduled"] = blog.submit("later", article("Later", "Next week."), "--at", "+3d")
    ids["in_review"] = blog.submit("rev", article("Reviewed", "Read me.", slug="rev"), "--review")
    ids["review"] = blog.submit("leak", article("Leaky", "LEAK-ME, says the agent."))
    ids["conflict"] = blog.submit(
        "conf", article("Hello", "The agent's version."), "--target", "content/posts/hello.mdx"
    )
    crashed = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert crashed.returncode == 137, crashed.stderr
    person.push_by_hand("content/posts/hello.mdx", article("Hello", "A person's."), "edit hello")
    blog.git("fetch", "--quiet", "origin")
    blog.ok("run", "--until-idle")
    blog.ok("run", "--until-idle")  # an idle pass: it notices the takedown
    _failing_and_waiting(blog, ids)
    ids["received"] = blog.submit("fresh", article("Fresh", "Just submitted."))
    return World(blog, ids)


def session_world(factory: pytest.TempPathFactory) -> Iterator[World]:
    """The body of a session fixture: the world, built under its own hermetic environment."""
    base = factory.mktemp("ui-world")
    home = factory.mktemp("ui-world-home")
    with pytest.MonkeyPatch.context() as mp:
        hermetic(mp, home)
        world = build(base)
    yield world


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str


def request(
    url: str,
    method: str = "GET",
    *,
    body: str | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """One HTTP request to a server of this machine, redirects not followed."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    assert parts.hostname in ("127.0.0.1", "::1", "localhost"), url  # loopback only
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    sent = dict(headers or {})
    if body is not None:
        sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8")
        return Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, text)
    finally:
        conn.close()
