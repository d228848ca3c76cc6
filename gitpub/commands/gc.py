"""`git blogpub gc`. Placeholder."""

from __future__ import annotations

from pathlib import Path

from gitpub.errors import GitpubError


def main(path: Path) -> None:
    raise GitpubError("gc: not available in this build yet")
