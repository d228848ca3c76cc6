"""The font benchmark still runs, at its smallest setting (its figures are not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.fontkit import cjk_font
from testing.paths import ROOT

BENCH = ROOT / "benchmarks" / "bench_fonts.py"


def test_font_benchmark_prints_the_three_tools_side_by_side(tmp_path: Path) -> None:
    cjk_font()  # skips without a CJK font, as the benchmark needs one
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--sizes", "50"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (row,) = [line for line in proc.stdout.splitlines() if line.strip().startswith("50 |")]
    assert row.count(" B ") == 3 and "× wall" in row


def test_chunked_font_benchmark_prints_the_three_ways_and_the_no_op_gate(tmp_path: Path) -> None:
    cjk_font()
    bench = BENCH.with_name("bench_fonts_chunked.py")
    proc = subprocess.run(
        [sys.executable, str(bench), "--chars", "50", "--reps", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    rows: dict[str, str] = {}
    for line in proc.stdout.splitlines():  # the first line naming each way: the rebuild table
        if line.strip():
            rows.setdefault(line.split()[0], line)
    assert "whole subset" in rows["pyftsubset"]
    # One new character: the chunked gate rewrote one chunk file, and the stylesheet only
    # when the character is the first of its slice.
    rewritten = rows["chunked"].split("×")[-1].strip().split(", ")
    assert len([f for f in rewritten if f.endswith(".woff2")]) == 1
    css = ["blog.css"] if "new to the blog" in proc.stdout else []
    assert sorted(f for f in rewritten if not f.endswith(".woff2")) == css
    assert "× status" in proc.stdout and "chunks (" in proc.stdout
