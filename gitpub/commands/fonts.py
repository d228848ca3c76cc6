"""`git blogpub fonts` and `git blogpub rebase`. Placeholder until the font engine lands."""

from __future__ import annotations

from pathlib import Path

from gitpub.errors import GitpubError


def main(path: Path, *, check: bool) -> None:
    raise GitpubError("fonts: not available in this build yet")


def rebase(path: Path, *, upstream: str | None) -> None:
    raise GitpubError("rebase: not available in this build yet")
