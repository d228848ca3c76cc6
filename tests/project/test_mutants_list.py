"""Every curated mutant names guarding tests that exist: a renamed test must not leave a
mutant pointing at nothing (the mutation run would then report an error, not a kill)."""

from __future__ import annotations

import subprocess
import sys

from testing.paths import ROOT


def test_every_mutant_names_existing_tests() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "mutation"))
    try:
        import run
    finally:
        sys.path.pop(0)
    missing = []
    for mutant in run.MUTANTS:
        source = ROOT / mutant.file
        if not source.is_file() or source.read_text(encoding="utf-8").count(mutant.old) != 1:
            missing.append(f"{mutant.name}: its snippet is not once in {mutant.file}")
        for test in mutant.tests:
            file, _, name = test.partition("::")
            if f"def {name.split('[')[0]}(" not in (ROOT / file).read_text(encoding="utf-8"):
                missing.append(f"{mutant.name}: {test}")
    assert missing == []


def test_every_parametrized_guard_is_collected() -> None:
    """A guard named with its parameters (`test_x[a-1-sqlite]`) must be a test pytest
    collects: a new parameter renames every case (a mutation run would find none)."""
    sys.path.insert(0, str(ROOT / "tests" / "mutation"))
    try:
        import run
    finally:
        sys.path.pop(0)
    wanted = {t for m in run.MUTANTS for t in m.tests if "[" in t}
    files = sorted({t.partition("::")[0] for t in wanted})
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-m", "", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert sorted(wanted - set(listed)) == []
