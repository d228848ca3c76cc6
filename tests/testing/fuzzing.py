"""Property-based inputs for every door (hypothesis), and what each door must do with them:
no exit 3 and no traceback, one line on stderr for a refusal, nothing written on refusal, no
secret from the input repeated.

Budgets are shares of one number, `GITPUB_FUZZ_EXAMPLES` (read at import, before the hermetic
fixture clears `GITPUB_*`): the default keeps the whole fuzz set near half a minute on a two-core
machine; a larger number explores more, still reproducibly (derandomized: the examples follow
from the test's name, never from the clock). Every example a door tries is counted, and the
counts are printed at the end of the run, per door."""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

EXAMPLES = int(os.environ.get("GITPUB_FUZZ_EXAMPLES") or 20)
"""The profile's max_examples; each door takes a share of it (`budget`)."""

PROFILE = "gitpub-fuzz"


def register() -> None:
    """The one profile every fuzz test runs under (tests/conftest.py loads it).

    Hypothesis keeps more than its example database in its home folder (the constants it
    mines from the code under test, for one): that folder is a temporary one of this process,
    never `.hypothesis/` in the working directory, which is the source tree."""
    home = tempfile.mkdtemp(prefix="gitpub-hypothesis-")
    atexit.register(shutil.rmtree, home, True)
    set_hypothesis_home_dir(home)
    settings.register_profile(
        PROFILE,
        max_examples=EXAMPLES,
        derandomize=True,  # the same examples on every run and every machine
        database=None,  # nothing written into the source tree
        deadline=None,  # a busy machine is slow, not wrong
        print_blob=False,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )
    settings.load_profile(PROFILE)


def budget(share: float) -> settings:
    """Settings for a door that may take `share` of the profile's examples (at least one):
    a door that starts a process per example takes a small share, one run in-process a
    large one."""
    return settings(max_examples=max(1, round(EXAMPLES * share)))


# ---------------------------------------------------------------------------- counting

TRIED: Counter[str] = Counter()


def tried(door: str) -> None:
    TRIED[door] += 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: hand the counts to the controller
        workeroutput["gitpub_fuzz"] = dict(TRIED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    TRIED.update(getattr(node, "workeroutput", {}).get("gitpub_fuzz", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TRIED:
        counts = ", ".join(f"{door} {n}" for door, n in sorted(TRIED.items()))
        total = sum(TRIED.values())
        terminalreporter.write_line(
            f"fuzz: {total} inputs tried (GITPUB_FUZZ_EXAMPLES={EXAMPLES}): {counts}"
        )


# ---------------------------------------------------------------------------- inputs

GH_TOKEN = "ghp_" + "Zq8xW3vN6mK1pL4tR7sY0uB2cE5fH9jD3gA6"
"""A token of the shape every scanner knows: never to be repeated by any answer."""

CREDENTIAL = "password=Rk4Tn8vQ2zLm"
"""A credential assignment: redacted in anything that names a key (`sanitize_name`)."""

SECRETS = (GH_TOKEN, "Rk4Tn8vQ2zLm")

TRICKY = (
    "",
    " ",
    "-",
    "--",
    "-h",
    "--json",
    "=",
    "x=y",
    ".",
    "..",
    "../x.mdx",
    "/etc/passwd",
    "~/x",
    "content/posts/x.mdx",
    "content/posts/../../x.mdx",
    "content/posts/CON.mdx",
    "content/posts/a\\b.mdx",
    "content/posts/ é.mdx",
    "content/posts/cafe\u0301.mdx",
    "CON",
    "a\nb",
    "a\rb",
    "\x1b[31mred",
    "\u202eevil",
    "\ufeffbom",
    "١٠",
    "+١٠m",
    "+10m",
    "+9999999999999999999d",
    "0999-06-01T00:00:00Z",
    "2026-12-24T08:00:00+01:00",
    "NaN",
    "inf",
    "-1",
    "0",
    "1e999",
    "9" * 400,
    "%s%n%x",
    "{slug}",
    "\udc80\udcff",  # undecodable argv bytes, as Python keeps them (surrogateescape)
    "x" * 300,
    "漢字かな",
    GH_TOKEN,
    CREDENTIAL,
    f"--key={CREDENTIAL}",
)

_TEXT = st.characters(exclude_characters="\x00", exclude_categories=("Cs",))


def words(surrogates: bool = True) -> st.SearchStrategy[str]:
    """Any text an argument can carry: the tricky ones, short random Unicode, or both.
    Without `surrogates`, none of the undecodable-argv kind (a JSON client cannot send them:
    the raw wire tests do)."""
    tricky = TRICKY if surrogates else tuple(t for t in TRICKY if "\udc80" not in t)
    return st.one_of(
        st.sampled_from(tricky),
        st.text(_TEXT, max_size=24),
        st.builds(lambda a, b: a + b, st.sampled_from(tricky), st.text(_TEXT, max_size=8)),
    )


def argv_text(text: str) -> str:
    """`text` as it could reach argv: no NUL (a C string ends there)."""
    return text.replace("\x00", "")


# ---------------------------------------------------------------------------- running


def in_process(root: Path, argv: list[str], stdin: bytes) -> tuple[int, str, str]:
    """`git blogpub -C root ARGV` in this process (as `Blog.read` runs the read commands)."""
    from gitpub.cli import entry

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    code: Any = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                entry.main(["-C", str(root), *argv])
            except SystemExit as ended:
                code = ended.code
    finally:
        sys.stdin = saved
    code = 0 if code is None else code if isinstance(code, int) else 1
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------------------- what must hold

_TRACE = re.compile(r"Traceback \(most recent call last\)|^\s+File \"", re.M)


def check_refusal(code: int, out: str, err: str, what: object) -> None:
    """A command's outcome as a user judges it: never a bug, never a traceback; a failure
    says one line (a usage error: click's usage block with one `Error:` line); no secret."""
    shown = f"{what!r}: exit {code}\nstdout: {out[-800:]}\nstderr: {err[-1500:]}"
    assert code != 3, shown
    assert not _TRACE.search(err) and not _TRACE.search(out), shown
    lines = err.strip().splitlines()
    if code == 1:
        assert len(lines) == 1, shown
        assert lines[0].startswith("git blogpub: "), shown
    elif code == 2:
        errors = [ln for ln in lines if ln.startswith(("Error: ", "git blogpub: "))]
        assert len(errors) == 1, shown
    for secret in SECRETS:
        assert secret not in out and secret not in err, shown


def shown(message: str) -> str:
    """An error's message as every door shows it: sanitized, on one line."""
    from gitpub.core.errors import one_line
    from gitpub.scan.sanitize import sanitize

    return one_line(sanitize(message))


def check_line(line: str, what: object) -> None:
    """A refusal's one line (an MCP tool error, an exception's message)."""
    assert line and "\n" not in line and "\r" not in line, (what, line)
    assert not _TRACE.search(line), (what, line)
    for secret in SECRETS:
        assert secret not in line, (what, line)


def written(root: Path) -> tuple[object, ...]:
    """What a refusal must leave as it was: the state folder's files (the database's own
    files and lock files aside, which a read may touch), its jobs and events, the refs and
    the live checkout's status."""
    import sqlite3
    import subprocess

    state = root / ".git" / "blogpub"
    files = (
        sorted(
            (str(p.relative_to(state)), p.stat().st_size)
            for p in state.rglob("*")
            if p.is_file() and p.parent.name != "locks" and not p.name.startswith("state.sqlite3")
        )
        if state.is_dir()
        else None
    )
    rows: object = None
    db = state / "state.sqlite3"
    if db.exists():
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            rows = conn.execute(
                "SELECT (SELECT count(*) FROM blog_publication),"
                " (SELECT count(*) FROM blog_publication_event)"
            ).fetchone()
        finally:
            conn.close()
    git = ["git", "-C", str(root)]
    refs = subprocess.run([*git, "for-each-ref"], capture_output=True, text=True).stdout
    status = subprocess.run(
        [*git, "status", "--porcelain", "--ignored"], capture_output=True, text=True
    ).stdout
    return files, rows, refs, status
