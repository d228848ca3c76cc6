"""`git blogpub retry` and `resolve`. Placeholder."""

from __future__ import annotations

from pathlib import Path

from gitpub.errors import GitpubError


def retry(path: Path, *, job_id: str) -> None:
    raise GitpubError("retry: not available in this build yet")


def resolve(path: Path, *, job_id: str, abandon: bool) -> None:
    raise GitpubError("resolve: not available in this build yet")
