"""The web page and `/metrics` of a blog that has published for years, against one with two
jobs: the same two open jobs (one in REVIEW, one just submitted), and in the big store
10,000 PUBLISHED jobs with a realistic event history (14 events each).

Each figure is the median time of one HTTP request to the real server (in process, on
127.0.0.1), as the page's refresh sends it every few seconds:

    list              the first page of every job (the "all" tab)
    list, page 100    a deep page (OFFSET 4,950)
    list, text        a filter by text (a scan of the table, the one that grows)
    job               a finished job's page: timeline, manifest, diff
    fleet             leases, the delivery lock, the oldest due job
    metrics, 1st      the first scrape: every job's events read once
    metrics, again    a later scrape: only jobs that changed are read again

    python benchmarks/bench_ui.py              # 10,000 finished jobs, 7 repetitions
    python benchmarks/bench_ui.py --quick      # 1,000 finished jobs, 3 repetitions
"""

from __future__ import annotations

import argparse
import http.client
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import hermetic_env  # noqa: E402
from bench_status import prepare_blog  # noqa: E402

from gitpub.context import open_context  # noqa: E402
from gitpub.store import jobs  # noqa: E402
from gitpub.ui.app import serve_page  # noqa: E402


def get(port: int, path: str) -> tuple[float, int]:
    """Seconds for one GET and the size of its answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - t0
    conn.close()
    assert response.status == 200, (path, response.status)
    return elapsed, len(body)


def measure(root: Path, reps: int) -> dict[str, tuple[float, int]]:
    with open_context(root) as ctx:
        finished = [j for j in jobs.all_jobs(ctx.store) if j.state.value == "PUBLISHED"]
        sample = (finished[len(finished) // 2] if finished else jobs.all_jobs(ctx.store)[0]).job_id
    handle = serve_page(root)
    out: dict[str, tuple[float, int]] = {}
    try:
        out["metrics, 1st"] = get(handle.port, "/metrics")
        paths = {
            "list": "/?tab=all",
            "list, page 100": "/?tab=all&page=100",
            "list, text": "/?tab=all&text=Stuck",
            "job": f"/job/{sample}",
            "fleet": "/fleet",
            "metrics, again": "/metrics",
        }
        for name, path in paths.items():
            runs = [get(handle.port, path) for _ in range(reps)]
            out[name] = (statistics.median(t for t, _ in runs), runs[-1][1])
    finally:
        handle.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--finished", type=int, default=None)
    args = parser.parse_args()
    finished, reps = (1000, 3) if args.quick else (10_000, 7)
    finished = args.finished if args.finished is not None else finished
    base = Path(tempfile.mkdtemp(prefix="gitpub-bench-ui-"))
    try:
        hermetic_env(base / "home")
        small = measure(prepare_blog(base / "small", 0), reps)
        big = measure(prepare_blog(base / "big", finished), reps)
        print(f"2 open jobs; {finished:,} finished jobs in the big store; {reps} runs, medians")
        print(f"{'request':<16}{'2 jobs':>10}{f'{finished:,} finished':>18}{'bytes':>10}")
        for name, (t_big, size) in big.items():
            t_small = small[name][0]
            print(f"{name:<16}{t_small * 1000:>7.1f} ms{t_big * 1000:>15.1f} ms{size:>10,}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
