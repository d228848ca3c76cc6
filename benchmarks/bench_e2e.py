"""End to end: 50 passthrough jobs from submit to PUBLISHED on a local bare remote.

Each repetition builds a fresh blog clone and bare remote (not timed), submits the jobs and
runs the worker until idle. Pushes are counted by the remote itself: a post-receive hook
appends one line per push it receives; the git processes the worker starts are counted from
git's own trace (`GIT_TRACE2_EVENT`, one "start" event per process), a figure the machine's
load does not blur. The library path (`intake.create` + `run_until_idle`,
as `git blogpub demo` does) is repeated; the command-line path (`git blogpub submit` per job,
then `git blogpub run --until-idle`) is timed once.

    python benchmarks/bench_e2e.py            # 50 jobs, library path 3 times, CLI once
    python benchmarks/bench_e2e.py --quick    # 10 jobs, each path once
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CONFIG = """\
[publish]
remote = "origin"
branch = "main"
content = ["content/posts"]
"""

POST_RECEIVE = """\
#!/bin/sh
# One line per push received: "branch" when it moved a branch, "refs" when it moved only other
# refs (the landmarks of jobs whose publication is recorded, removed in a push of their own).
if grep -q ' refs/heads/'; then echo branch; else echo refs; fi >> "$(dirname "$0")/../pushes.log"
"""


def hermetic_env(home: Path, gitconfig: str = "") -> None:
    """Run every git (ours and gitpub's) with a known identity and no user or system config."""
    for key in list(os.environ):
        if key.startswith(("GIT_", "GITPUB_")):
            del os.environ[key]
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n" + gitconfig)
    os.environ.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
            "GITPUB_NODE": "bench",
            # `git blogpub` finds this interpreter's own console script first, not a shim.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def make_blog(base: Path) -> tuple[Path, Path]:
    """A bare remote with a counting post-receive hook, and a clone with one hand post."""
    remote, blog = base / "remote.git", base / "blog"
    base.mkdir(parents=True)
    _git(base, "init", "--quiet", "--bare", str(remote))
    hook = remote / "hooks" / "post-receive"
    hook.write_text(POST_RECEIVE)
    hook.chmod(0o755)
    _git(base, "clone", "--quiet", str(remote), str(blog))
    (blog / ".blogpub.toml").write_text(CONFIG)
    posts = blog / "content" / "posts"
    posts.mkdir(parents=True)
    (posts / "hello.mdx").write_text("---\ntitle: Hello\n---\n\nWritten by hand.\n")
    _git(blog, "add", ".")
    _git(blog, "commit", "--quiet", "-m", "scaffold")
    _git(blog, "push", "--quiet", "origin", "HEAD:main")
    (remote / "pushes.log").unlink()  # the scaffold push is not the benchmark's
    return blog, remote


def articles(count: int, seed: int) -> list[str]:
    """Distinct articles: random letters, so the similarity judge answers NEW for each."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        words = [
            "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(80)
        ]
        head = f"---\ntitle: Bench post {i}\nslug: bench-{seed}-{i}\n---\n\n"
        out.append(head + " ".join(words) + "\n")
    return out


def pushes(remote: Path, kind: str = "branch") -> int:
    log = remote / "pushes.log"
    return log.read_text().split().count(kind) if log.exists() else 0


def remote_job_commits(remote: Path) -> int:
    out = _git(remote, "log", "--format=%H", "--fixed-strings", "--grep=Blog-Job-Id: ", "main")
    return len(out.split())


@dataclass
class Run:
    submit: float
    work: float
    pushes: int
    gits: int  # git processes started while the worker ran
    other: int = 0  # pushes that moved no branch (landmark removals)

    @property
    def total(self) -> float:
        return self.submit + self.work


def run_library(base: Path, count: int, seed: int) -> Run:
    from gitpub import intake
    from gitpub.context import open_context
    from gitpub.core.states import State
    from gitpub.ops import worker
    from gitpub.store import jobs

    blog, remote = make_blog(base)
    texts = articles(count, seed)
    with open_context(blog) as ctx:
        started = time.perf_counter()
        ids = [
            intake.create(ctx, key=f"bench-{i}", source=t)[0].job_id for i, t in enumerate(texts)
        ]
        submitted = time.perf_counter()
        os.environ["GIT_TRACE2_EVENT"] = str(base / "trace.json")
        try:
            worker.run_until_idle(ctx)
        finally:
            del os.environ["GIT_TRACE2_EVENT"]
        done = time.perf_counter()
        states = {jobs.require(ctx.store, j).state for j in ids}
    if states != {State.PUBLISHED} or remote_job_commits(remote) != count:
        raise SystemExit(f"library run did not publish every job: {sorted(map(str, states))}")
    return counted(base, remote, submitted - started, done - submitted)


def counted(base: Path, remote: Path, submit: float, work: float) -> Run:
    """A run's times with what the remote and git's trace counted."""
    return Run(submit, work, pushes(remote), git_starts(base), pushes(remote, "refs"))


def git_starts(base: Path) -> int:
    trace = base / "trace.json"
    if not trace.exists():
        return 0
    return sum('"event":"start"' in line for line in trace.read_text().splitlines())


def blogpub_argv() -> tuple[list[str], str]:
    if shutil.which("git-blogpub", path=str(Path(sys.executable).parent)):
        return ["git", "blogpub"], "git blogpub"
    return [sys.executable, "-m", "gitpub"], "python -m gitpub"


def run_cli(base: Path, count: int, seed: int) -> Run:
    blog, remote = make_blog(base)
    argv, _ = blogpub_argv()
    sources = []
    for i, text in enumerate(articles(count, seed)):
        src = base / f"source-{i}.mdx"
        src.write_text(text)
        sources.append(src)
    started = time.perf_counter()
    for i, src in enumerate(sources):
        subprocess.run(
            [*argv, "submit", "--key", f"bench-{i}", "--source", str(src), "--json"],
            cwd=blog,
            check=True,
            capture_output=True,
        )
    submitted = time.perf_counter()
    env = {**os.environ, "GIT_TRACE2_EVENT": str(base / "trace.json")}
    subprocess.run(
        [*argv, "run", "--until-idle"], cwd=blog, check=True, capture_output=True, env=env
    )
    done = time.perf_counter()
    if remote_job_commits(remote) != count:
        raise SystemExit("CLI run did not publish every job")
    return counted(base, remote, submitted - started, done - submitted)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10 jobs, each path once")
    ap.add_argument("--jobs", type=int, default=None, help="jobs per run (default 50)")
    ap.add_argument("--reps", type=int, default=None, help="library-path repetitions")
    args = ap.parse_args(argv)
    count = args.jobs or (10 if args.quick else 50)
    reps = args.reps or (1 if args.quick else 3)

    scratch = Path(tempfile.mkdtemp(prefix="gitpub-bench-e2e-"))
    try:
        hermetic_env(scratch / "home")
        lib = [run_library(scratch / f"lib-{r}", count, seed=r) for r in range(reps)]
        cli = run_cli(scratch / "cli", count, seed=reps)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{count} passthrough jobs, submit → PUBLISHED, local bare remote\n")
    header = (
        f"{'path':<22} {'runs':>4} {'submit s':>9} {'run s':>8} {'total s':>8}"
        f" {'jobs/s':>7} {'pushes/job':>10} {'other/job':>9} {'git/job':>8}"
    )
    print(header)
    print("-" * len(header))
    rows = [("library (median)", lib), (f"CLI: {blogpub_argv()[1]}", [cli])]
    for label, runs in rows:
        submit = statistics.median(r.submit for r in runs)
        work = statistics.median(r.work for r in runs)
        total = statistics.median(r.total for r in runs)
        per_job = statistics.median(r.pushes / count for r in runs)
        other = statistics.median(r.other / count for r in runs)
        gits = statistics.median(r.gits / count for r in runs)
        print(
            f"{label:<22} {len(runs):>4} {submit:>9.2f} {work:>8.2f} {total:>8.2f}"
            f" {count / total:>7.1f} {per_job:>10.2f} {other:>9.2f} {gits:>8.1f}"
        )
    print("\npushes counted by the bare remote's post-receive hook (one line per push);")
    print("other: pushes that moved no branch (landmarks removed once recorded)")
    print("git/job: git processes the worker started per job (GIT_TRACE2_EVENT start events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
