"""`git blogpub doctor`: check the repository, config, hooks, store, locks and worktrees."""

from __future__ import annotations

from pathlib import Path

from gitpub.cli.commands.output import emit_json, say
from gitpub.fonts import engine
from gitpub.ops import doctor


def main(path: Path, *, as_json: bool) -> None:
    """Print every finding (or one JSON object); exit 1 (ProblemsFound) when one is a problem."""
    with engine.captured_log([]):  # fontTools' remarks on the source font are not findings
        report = doctor.diagnose(path)
    if as_json:
        emit_json(report.public())
    else:
        doctor.render(report, say)
    doctor.verdict(report)
