"""`git blogpub sweep`: deliver external_sync events now."""

from __future__ import annotations

from pathlib import Path

from gitpub.cli.commands.output import say, warn
from gitpub.context import open_context
from gitpub.sync import edits


def main(path: Path) -> None:
    with open_context(path) as ctx:
        if ctx.config.sync.hand_edits == "off":
            say('external_sync: hand edits are not delivered ([sync] hand_edits = "off")')
            return
        edits.register_hints(ctx, at_once=True)  # a person asked: look at git now
        report = edits.deliver(ctx)
        open_paths = edits.undelivered(ctx)
    say(f"external_sync: {report.delivered} event(s) delivered")
    for status, paths in open_paths.items():
        how = "in conflict" if status == "conflict" else "waiting"
        warn(f"external_sync: not delivered ({how}): {', '.join(paths)}")
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
