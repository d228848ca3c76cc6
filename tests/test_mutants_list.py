"""Every curated mutant names guarding tests that exist: a renamed test must not leave a
mutant pointing at nothing (the mutation run would then report an error, not a kill)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
