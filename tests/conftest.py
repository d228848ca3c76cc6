"""Fixtures on real git: a hermetic environment, a blog with its bare remote, a PostgreSQL."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ConfigLevel
from testing import fuzzing, pgcluster
from testing.fixtures import (
    STORES,
    TEST_PG,
    Blog,
    make_blog,
)
from testing.fuzzing import (  # hooks: the counts of inputs tried, per door
    pytest_sessionfinish,  # noqa: F401
    pytest_terminal_summary,  # noqa: F401
    pytest_testnodedown,  # noqa: F401
)

# The suite starts thousands of gitpub processes; each imports ~150 modules. Where the
# environment forbids bytecode files (PYTHONDONTWRITEBYTECODE, as some images set), every one of
# them would compile those modules from source again: more than half of what a short `run`
# costs. The processes the suite starts write their bytecode to one folder outside the source
# tree instead (a caller's PYTHONPYCACHEPREFIX is kept), so each module is compiled once.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault(
    "PYTHONPYCACHEPREFIX",
    os.path.join(tempfile.gettempdir(), f"gitpub-tests-pycache-{os.getuid()}"),
)

# The fuzz tests' hypothesis profile (bounded, derandomized, no database in the tree); the
# hooks imported above count and report the inputs tried per door.
fuzzing.register()


@pytest.fixture(autouse=True)
def hermetic(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith(("GIT_", "GITPUB_")):
            monkeypatch.delenv(key)
    # A terminal's size, as pytest-xdist's workers inherit it: commands under test write to a
    # pipe, as an agent's would, and must not wrap their lines to a terminal nobody sees.
    for key in ("COLUMNS", "LINES"):
        monkeypatch.delenv(key, raising=False)
    env = {
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
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    (home / ".gitconfig").write_text(
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
    )
    # libgit2 fixed its config search paths from the real HOME when pygit2 was imported, so
    # in-process reads would still see the machine's ~/.gitconfig and /etc/gitconfig.
    no_system = home / ".no-system-config"
    no_system.mkdir()
    paths = {
        ConfigLevel.GLOBAL: home,
        ConfigLevel.XDG: home / ".config" / "git",
        ConfigLevel.SYSTEM: no_system,
    }
    before = {level: pygit2.settings.search_path[level] for level in paths}
    for level, path in paths.items():
        pygit2.settings.search_path[level] = str(path)
    yield
    for level, old in before.items():
        pygit2.settings.search_path[level] = old


@pytest.fixture
def blog(tmp_path: Path) -> Iterator[Blog]:
    yield make_blog(tmp_path)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A libpq URL of a real PostgreSQL with an empty `gitpub` database: GITPUB_TEST_PG, or a
    throwaway cluster for this session (one per xdist worker). Where none is installed the
    shared-store tests skip, except under CI=true, where a silent skip would hide them."""
    if TEST_PG:
        yield TEST_PG
        return
    bindir = pgcluster.find_bindir()
    if bindir is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {pgcluster.MISSING}", pytrace=False)
        pytest.skip(pgcluster.MISSING)
    # Not under pytest's basetemp: that is private to root (0700), and the server runs as the
    # `postgres` user when the tests run as root.
    base = Path(tempfile.mkdtemp(prefix="gitpub-pg-"))
    try:
        try:
            url = pgcluster.start(base, bindir)
        except pgcluster.ClusterError as exc:
            pytest.fail(f"a test PostgreSQL in {base}: {exc}", pytrace=False)
        yield url
    finally:
        try:
            pgcluster.stop(base, bindir)
        finally:
            shutil.rmtree(base, ignore_errors=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module or test marked `both_stores` runs once on the embedded store and once on a
    shared PostgreSQL store: the promises it checks are the store's, whichever it is."""
    if metafunc.definition.get_closest_marker("both_stores") is not None:
        metafunc.fixturenames.append("store_kind")
        metafunc.parametrize("store_kind", STORES)


@pytest.fixture(autouse=True)
def shared_store(request: pytest.FixtureRequest, hermetic: None) -> Iterator[str | None]:
    """GITPUB_STORE for a `both_stores` test's postgresql run (every gitpub it starts, and the
    ones in-process, are then nodes of the shared store); None otherwise. Each test's blog has
    its own remote, so its own schema: tests never see each other's jobs."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or callspec.params.get("store_kind") != "postgresql":
        yield None
        return
    url: str = request.getfixturevalue("pg_url")
    os.environ["GITPUB_STORE"] = url
    try:
        yield url
    finally:
        os.environ.pop("GITPUB_STORE", None)
