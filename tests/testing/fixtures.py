"""Real git for tests: a bare remote on disk, clones of it, and the helpers every room's
tests share."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

# Soak knobs, read before the hermetic fixture clears every GITPUB_* variable of the machine.
SOAK_ROUNDS = int(os.environ.get("GITPUB_SOAK_ROUNDS", "30"))
SOAK_SEEDS = [int(s) for s in os.environ.get("GITPUB_SOAK_SEEDS", "20261130").split(",") if s]

# Packages the contrib tests need, installed outside the source tree by .ci/run beforehand.
MDX_DEPS = Path(
    os.environ.get("GITPUB_TEST_MDX_DEPS")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gitpub-tests" / "mdx"
)

# A PostgreSQL server for the shared-store tests that someone started already (.ci/run does);
# read here, before the hermetic fixture clears every GITPUB_* variable.
TEST_PG = os.environ.get("GITPUB_TEST_PG")

CONFIG = """\
[publish]
remote = "origin"
branch = "main"
content = ["content/posts"]

[retry]
base_delay = 0.2
max_delay = 1.0
max_attempts = 4
probe_interval = 0.5
"""


def article(title: str, body: str, slug: str | None = None) -> str:
    head = f"---\ntitle: {title}\n" + (f"slug: {slug}\n" if slug else "") + "---\n\n"
    return head + body + "\n"


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """Poll `check` until it returns something truthy, and return that; fail naming `what`
    when it never does. Tests synchronise on such observable events, never on bare sleeps."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.02)


def until_due(job: dict[str, Any]) -> None:
    """Move gitpub's clock (GITPUB_CLOCK_SKEW, for every gitpub the test starts from now on)
    past the job's recorded next_retry_at, instead of sleeping until then. The hermetic
    fixture clears it before the next test.

    A second past it, not a millisecond: on a shared store gitpub's clock follows the
    database's, estimated to within half a round trip, which on a loaded machine is more
    than a millisecond behind this process's clock."""
    due = datetime.fromisoformat(job["next_retry_at"].replace("Z", "+00:00")).timestamp()
    skew = float(os.environ.get("GITPUB_CLOCK_SKEW") or 0)
    os.environ["GITPUB_CLOCK_SKEW"] = str(max(skew, due - time.time() + 1.0))


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass
class Blog:
    """A clone of a bare remote, ready for gitpub."""

    root: Path
    remote: Path

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.root, *args, check=check)

    def blogpub(
        self,
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> Result:
        proc = subprocess.run(
            [sys.executable, "-m", "gitpub", "-C", str(self.root), *args],
            capture_output=True,
            text=True,
            input=input,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str, **kw: Any) -> Result:
        res = self.blogpub(*args, **kw)
        assert res.returncode == 0, f"blogpub {args} exited {res.returncode}: {res.stderr}"
        return res

    def trust(self) -> Result:
        """Allow, on this node, the commands the blog's `.blogpub.toml` names now, as its
        operator does after reading them (`git blogpub trust --yes`). Until then no external
        step from that file runs."""
        res = self.ok("trust", "--yes")
        assert "allowed" in res.stdout, res.stdout
        return res

    def submit(self, key: str, text: str, *extra: str) -> str:
        src = self.root.parent / f"src-{abs(hash((key, text)))}.mdx"
        src.write_text(text, encoding="utf-8")
        return str(
            self.ok("submit", "--key", key, "--source", str(src), "--json", *extra).json()["job_id"]
        )

    def submit_args(self, key: str, source: Path, *extra: str) -> str:
        """Submit a source file as it is (its bytes), with more options; the job id."""
        res = self.ok("submit", "--key", key, "--source", str(source), "--json", *extra)
        return str(res.json()["job_id"])

    def committed_not_pushed(self, key: str, text: str, env: dict[str, str] | None = None) -> str:
        """A job committed locally whose worker died before delivering it; its id."""
        job_id = self.submit(key, text)
        crash = {**(env or {}), "GITPUB_CRASH_AT": "after_local_committed"}
        assert self.blogpub("run", "--until-idle", env=crash).returncode == 137
        assert self.job(job_id)["job"]["state"] == "LOCAL_COMMITTED"
        return job_id

    def forge_job_commit(self, job_id: str, *, deleting: str) -> str:
        """Replace the job's commit behind its job ref (as anyone with a shell on the node
        can, where no hook guards the ref) by one with the same trailers and files that also
        deletes `deleting`; the forged commit."""
        ref = f"refs/blog-jobs/{job_id}"
        real = self.git("rev-parse", ref)
        env = {"GIT_INDEX_FILE": str(self.root.parent / f"forged-{job_id}.index")}
        git(self.root, "read-tree", real, env=env)
        git(self.root, "rm", "--quiet", "--cached", deleting, env=env)
        tree = git(self.root, "write-tree", env=env)
        message = self.git("log", "-1", "--format=%B", real)
        forged = git(self.root, "commit-tree", tree, "-p", f"{real}~1", "-m", message)
        self.git("update-ref", ref, forged, real)
        return forged

    def push_by_hand(self, path: str, text: str, message: str) -> str:
        """A person with push access commits `path` in this clone and pushes; the commit."""
        self.git("pull", "--quiet", "--rebase", "origin", "main")
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        self.git("add", path)
        msg = self.root.parent / f"message-{self.root.name}.txt"
        msg.write_text(message)
        self.git("commit", "--quiet", "-F", str(msg))
        self.git("push", "--quiet", "origin", "main")
        return self.git("rev-parse", "HEAD")

    def remove_by_hand(self, path: str, message: str) -> None:
        """A person with push access `git rm`s `path` in this clone and pushes: a takedown."""
        self.git("pull", "--quiet", "--rebase", "origin", "main")
        self.git("rm", "--quiet", path)
        self.git("commit", "--quiet", "-m", message)
        self.git("push", "--quiet", "origin", "HEAD:main")

    def porcelain(self) -> list[str]:
        """`git status --porcelain` lines of the live checkout, sorted, leading blanks kept
        (they say staged from unstaged)."""
        out = subprocess.run(
            ["git", "status", "--porcelain"], cwd=self.root, capture_output=True, text=True
        ).stdout
        return sorted(out.splitlines())

    def remote_git(self, *args: str) -> str:
        return git(self.remote, *args)

    def remote_log(self, fmt: str = "%H") -> list[str]:
        out = self.remote_git("log", f"--format={fmt}", "main")
        return out.splitlines() if out else []

    def remote_file(self, path: str) -> bytes:
        return subprocess.run(
            ["git", "show", f"main:{path}"], cwd=self.remote, capture_output=True, check=True
        ).stdout

    def read(self, *args: str) -> Result:
        """A read-only command (`status`, `show`) run in this process: what it prints is what
        the subprocess would print, and a subprocess would prove nothing more about it. The
        commands that change anything run as a user runs them (`blogpub`)."""
        from gitpub.cli import entry

        out, err = io.StringIO(), io.StringIO()
        code: Any = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                entry.main(["-C", str(self.root), *args])
            except SystemExit as ended:
                code = ended.code or 0
        res = Result(int(code), out.getvalue(), err.getvalue())
        assert res.returncode == 0, f"blogpub {args} exited {res.returncode}: {res.stderr}"
        return res

    def status(self) -> list[dict[str, Any]]:
        jobs: list[dict[str, Any]] = self.read("status", "--json").json()["jobs"]
        return jobs

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self.read("show", job_id, "--json").json())

    def commits_with_job(self, job_id: str) -> int:
        out = self.remote_git(
            "log", "--format=%H", "--fixed-strings", f"--grep=Blog-Job-Id: {job_id}", "main"
        )
        return len(out.split())

    def clone(self, name: str) -> Blog:
        path = self.root.parent / name
        git(self.root.parent, "clone", "--quiet", str(self.remote), str(path))
        return Blog(path, self.remote)


def make_blog(base: Path, config: str = CONFIG) -> Blog:
    remote = base / "remote.git"
    root = base / "blog"
    git(base, "init", "--quiet", "--bare", str(remote))
    git(base, "clone", "--quiet", str(remote), str(root))
    (root / ".blogpub.toml").write_text(config)
    posts = root / "content" / "posts"
    posts.mkdir(parents=True)
    (posts / "hello.mdx").write_text(
        article("Hello", "The first post of this blog, written by hand.")
    )
    (root / "README.md").write_text("a blog\n")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "scaffold")
    git(root, "push", "--quiet", "origin", "HEAD:main")
    return Blog(root, remote)


def version_1_store(db: Path) -> sqlite3.Connection:
    """A job database exactly as schema version 1 wrote it (for migration tests), open in
    autocommit mode for the caller's rows."""
    from gitpub.store.db import _MIGRATIONS

    conn = sqlite3.connect(db, isolation_level=None)
    v1 = _MIGRATIONS[0]
    assert isinstance(v1, str)
    for statement in v1.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    return conn


STORES = ("sqlite", "postgresql")
