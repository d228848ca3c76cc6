"""`git blogpub status` on a blog that has published for years against one that has one job.

Two blogs, each with one job waiting for a person (REVIEW) and one job in flight; the big one
also holds 10,000 PUBLISHED jobs with a realistic event history (14 events each). Timed as a
user runs it (a `git blogpub` process per call, start-up included), medians of repetitions:

    status            the screen a person reads
    status --json     what a script reads (finished jobs summarized)
    status --all      every job (grows with the store, by design)

    python benchmarks/bench_status.py            # 10,000 finished jobs, 7 repetitions
    python benchmarks/bench_status.py --quick    # 1,000 finished jobs, 3 repetitions
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import hermetic_env  # noqa: E402
from bench_reconcile import add_finished, make_blog  # noqa: E402

from gitpub import intake  # noqa: E402
from gitpub.context import open_context  # noqa: E402
from gitpub.core.states import State  # noqa: E402
from gitpub.store import jobs  # noqa: E402
from gitpub.store import listing as joblist

CASES = (("status",), ("status", "--json"), ("status", "--all"))


def prepare_blog(base: Path, finished: int) -> Path:
    base.mkdir(parents=True)
    root = make_blog(base)
    with open_context(root) as ctx:
        add_finished(ctx, finished)
        stuck, _ = intake.create(ctx, key="stuck", source="---\ntitle: Stuck\n---\n\nWaits.\n")
        stuck = jobs.transition(ctx.store, stuck, State.PREPARING, "prepare:start")
        jobs.transition(
            ctx.store, stuck, State.REVIEW, "prepare:done", {"reason": "validate: not MDX"}
        )
        intake.create(ctx, key="fresh", source="---\ntitle: Fresh\n---\n\nJust in.\n")
    return root


def timed(root: Path, args: tuple[str, ...], reps: int) -> tuple[float, int, int]:
    """Median seconds of `git blogpub -C root ARGS`, and its output's lines and bytes."""
    times, out = [], b""
    for _ in range(reps):
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "gitpub", "-C", str(root), *args],
            capture_output=True,
            check=True,
        ).stdout
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out.count(b"\n"), len(out)


def queried(root: Path, reps: int) -> float:
    """Median seconds of the queries behind `status` (the listing and its reasons), in
    process: the part that could grow with the store, without interpreter start-up."""
    times = []
    with open_context(root, need_remote=False) as ctx:
        for _ in range(reps * 10):
            t0 = time.perf_counter()
            listing = joblist.select(ctx.store)
            for job in listing.jobs:
                joblist.reason(ctx.store, job.job_id)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--finished", type=int, default=None)
    args = parser.parse_args()
    finished, reps = (1000, 3) if args.quick else (10_000, 7)
    finished = args.finished if args.finished is not None else finished

    base = Path(tempfile.mkdtemp(prefix="gitpub-bench-status-"))
    try:
        hermetic_env(base / "home")
        small = prepare_blog(base / "small", 0)
        big = prepare_blog(base / "big", finished)
        print(f"2 open jobs; {finished:,} finished jobs in the big store; {reps} runs, medians")
        print(
            f"{'command':<16}{'1 job':>10}{f'{finished:,} finished':>18}{'ratio':>8}"
            f"{'lines':>8}{'bytes':>10}"
        )
        for case in CASES:
            t_small, _, _ = timed(small, case, reps)
            t_big, lines, size = timed(big, case, reps)
            print(
                f"{' '.join(case):<16}{t_small * 1000:>8.0f} ms{t_big * 1000:>15.0f} ms"
                f"{t_big / t_small:>8.2f}{lines:>8,}{size:>10,}"
            )
        q_small, q_big = queried(small, reps), queried(big, reps)
        print(
            f"{'queries only':<16}{q_small * 1000:>8.2f} ms{q_big * 1000:>15.2f} ms"
            f"{q_big / q_small:>8.2f}"
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
