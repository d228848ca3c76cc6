"""Prepares that overlap: `run --concurrency 1` against `--concurrency 4`, side by side.

Each repetition builds two fresh blogs on bare remotes whose post-receive hook counts pushes
(not timed), submits the same 12 articles to each (not timed) and times, in alternating
order, `git blogpub run --until-idle --concurrency N` on each. The draft step is an external
command that sleeps one second, as a model call does (real ones take 10–60 s): what overlap
saves is waiting, not work, so the figure holds on a loaded 2-core machine. "drafting" is the
span from the first draft's start to the last draft's end, as the draft command itself
records them. Every run is checked: each job PUBLISHED by exactly one commit on the remote,
drafted once, all of them in one push.

    python benchmarks/bench_concurrency.py             # 12 jobs, 3 repetitions
    python benchmarks/bench_concurrency.py --quick     # 4 jobs of 0.3 s, once
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import CONFIG, articles, blogpub_argv, hermetic_env, make_blog, pushes  # noqa: E402

DRAFT = """\
import json, os, sys, time
req = json.load(sys.stdin)
log = os.environ["BENCH_DRAFT_LOG"]
with open(log, "a") as fh:
    fh.write(f"start {time.time()!r}\\n")
time.sleep(float(os.environ["BENCH_DRAFT_SECONDS"]))
with open(log, "a") as fh:
    fh.write(f"end {time.time()!r}\\n")
print(json.dumps({"text": req["source"]}))
"""


@dataclass
class Run:
    wall: float  # `run --until-idle`, start to exit
    drafting: float  # first draft start to last draft end
    most: int  # drafts running at once, at most
    pushes: int


def prepare_blog(base: Path, texts: list[str]) -> tuple[Path, Path]:
    """A blog whose draft step is the sleeping command, trusted, with the jobs submitted."""
    blog, remote = make_blog(base)
    script = base / "draft.py"
    script.write_text(DRAFT)
    steps = f"\n[steps]\ndraft = {json.dumps([sys.executable, str(script)])}\n"
    (blog / ".blogpub.toml").write_text(CONFIG + steps)
    argv, _ = blogpub_argv()
    subprocess.run([*argv, "trust", "--yes"], cwd=blog, check=True, capture_output=True)
    for i, text in enumerate(texts):
        src = base / f"source-{i}.mdx"
        src.write_text(text)
        subprocess.run(
            [*argv, "submit", "--key", f"bench-{i}", "--source", str(src)],
            cwd=blog,
            check=True,
            capture_output=True,
        )
    return blog, remote


def timed_run(blog: Path, remote: Path, concurrency: int, seconds: float, count: int) -> Run:
    log = blog.parent / "drafts.log"
    env = {**os.environ, "BENCH_DRAFT_LOG": str(log), "BENCH_DRAFT_SECONDS": str(seconds)}
    argv, _ = blogpub_argv()
    cmd = [*argv, "run", "--until-idle", "--quiet", "--concurrency", str(concurrency)]
    started = time.perf_counter()
    subprocess.run(cmd, cwd=blog, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - started
    events = [line.split() for line in log.read_text().splitlines()]
    starts = [float(t) for kind, t in events if kind == "start"]
    ends = [float(t) for kind, t in events if kind == "end"]
    published = subprocess.run(
        ["git", "log", "--format=%H", "--fixed-strings", "--grep=Blog-Job-Id: ", "main"],
        cwd=remote,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    if len(starts) != count or len(published) != count or pushes(remote) != 1:
        raise SystemExit(
            f"--concurrency {concurrency}: {len(starts)} drafts, {len(published)} job commits, "
            f"{pushes(remote)} pushes for {count} jobs"
        )
    return Run(wall, max(ends) - min(starts), _most_at_once(events), pushes(remote))


def _most_at_once(events: list[list[str]]) -> int:
    running = most = 0
    for kind, _ in sorted(events, key=lambda e: (float(e[1]), e[0] == "start")):
        running += 1 if kind == "start" else -1
        most = max(most, running)
    return most


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 jobs of 0.3 s, once")
    ap.add_argument("--jobs", type=int, default=None, help="jobs per run (default 12)")
    ap.add_argument("--seconds", type=float, default=None, help="draft seconds (default 1)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 3)")
    ap.add_argument("--concurrency", type=int, default=4, help="the overlapping worker's N")
    args = ap.parse_args(argv)
    count = args.jobs or (4 if args.quick else 12)
    seconds = args.seconds or (0.3 if args.quick else 1.0)
    reps = args.reps or (1 if args.quick else 3)
    levels = (1, args.concurrency)

    scratch = Path(tempfile.mkdtemp(prefix="gitpub-bench-concurrency-"))
    runs: dict[int, list[Run]] = {n: [] for n in levels}
    try:
        hermetic_env(scratch / "home")
        for rep in range(reps):
            texts = articles(count, seed=rep)
            # Alternate which goes first, so neither always meets a warmer machine.
            for n in levels if rep % 2 == 0 else levels[::-1]:
                blog, remote = prepare_blog(scratch / f"r{rep}-c{n}", texts)
                runs[n].append(timed_run(blog, remote, n, seconds, count))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{count} jobs, an external draft step of {seconds:g} s each, local bare remote")
    print(f"medians of {reps} run(s); `git blogpub run --until-idle --concurrency N`\n")
    header = f"{'N':>3} {'drafting s':>11} {'run s':>8} {'at once':>8} {'pushes':>7} {'vs N=1':>7}"
    print(header)
    print("-" * len(header))
    base = statistics.median(r.wall for r in runs[1])
    for n in levels:
        wall = statistics.median(r.wall for r in runs[n])
        drafting = statistics.median(r.drafting for r in runs[n])
        most = max(r.most for r in runs[n])
        pushed = max(r.pushes for r in runs[n])
        print(f"{n:>3} {drafting:>11.2f} {wall:>8.2f} {most:>8} {pushed:>7} {wall / base:>6.2f}×")
    print("\ndrafting: first draft start to last draft end, as the draft command logs them;")
    print("at once: most drafts running together; pushes: counted by the remote's hook")
    return 0


if __name__ == "__main__":
    sys.exit(main())
