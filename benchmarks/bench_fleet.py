"""A fleet of workers on one shared PostgreSQL store, beside one worker on the embedded store.

For each configuration — one worker on the embedded SQLite store, then 1, 2 and 4 workers on
one shared PostgreSQL store — each round builds a fresh bare remote (its post-receive hook
counts the pushes it accepts) and a blog clone, submits N jobs there up front (built-in
steps, no fonts: the figures are the store's and delivery's, not drafting's), clones the
remote once per worker (not timed), then starts every worker together, each
`git blogpub run --interval 0.1` in its own fresh clone; the embedded store's one worker runs
in the clone the jobs were submitted in, where its store is. The time runs from the start
until the last job's PUBLISHED event, as the store recorded it (gitpub's clock, which follows
the database's); the remote's branch, every POLL seconds, and then `git blogpub status
--json` in the submitting clone only say when every job is PUBLISHED, and then the workers
are stopped (status is asked only once the remote holds every job: it is a process that
imports a database driver and takes a core, a load on the workers it would watch). (Timed
at the poll that saw it, a run's figure would grow in steps of a poll: its period plus a
process that imports a database driver, about 0.4 s, a third of a 40-job run.) Each round
is checked on the remote: every job there by exactly one commit. The configurations take
turns within a round, in a rotating order, so the machine's drift falls on all of them.

Medians over the rounds per configuration, and jobs/s as a ratio to the SQLite node. Pushes
are the ones the remote accepted; "bounced" counts jobs a rejected push sent back to be
stacked again (`push:rejected` events: another worker pushed first), and "rechecks" jobs
that had to be judged again against articles another worker published meanwhile.

`--draft-seconds S` runs every configuration a second time with an external draft step that
sleeps S seconds, as a model call does (set in the node's user config, so no clone needs to
trust it), and prints the two runs side by side.

Statements per job: after the rounds, one worker in-process (`--concurrency 1`, built-in
steps) publishes N jobs on each store, and the store connection's statement counter
(`Connection.statements`: every statement sent, BEGIN and COMMIT included) is divided by N.

Without `--store`, a throwaway PostgreSQL cluster is started for the run
(`tests/testing/pgcluster.py`)
and removed after it.

    python benchmarks/bench_fleet.py                          # 40 jobs, 3 rounds
    python benchmarks/bench_fleet.py --jobs 12 --rounds 1
    python benchmarks/bench_fleet.py --draft-seconds 1        # and with a 1 s draft step
    python benchmarks/bench_fleet.py --draft-seconds 1 --concurrency 1   # serial workers
    python benchmarks/bench_fleet.py --store postgresql:///gitpub?host=/run/postgresql
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from bench_e2e import _git, articles, blogpub_argv, hermetic_env, make_blog, pushes  # noqa: E402

STUCK = ("REVIEW", "CONFLICT", "FAILED")  # a job there waits for a person: the run is void
POLL = 0.25  # seconds between two looks at the remote (and, once it holds every job, status)

# The sleeping draft step: the source back unchanged after BENCH_DRAFT_SECONDS, as a model
# call spends its time waiting on an API, not on this machine.
DRAFT = """\
import json, os, sys, time
req = json.load(sys.stdin)
time.sleep(float(os.environ["BENCH_DRAFT_SECONDS"]))
print(json.dumps({"text": req["source"]}))
"""


@dataclass(frozen=True)
class Setup:
    store: str  # "SQLite" or "PostgreSQL"
    workers: int
    draft: float = 0.0  # seconds of the sleeping draft step; 0: the built-in steps

    @property
    def label(self) -> str:
        return f"{self.store}, {self.workers} worker{'s' if self.workers > 1 else ''}"


@dataclass
class Round:
    seconds: float
    pushes: int
    bounced: int
    rechecks: int
    on_remote: int  # distinct jobs among the remote's job commits


@contextmanager
def store_env(url: str | None) -> Iterator[dict[str, str]]:
    """The environment of a node on `url` (None: the embedded store), in this process too."""
    if url is None:
        os.environ.pop("GITPUB_STORE", None)
        yield dict(os.environ)
        return
    os.environ["GITPUB_STORE"] = url
    try:
        yield dict(os.environ)
    finally:
        del os.environ["GITPUB_STORE"]


def user_config(scratch: Path, draft: float) -> None:
    """The node's user config (every worker's): the sleeping draft step, or none."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "gitpub" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    if draft <= 0:
        config.unlink(missing_ok=True)
        os.environ.pop("BENCH_DRAFT_SECONDS", None)
        return
    script = scratch / "draft.py"
    script.write_text(DRAFT)
    config.write_text(f"[steps]\ndraft = {json.dumps([sys.executable, str(script)])}\n")
    os.environ["BENCH_DRAFT_SECONDS"] = str(draft)


def submit_all(blog: Path, count: int, seed: int) -> None:
    from gitpub import intake
    from gitpub.context import open_context

    with open_context(blog) as ctx:
        for i, text in enumerate(articles(count, seed)):
            intake.create(ctx, key=f"fleet-{seed}-{i}", source=text)


def event_counts(blog: Path) -> dict[str, int]:
    from gitpub.context import open_context

    with open_context(blog) as ctx:
        rows = ctx.store.conn.execute(
            "SELECT step, COUNT(*) FROM blog_publication_event GROUP BY step"
        ).fetchall()
    return {str(step): int(n) for step, n in rows}


def last_published(blog: Path) -> float:
    """When the last job became PUBLISHED (seconds since the epoch), by the store's events."""
    from gitpub.context import open_context
    from gitpub.store.db import parse_time

    with open_context(blog) as ctx:
        last = ctx.store.conn.execute(
            "SELECT MAX(at) FROM blog_publication_event WHERE to_state = 'PUBLISHED'"
        ).fetchone()[0]
    return parse_time(str(last))


def on_remote(remote: Path) -> int:
    """Job commits on the remote's branch."""
    out = _git(remote, "log", "--format=%(trailers:key=Blog-Job-Id,valueonly)", "main")
    return len(out.split())


def published(blog: Path, env: dict[str, str], count: int) -> bool:
    argv, _ = blogpub_argv()
    out = subprocess.run(
        [*argv, "status", "--json"], cwd=blog, env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"status --json in {blog} failed: {out.stderr.strip()}")
    listing = json.loads(out.stdout)
    stuck = sorted({j["state"] for j in listing["jobs"] if j["state"] in STUCK})
    if stuck:
        raise SystemExit(f"{blog}: jobs wait for a person ({', '.join(stuck)}); see status")
    return int(listing["finished"].get("PUBLISHED", 0)) >= count


def stop(workers: list[subprocess.Popen[bytes]]) -> None:
    """Each worker's own process group (git, git-blogpub and the git it runs), by its id."""
    for proc in workers:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in workers:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def run_round(
    base: Path,
    setup: Setup,
    url: str | None,
    count: int,
    seed: int,
    timeout: float,
    concurrency: int | None = None,
) -> Round:
    blog, remote = make_blog(base)
    shared = url if setup.store == "PostgreSQL" else None
    user_config(base, setup.draft)
    with store_env(shared) as env:
        submit_all(blog, count, seed)
        if shared is None:
            homes = [blog]  # the embedded store lives in the clone the jobs came to
        else:
            homes = [base / f"worker-{w}" for w in range(setup.workers)]
            for home in homes:
                _git(base, "clone", "--quiet", str(remote), str(home))
        argv, _ = blogpub_argv()
        workers: list[subprocess.Popen[bytes]] = []
        started = time.perf_counter()
        started_at = time.time()
        try:
            for w, home in enumerate(homes):
                with open(base / f"worker-{w}.log", "wb") as log:
                    workers.append(
                        subprocess.Popen(
                            [*argv, "run", "--interval", "0.1", *_crew(concurrency)],
                            cwd=home,
                            env=env,
                            stdout=log,
                            stderr=subprocess.STDOUT,
                            start_new_session=True,
                        )
                    )
            # The remote is asked first (one small git process): `status --json` imports a
            # database driver and takes a core each time, a load on the workers it watches.
            while not (on_remote(remote) >= count and published(blog, env, count)):
                for w, proc in enumerate(workers):
                    if proc.poll() is not None:
                        tail = (base / f"worker-{w}.log").read_text().strip()[-400:]
                        raise SystemExit(f"worker {w} exited {proc.returncode}: {tail}")
                if time.perf_counter() - started > timeout:
                    raise SystemExit(f"{setup.label}: not every job PUBLISHED after {timeout} s")
                time.sleep(POLL)
        finally:
            stop(workers)
        events = event_counts(blog)
        took = last_published(blog) - started_at
    ids = _git(remote, "log", "--format=%(trailers:key=Blog-Job-Id,valueonly)", "main").split()
    if len(ids) != count or len(set(ids)) != count:
        raise SystemExit(f"{setup.label}: {len(ids)} job commits on the remote for {count} jobs")
    bounced, rechecks = events.get("push:rejected", 0), events.get("recheck:start", 0)
    return Round(took, pushes(remote), bounced, rechecks, len(set(ids)))


def _crew(concurrency: int | None) -> list[str]:
    return [] if concurrency is None else ["--concurrency", str(concurrency)]


def statements_per_job(base: Path, url: str | None, count: int) -> float:
    """Statements one in-process worker sends per job publishing `count` built-in-step jobs:
    on the shared store from a fresh clone (a fleet's worker), else in the submitting one."""
    from gitpub.context import open_context
    from gitpub.ops.runner import Runner

    blog, remote = make_blog(base)
    user_config(base, 0.0)
    with store_env(url):
        submit_all(blog, count, 7)
        home = blog
        if url is not None:
            home = base / "worker"
            _git(base, "clone", "--quiet", str(remote), str(home))
        with open_context(home) as ctx:
            before = ctx.store.conn.statements
            runner = Runner(home, concurrency=1)
            while runner.one_pass(ctx):
                pass
            sent = ctx.store.conn.statements - before
    ids = _git(remote, "log", "--format=%(trailers:key=Blog-Job-Id,valueonly)", "main").split()
    if len(set(ids)) != count:
        raise SystemExit(f"statements per job: {len(set(ids))} of {count} jobs published")
    return sent / count


@contextmanager
def postgresql(given: str | None) -> Iterator[str]:
    """The URL given, or a throwaway cluster's for the length of the run."""
    if given is not None:
        yield given
        return
    from testing import pgcluster

    bindir = pgcluster.find_bindir()
    if bindir is None:
        raise SystemExit(f"bench_fleet: {pgcluster.MISSING}; or pass --store URL")
    # Not under the run's scratch folder: the server may run as another user (see pgcluster).
    base = Path(tempfile.mkdtemp(prefix="gitpub-pg-"))
    try:
        try:
            yield pgcluster.start(base, bindir)
        except pgcluster.ClusterError as exc:
            raise SystemExit(f"bench_fleet: a PostgreSQL in {base}: {exc}") from None
    finally:
        try:
            pgcluster.stop(base, bindir)
        finally:
            shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=40, help="jobs per round (default 40)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per configuration (default 3)")
    ap.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2, 4], help="fleet sizes (default 1 2 4)"
    )
    ap.add_argument("--store", help="a postgresql:// URL (default: a throwaway cluster)")
    ap.add_argument(
        "--concurrency",
        type=int,
        help="every worker's `run --concurrency` (default: the worker's own default)",
    )
    ap.add_argument(
        "--timeout", type=float, default=600, help="seconds one round may take (default 600)"
    )
    ap.add_argument(
        "--draft-seconds",
        type=float,
        default=0.0,
        help="also run every configuration with an external draft step sleeping this long",
    )
    args = ap.parse_args(argv)
    if args.store is not None and not args.store.startswith(("postgresql://", "postgres://")):
        print("bench_fleet: --store must be a postgresql:// URL", file=sys.stderr)
        return 1
    if args.jobs < 1 or args.rounds < 1 or min(args.workers) < 1 or (args.concurrency or 1) < 1:
        print(
            "bench_fleet: --jobs, --rounds, --workers and --concurrency must be at least 1",
            file=sys.stderr,
        )
        return 1

    drafts = [0.0] + ([args.draft_seconds] if args.draft_seconds > 0 else [])
    setups = [
        Setup(store, w, d)
        for d in drafts
        for store, w in [("SQLite", 1)] + [("PostgreSQL", w) for w in args.workers]
    ]
    results: dict[Setup, list[Round]] = {s: [] for s in setups}
    statements: dict[str, float] = {}
    scratch = Path(tempfile.mkdtemp(prefix="gitpub-bench-fleet-"))
    try:
        with postgresql(args.store) as url:
            hermetic_env(scratch / "home")
            # Bytecode cached as on a person's machine, in the scratch folder (never beside an
            # editable install's sources); a first round of two jobs per store fills it.
            os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
            os.environ["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
            for warm in (Setup("SQLite", 1), Setup("PostgreSQL", 1)):
                run_round(scratch / f"warm-{warm.store}", warm, url, 2, 99, args.timeout)
            for r in range(args.rounds):
                turn = setups[r % len(setups) :] + setups[: r % len(setups)]
                for setup in turn:
                    base = scratch / f"{setup.store}-{setup.workers}-{setup.draft:g}-{r}"
                    results[setup].append(
                        run_round(base, setup, url, args.jobs, r, args.timeout, args.concurrency)
                    )
            for store, given in (("SQLite", None), ("PostgreSQL", url)):
                statements[store] = statements_per_job(
                    scratch / f"statements-{store}", given, args.jobs
                )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report(args, setups, results, statements)
    return 0


def report(
    args: argparse.Namespace,
    setups: list[Setup],
    results: dict[Setup, list[Round]],
    statements: dict[str, float],
) -> None:

    _, cli = blogpub_argv()
    print(
        f"\n{args.jobs} jobs submitted up front → PUBLISHED; workers"
        f" `{' '.join([cli, 'run', '--interval', '0.1', *_crew(args.concurrency)])}`"
        f" started together; {args.rounds} round(s), medians\n"
    )
    modes = sorted({s.draft for s in setups})
    header = f"{'configuration':<24}" + "".join(f" | {_mode(d):^44}" for d in modes)
    print(header)
    print(
        f"{'':<24}"
        + f" | {'s':>6} {'jobs/s':>7} {'× SQLite':>8} {'push':>4} {'bounce':>6} {'recheck':>7}"
        * len(modes)
    )
    print("-" * len(header))
    for setup in [s for s in setups if s.draft == 0]:
        line = f"{setup.label:<24}"
        for draft in modes:
            line += " | " + _cells(args.jobs, results, Setup(setup.store, setup.workers, draft))
        print(line)
    on_remote = min(r.on_remote for runs in results.values() for r in runs)
    print(f"\non the remote: each job in exactly one commit, every round ({on_remote} jobs)")
    print(
        f"statements per job, one worker, built-in steps: SQLite {statements['SQLite']:.1f},"
        f" PostgreSQL {statements['PostgreSQL']:.1f}"
    )
    print("\n× SQLite: jobs/s over the one worker's on the embedded store in the same mode;")
    print("push: pushes the remote accepted (its post-receive hook); bounce: jobs sent back by")
    print("a rejected push (another worker pushed first); recheck: jobs judged again after")
    print("another worker published")


def _mode(draft: float) -> str:
    return f"a {draft:g} s draft step" if draft else "built-in steps"


def _cells(count: int, results: dict[Setup, list[Round]], setup: Setup) -> str:
    runs = results[setup]
    floor = count / statistics.median(r.seconds for r in results[Setup("SQLite", 1, setup.draft)])
    seconds = statistics.median(r.seconds for r in runs)
    rate = count / seconds
    return (
        f"{seconds:>6.2f} {rate:>7.2f} {rate / floor:>7.2f}×"
        f" {statistics.median(r.pushes for r in runs):>4g}"
        f" {statistics.median(r.bounced for r in runs):>6g}"
        f" {statistics.median(r.rechecks for r in runs):>7g}"
    )


if __name__ == "__main__":
    sys.exit(main())
