"""`git blogpub doctor`. Placeholder."""

from __future__ import annotations

from pathlib import Path

from gitpub.errors import GitpubError


def main(path: Path, *, as_json: bool) -> None:
    raise GitpubError("doctor: not available in this build yet")
