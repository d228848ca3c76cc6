"""`git blogpub sweep`: deliver external_sync events now."""

from __future__ import annotations

from pathlib import Path

from gitpub import external
from gitpub.commands.output import say, warn
from gitpub.context import open_context


def main(path: Path) -> None:
    with open_context(path) as ctx:
        external.register_hints(ctx)
        report = external.deliver(ctx)
    say(f"external_sync: {report.delivered} event(s) delivered")
    if report.conflicts:
        warn(
            "external_sync: the local branch does not rebase onto the remote ("
            + ", ".join(report.conflicts)
            + "); pull and merge by hand, then it is delivered"
        )
    for problem in report.problems:
        warn(f"external_sync: will retry: {problem}")
    if report.branch not in ("up to date", "moved"):
        warn(f"external_sync: local branch not moved onto the remote: {report.branch}")
