"""What watching review branches adds to a worker pass, against the fetch every pass makes.

One blog (a bare remote and a clone) with N jobs submitted `--review` and delivered to their
review branches (built once, not timed). Timed, interleaved round by round in shuffled order,
in one process:

- fetch:        one fetch of the published branch (the floor: every delivery pass does it);
- watch, none:  `review.watch` with no job IN_REVIEW (what every blog not using review mode
                pays per pass: one indexed query);
- watch, N:     `review.watch` with the N jobs IN_REVIEW and nothing merged (fetch, one
                ls-remote, each job's manifest checked against the published tip).

    python benchmarks/bench_review.py              # 20 jobs, 15 rounds
    python benchmarks/bench_review.py --jobs 5 --rounds 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import articles, hermetic_env, make_blog  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()

    from gitpub import intake
    from gitpub.context import open_context
    from gitpub.core.states import State
    from gitpub.deliver import batch, review
    from gitpub.ops import worker
    from gitpub.store import jobs

    with tempfile.TemporaryDirectory(prefix="gitpub-bench-review-") as tmp:
        base = Path(tmp)
        hermetic_env(base / "home")
        empty, _ = make_blog(base / "empty")
        blog, _ = make_blog(base / "review")
        with open_context(blog) as ctx:
            for i, text in enumerate(articles(args.jobs, seed=7)):
                intake.submit(ctx, key=f"r{i}", text=text, review=True)
            worker.run_until_idle(ctx)
            waiting = [j for j in jobs.all_jobs(ctx.store) if j.state is State.IN_REVIEW]
            assert len(waiting) == args.jobs, [j.state for j in jobs.all_jobs(ctx.store)]
        with open_context(blog) as ctx, open_context(empty) as bare:
            variants: dict[str, Callable[[], object]] = {
                "fetch": lambda: batch.fetch_repairing(ctx),
                "watch, none": lambda: review.watch(bare),
                f"watch, {args.jobs}": lambda: review.watch(ctx),
            }
            times: dict[str, list[float]] = {name: [] for name in variants}
            order = list(variants)
            for _ in range(args.rounds):
                random.shuffle(order)
                for name in order:
                    start = time.perf_counter()
                    variants[name]()
                    times[name].append(time.perf_counter() - start)
            still = [j for j in jobs.all_jobs(ctx.store) if j.state is State.IN_REVIEW]
            assert len(still) == args.jobs  # nothing merged: watching settled nothing
    floor = statistics.median(times["fetch"])
    print(f"{'variant':<14} {'median ms':>10} {'× fetch':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<14} {median * 1000:>10.2f} {median / floor:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
