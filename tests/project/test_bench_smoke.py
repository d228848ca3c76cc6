"""The benchmark scripts still run, at their smallest settings (figures are not checked)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from testing.paths import ROOT

BENCH = ROOT / "benchmarks"


def _run(tmp_path: Path, script: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # the lookup cache lands in tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_lookup_benchmark_finds_every_case_by_ref_and_by_scan(tmp_path: Path) -> None:
    out = _run(
        tmp_path,
        "bench_lookup.py",
        "--commits",
        "200",
        "--jobs",
        "10",
        "--reps",
        "1",
    )
    rows = [line[:10].strip() for line in out.splitlines() if line.startswith(("near", "middle"))]
    assert rows == ["near tip", "middle", "near root"]  # each found, by ref and scan alike
    assert list(tmp_path.glob("gitpub-bench-lookup-*/.complete"))
    # A second run reuses the cached repository instead of building it again.
    assert "building" not in _run(
        tmp_path,
        "bench_lookup.py",
        "--commits",
        "200",
        "--jobs",
        "10",
        "--reps",
        "1",
    )


def test_e2e_benchmark_publishes_three_jobs_in_one_push(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_e2e.py", "--jobs", "3", "--reps", "1")
    rows = [line for line in out.splitlines() if line.startswith(("library", "CLI"))]
    assert len(rows) == 2
    header = next(line.split() for line in out.splitlines() if "pushes/job" in line)
    column = header.index("pushes/job") - len(header)  # counted from the right: names have spaces
    # Submitted together, delivered together: one push (counted by the hook) for three jobs.
    assert all(row.split()[column] == "0.33" for row in rows)


def test_batch_benchmark_publishes_each_size_in_one_push_beside_the_loop(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_batch.py", "--sizes", "4", "--reps", "1")
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("4 "))
    # articles, gitpub seconds, "s", gitpub pushes, loop seconds, "s", loop pushes, ratio
    assert row[3] == "1" and row[6] == "4"


def test_status_benchmark_runs_and_lists_a_screenful(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_status.py", "--quick", "--finished", "50")
    rows = {line.split("  ")[0]: line.split() for line in out.splitlines()[2:]}
    assert set(rows) == {"status", "status --json", "status --all", "queries only"}
    assert rows["status"][-2] == "16"  # 2 open jobs + the newest 10 finished, headings, tail
    assert rows["status --all"][-2] == "55"


def test_scan_benchmark_reports_recall_false_positives_and_speed(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_scan.py", "--quick", "--gitpub-only")
    row = next(line for line in out.splitlines() if line.startswith("gitpub"))
    assert row.split()[-1].replace(".", "").isdigit()  # MB/s
    assert "in prose" in out and "FP files" in out


def test_submit_benchmark_runs_and_submit_loads_no_heavy_module(tmp_path: Path) -> None:
    # This interpreter as its own baseline: the option runs, in a blog of its own.
    out = _run(tmp_path, "bench_submit.py", "--rounds", "1", "--baseline", sys.executable)
    assert "heavy modules imported by submit: none" in out
    names = [line[2:22].strip() for line in out.splitlines() if line.endswith("x")]
    assert names == [
        "floor",
        "libraries",
        "submit",
        "git blogpub submit",
        "status",
        "submit, baseline",
        "status, baseline",
    ]


def test_rebuild_benchmark_rebuilds_every_job(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_rebuild.py", "--quick")
    assert "store: 200 submitted + 10 committed jobs" in out  # its own asserts checked the rest
    assert any(line.startswith("rebuild, all jobs") for line in out.splitlines())


def test_scale_benchmark_publishes_on_a_built_history_and_reads_peak_memory(
    tmp_path: Path,
) -> None:
    out = _run(
        tmp_path,
        "bench_scale.py",
        "--commits",
        "200",
        "--articles",
        "200",
        "--jobs",
        "1",
        "--reps",
        "1",
        "--big-mb",
        "1",
    )
    assert "blog: 200 commits, 200 articles" in out
    assert "ended PUBLISHED" in out  # the big source went through, its peak memory measured
    assert list(tmp_path.glob("gitpub-bench-scale-*-c200-a200.git/.complete"))


def test_review_benchmark_runs_and_settles_nothing(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_review.py", "--jobs", "2", "--rounds", "1")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["fetch", "watch,", "watch,"]


def test_fleet_benchmark_publishes_every_job_once_on_both_stores(
    tmp_path: Path, pg_url: str
) -> None:
    # The session's PostgreSQL (pg_url skips where none is installed): the benchmark's own
    # throwaway cluster would cost this suite a second initdb.
    args = ("--jobs", "3", "--rounds", "1", "--workers", "2", "--store", pg_url)
    out = _run(tmp_path, "bench_fleet.py", *args, "--draft-seconds", "0.1")
    rows = {
        line[:24].strip(): line[24:].replace("|", " ").split()
        for line in out.splitlines()
        if line.startswith(("SQLite,", "PostgreSQL,"))
    }
    assert set(rows) == {"SQLite, 1 worker", "PostgreSQL, 2 workers"}
    # Built-in steps, then the sleeping draft step: seconds, jobs/s, ratio, pushes, bounced,
    # rechecks each.
    assert all(len(row) == 12 for row in rows.values())
    assert rows["SQLite, 1 worker"][3] == "1"  # one worker, three ready jobs: one push
    assert 1 <= int(rows["PostgreSQL, 2 workers"][3]) <= 3
    assert "each job in exactly one commit, every round (3 jobs)" in out
    counted = re.search(r"statements per job.*SQLite ([0-9.]+), PostgreSQL ([0-9.]+)", out)
    assert counted is not None and all(float(n) > 0 for n in counted.groups())


def test_ui_benchmark_times_every_request(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_ui.py", "--finished", "20")
    rows = [line.split("  ")[0] for line in out.splitlines() if " ms" in line]
    assert rows == [
        "metrics, 1st",
        "list",
        "list, page 100",
        "list, text",
        "job",
        "fleet",
        "metrics, again",
    ]


def test_concurrency_benchmark_overlaps_drafts_and_pushes_once(tmp_path: Path) -> None:
    out = _run(tmp_path, "bench_concurrency.py", "--jobs", "3", "--seconds", "0.1", "--reps", "1")
    rows = {
        line.split()[0]: line.split() for line in out.splitlines() if line[:3].strip().isdigit()
    }
    assert set(rows) == {"1", "4"}
    # Columns: N, drafting s, run s, at once, pushes, ratio. One push each (checked inside too).
    assert rows["1"][3] == "1" and rows["1"][4] == "1" and rows["4"][4] == "1"
