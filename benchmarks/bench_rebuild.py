"""What the rebuildable store costs, and what a rebuild takes.

A store of 2,000 submitted jobs and 50 committed ones (their commits behind
`refs/blog-jobs/<id>`, their rows lost mid-way) is built once. Timed, medians:

  submit          — one `intake.create` (source file, job record, row), of which
  job.json        — writing the job's durable record (an fsync'd file of ~400 bytes)
  lost check      — the question every command asks when it opens the database
  detection       — opening a truncated database beside the job folders (refused)
  rebuild         — `reconcile --rebuild` without the reconcile: move the lost database
                    aside, fetch, and remake every job from its folder, job ref and the remote

    python benchmarks/bench_rebuild.py            # 2,000 + 50 jobs, 3 rebuilds
    python benchmarks/bench_rebuild.py --quick    # 200 + 10 jobs, 1 rebuild
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import hermetic_env  # noqa: E402
from bench_reconcile import interrupt_jobs, make_blog  # noqa: E402

from gitpub import intake  # noqa: E402
from gitpub.context import open_context  # noqa: E402
from gitpub.ops import rebuild  # noqa: E402
from gitpub.store import folders as jobrecord
from gitpub.store import lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    received, committed, reps = (200, 10, 1) if args.quick else (2000, 50, 3)

    base = Path(tempfile.mkdtemp(prefix="gitpub-bench-rebuild-"))
    try:
        hermetic_env(base / "home")
        root = make_blog(base)
        submits, records = [], []
        with open_context(root) as ctx:
            interrupt_jobs(ctx, committed)
            for i in range(received):
                t0 = time.perf_counter()
                intake.create(ctx, key=f"bench-{i}", source=f"---\ntitle: P{i}\n---\n\nBody {i}\n")
                submits.append(time.perf_counter() - t0)
            for i in range(min(received, 500)):
                folder = base / "records" / str(i)
                t0 = time.perf_counter()
                jobrecord.create(folder, {"job_id": str(i), "created_at": "2026", "kind": "a"})
                records.append(time.perf_counter() - t0)
            state = ctx.state_dir
            t0 = time.perf_counter()
            for _ in range(100):
                lost.check(state, ctx.store.conn)
            check = (time.perf_counter() - t0) / 100
        db = state / "state.sqlite3"

        detections, rebuilds = [], []
        for _ in range(reps):
            for old in state.glob("state.sqlite3*"):
                old.unlink()
            db.write_bytes(b"")
            t0 = time.perf_counter()
            try:
                open_context(root).close()
            except lost.DatabaseLost:
                detections.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            done = rebuild.rebuild(root)
            rebuilds.append(time.perf_counter() - t0)
            assert len(done.states) == received + committed, done.left
            assert sum(s == "LOCAL_COMMITTED" for s in done.states.values()) == committed
        assert len(detections) == reps

        submit, record = statistics.median(submits), statistics.median(records)
        print(
            f"store: {received:,} submitted + {committed} committed jobs; medians "
            f"({len(submits)} submits, {reps} rebuilds)"
        )
        print(f"{'part':<38}{'median':>12}")
        print(f"{'submit (intake.create)':<38}{submit * 1000:>10.2f} ms")
        print(f"{'  of which job.json':<38}{record * 1000:>10.2f} ms  ({record / submit:.0%})")
        print(f"{'lost check at open (healthy store)':<38}{check * 1e6:>10.1f} µs")
        detection = statistics.median(detections)
        print(f"{'detection of a truncated database':<38}{detection * 1000:>10.1f} ms")
        total = statistics.median(rebuilds)
        print(f"{'rebuild, all jobs':<38}{total:>10.2f} s")
        print(f"{'  per job':<38}{total / (received + committed) * 1000:>10.2f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
