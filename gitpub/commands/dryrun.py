"""`git blogpub dry-run`. Placeholder."""

from __future__ import annotations

from pathlib import Path

from gitpub.errors import GitpubError


def main(path: Path, *, source: str, target: str | None) -> None:
    raise GitpubError("dry-run: not available in this build yet")
