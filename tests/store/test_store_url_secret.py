"""The store's URL is a secret everywhere, against real libpq: a URL libpq cannot read, a
server it cannot reach, or a connection the server drops gives one line naming the host and
the database, with advice for the shared store — and the password in no output, no log, no
file under `.git` and no MCP tool error. (tests/unit/test_store_url.py: the masking itself.)"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psycopg
import pytest
from testing.fixtures import Blog, article
from testing.mcphelp import connect

from gitpub.cli import entry
from gitpub.context import open_context
from gitpub.store import jobs
from gitpub.store.errors import StoreError, Unavailable

PASSWORD = "Kq7%zR9vLm2xW4"
HIDDEN = (PASSWORD, "Kq7zR9vLm2xW4", "Kq7zR9v", "Lm2xW4xx")
"""The password of each URL below, and the pieces a parser may cut one into."""

BAD = {
    # libpq: invalid percent-encoded token: "<the password>"
    "unencoded %": f"postgresql://gitpub:{PASSWORD}@db.example.invalid:5432/gitpub",
    # libpq quotes the whole URL back
    "a bracket typo": "postgresql://gitpub:Kq7zR9vLm2xW4@[db.example.invalid:5432/gitpub",
    # an unencoded `/`: libpq reads half the password as the host's port
    "unencoded /": "postgresql://gitpub:Kq7zR9v/Lm2xW4xx@db.example.invalid/gitpub",
    # a query-string password, and a server that is not there
    "no server": "postgresql://gitpub@/gitpub?host=/nonexistent-socket-dir&password=Kq7zR9vLm2xW4",
}


def _secret_free(text: str) -> bool:
    return not any(h in text for h in HIDDEN)


def _files_hold_no_password(blog: Blog) -> None:
    # The log (`<user cache>/gitpub/gitpub.log`), every other file of the user's folders
    # (spools, caches), and every file under `.git`.
    home = Path(os.environ["HOME"])
    for path in [*home.rglob("*"), *(blog.root / ".git").rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            assert not any(h.encode() in data for h in HIDDEN), path


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_store_url_libpq_cannot_use_is_one_line_without_its_password(
    blog: Blog, case: str
) -> None:
    env = {"GITPUB_STORE": BAD[case]}
    for command in (["status"], ["run", "--until-idle"]):
        res = blog.blogpub(*command, env=env)
        assert res.returncode == 1, res
        assert res.stdout == "" and res.stderr.count("\n") == 1, res.stderr
        assert _secret_free(res.stderr), res.stderr
        line = res.stderr
        assert line.startswith("git blogpub: shared store (database gitpub on "), line
        assert "doctor" not in line and "Traceback" not in line, line
    doctor = blog.blogpub("doctor", env=env)
    assert doctor.returncode == 1 and _secret_free(doctor.stdout + doctor.stderr), doctor
    (line,) = [ln for ln in doctor.stdout.splitlines() if " database " in ln]
    assert line.startswith("PROBLEM") and "shared store (database gitpub on " in line, line
    _files_hold_no_password(blog)


def test_libpqs_own_words_are_kept_masked(blog: Blog) -> None:
    """What libpq said is still there for a person to act on, with the password masked."""
    said = blog.blogpub("status", env={"GITPUB_STORE": BAD["unencoded %"]}).stderr
    assert 'invalid percent-encoded token: "***"' in said
    assert "percent-encode what the password holds" in said
    said = blog.blogpub("status", env={"GITPUB_STORE": BAD["a bracket typo"]}).stderr
    assert '"postgresql://gitpub:***@[db.example.invalid:5432/gitpub"' in said
    said = blog.blogpub("status", env={"GITPUB_STORE": BAD["no server"]}).stderr
    assert "on the socket in /nonexistent-socket-dir): cannot connect:" in said
    assert "check GITPUB_STORE" in said and "Is the server running" not in said


def test_an_agent_gets_the_same_line_without_the_password(blog: Blog) -> None:
    os.environ["GITPUB_STORE"] = BAD["unencoded %"]
    try:

        async def agent() -> str:
            async with connect(blog) as mcp:
                return await mcp.refused(
                    "submit", key="pw", text=article("Password", "Where does it go?")
                )

        said = asyncio.run(agent())
    finally:
        del os.environ["GITPUB_STORE"]
    assert _secret_free(said) and "shared store (database gitpub on " in said, said


def _with_password(pg_url: str) -> str:
    """The test server trusts its socket: a password in the URL is ignored, not refused."""
    return pg_url.replace("postgresql://", "postgresql://postgres:Kq7zR9vLm2xW4@", 1)


def test_a_dropped_connection_is_one_line_with_the_shared_stores_advice(
    blog: Blog, pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITPUB_STORE", _with_password(pg_url))
    job_id = blog.submit("dropped", article("Dropped", "The server goes away."))
    with open_context(blog.root) as ctx:
        pid = ctx.store.conn.pg.info.backend_pid
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(Unavailable) as raised:
            jobs.get(ctx.store, job_id)
        with pytest.raises(SystemExit) as ended:
            entry.guarded(lambda: jobs.all_jobs(ctx.store))
    message = raised.value.message
    assert isinstance(raised.value, StoreError) and "\n" not in message
    assert message.startswith("shared store (database gitpub on the socket in "), message
    assert "run the command again once it is reachable" in message
    assert "doctor" not in message and _secret_free(message)
    assert ended.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("git blogpub: shared store (database gitpub")
    assert "doctor" not in err and _secret_free(err), err


def test_a_working_store_with_a_password_shows_it_nowhere(
    blog: Blog, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITPUB_STORE", _with_password(pg_url))
    job_id = blog.submit("pw", article("Password", "Where does the URL go?"))
    outputs = [blog.ok("run", "--until-idle"), blog.blogpub("doctor"), blog.blogpub("status")]
    shown = "".join(r.stdout + r.stderr for r in outputs)
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert _secret_free(shown), shown
    _files_hold_no_password(blog)
