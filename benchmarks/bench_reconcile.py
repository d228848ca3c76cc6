"""Start-up reconcile with a large store: 10,000 finished jobs and 100 interrupted ones.

The 100 interrupted jobs died between "git commit" and "recorded in the database" (the
after_local_commit_before_db crash): their commits exist, their rows still say
LOCAL_COMMITTING. Start-up reconcile must find them among 10,100 rows and settle each one
(RECOVERING → LOCAL_COMMITTED, found through `refs/blog-jobs/<id>`), with no network.

Timed, medians of several repetitions (the store file is restored between repetitions):
  scan     — the queries that pick the interrupted and due jobs out of the whole store
  settle   — recovering all 100 interrupted jobs: claimed together, each found through its
             job ref, LOCAL_COMMITTING → RECOVERING → LOCAL_COMMITTED committed together

    python benchmarks/bench_reconcile.py            # 10,000 + 100, 5 repetitions
    python benchmarks/bench_reconcile.py --quick    # 1,000 + 20, 3 repetitions
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import CONFIG, hermetic_env  # noqa: E402  (shared set-up of the spine bench)

from gitpub import intake, prepare  # noqa: E402
from gitpub.context import Context, open_context  # noqa: E402
from gitpub.core.states import State  # noqa: E402
from gitpub.deliver.commit import make_commit  # noqa: E402
from gitpub.ops import worker  # noqa: E402
from gitpub.ops.reconcile import settle_interrupted_commits  # noqa: E402
from gitpub.ops.runner import interrupted  # noqa: E402
from gitpub.store import jobs
from gitpub.store.db import now  # noqa: E402


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_blog(base: Path) -> Path:
    remote, root = base / "remote.git", base / "blog"
    git(base, "init", "--quiet", "--bare", str(remote))
    git(base, "clone", "--quiet", str(remote), str(root))
    (root / ".blogpub.toml").write_text(CONFIG)
    (root / "content" / "posts").mkdir(parents=True)
    (root / "content" / "posts" / "hello.mdx").write_text("---\ntitle: Hello\n---\n\nHi.\n")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "scaffold")
    git(root, "push", "--quiet", "origin", "HEAD:main")
    return root


def interrupt_jobs(ctx: Context, count: int) -> None:
    """`count` jobs committed in git whose rows still say LOCAL_COMMITTING."""
    for i in range(count):
        text = f"---\ntitle: Interrupted {i}\n---\n\nBody {i} {uuid.uuid4().hex}\n"
        job, _ = intake.create(ctx, key=f"interrupted-{i}", source=text)
        job = prepare.prepare(ctx, job, lambda j: j)
        assert job.state is State.READY_TO_COMMIT, job.state
        job = jobs.transition(ctx.store, job, State.LOCAL_COMMITTING, "commit:start")
        make_commit(ctx, job)


def add_finished(ctx: Context, count: int) -> None:
    """`count` PUBLISHED rows with a realistic event history (14 events each)."""
    stamp = now()
    steps = [
        "submit",
        "prepare:start",
        "base",
        "step:draft",
        "step:judge",
        "target",
        "step:scan",
        "step:validate",
        "step:manifest",
        "prepare:done",
        "commit:start",
        "commit",
        "relay:start",
        "published",
    ]
    with ctx.store.transaction() as conn:
        for i in range(count):
            job_id = str(uuid.uuid4())
            conn.execute(
                "INSERT INTO blog_publication (job_id, idempotency_key, kind, state, source_sha256,"
                " source_path, max_attempts, remote_commit, created_at, updated_at)"
                " VALUES (?, ?, 'article', 'PUBLISHED', ?, ?, 8, ?, ?, ?)",
                (
                    job_id,
                    f"done-{i}",
                    "0" * 64,
                    f"jobs/{job_id}/source.txt",
                    "1" * 40,
                    stamp,
                    stamp,
                ),
            )
            conn.executemany(
                "INSERT INTO blog_publication_event (job_id, seq, step, detail, at)"
                " VALUES (?, ?, ?, ?, ?)",
                [(job_id, n + 1, s, json.dumps({"n": n}), stamp) for n, s in enumerate(steps)],
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    finished, unfinished, reps = (1000, 20, 3) if args.quick else (10_000, 100, 5)

    base = Path(tempfile.mkdtemp(prefix="gitpub-bench-reconcile-"))
    try:
        hermetic_env(base / "home")
        root = make_blog(base)
        with open_context(root) as ctx:
            t0 = time.perf_counter()
            interrupt_jobs(ctx, unfinished)
            add_finished(ctx, finished)
            setup = time.perf_counter() - t0
            db = ctx.store.path
        pristine = base / "pristine.sqlite3"
        shutil.copyfile(db, pristine)

        scans, settles = [], []
        for _ in range(reps):
            for suffix in ("-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)
            shutil.copyfile(pristine, db)
            with open_context(root) as ctx:
                t0 = time.perf_counter()
                ids = interrupted(ctx)
                due = worker.due_job_ids(ctx)
                t1 = time.perf_counter()
                settled = settle_interrupted_commits(ctx, "bench")
                t2 = time.perf_counter()
            assert len(ids) == unfinished and len(due) == unfinished
            assert len(settled) == unfinished
            scans.append(t1 - t0)
            settles.append(t2 - t1)
        scan, settle = statistics.median(scans), statistics.median(settles)
        print(
            f"store: {finished:,} finished + {unfinished} interrupted jobs "
            f"(set-up {setup:.1f} s, not timed); {reps} repetitions, medians"
        )
        print(f"{'part':<34}{'median':>12}")
        print(f"{'scan (pick interrupted + due)':<34}{scan * 1000:>10.1f} ms")
        label = f"settle {unfinished} interrupted jobs"
        print(f"{label:<34}{settle * 1000:>10.1f} ms")
        print(f"{'per interrupted job':<34}{settle / unfinished * 1000:>10.2f} ms")
        print(f"{'start-up reconcile total':<34}{(scan + settle) * 1000:>10.1f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
