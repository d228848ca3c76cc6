"""benchmarks/bench_mcp.py still runs, at its smallest settings (figures are not checked)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from testing.paths import ROOT

BENCH = ROOT / "benchmarks" / "bench_mcp.py"


def test_mcp_benchmark_times_every_variant(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "1", "--live", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split()[:2] for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert [r[0] for r in rows[:3]] == ["mcp", "cli", "mcp"]
    assert "cli submit / mcp submit:" in proc.stdout
    assert "submit -> PUBLISHED with --worker" in proc.stdout
