"""`git blogpub sweep`: deliver external_sync events now."""

from __future__ import annotations

from pathlib import Path

from gitpub import external
from gitpub.commands.output import say
from gitpub.context import open_context


def main(path: Path) -> None:
    with open_context(path) as ctx:
        external.register_hints(ctx)
        delivered = external.sweep(ctx)
        say(f"external_sync: {delivered} event(s) delivered")
