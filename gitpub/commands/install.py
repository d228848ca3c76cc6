"""`git blogpub install` / `uninstall`. Placeholder until the hooks land."""

from __future__ import annotations

from pathlib import Path

from gitpub.errors import GitpubError


def install(path: Path) -> None:
    raise GitpubError("install: not available in this build yet")


def uninstall(path: Path) -> None:
    raise GitpubError("uninstall: not available in this build yet")
