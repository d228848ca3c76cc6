"""`git blogpub scan [--json] PATH…|-`: report secrets in files, never the secrets themselves.

Exit 1 when anything is found, 0 when clean; a path that cannot be read is a usage error
(exit 2), so a blog's CI can tell "found a secret" from "scanned nothing"."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gitpub import scan
from gitpub.cli.commands.output import emit_json, say


def _allowed(start: Path) -> frozenset[str]:
    """`[scan] allow` of the repository around `start`, when there is one.

    Found by walking up to the directory holding `.git`, not through pygit2: the scan
    command stays as light as a linter."""
    from gitpub import config

    for folder in [start.resolve(), *start.resolve().parents]:
        if (folder / ".git").exists():
            if (folder / config.CONFIG_NAME).is_file():
                return config.load(folder).scan.allow
            return frozenset()
    return frozenset()


def _read(name: str) -> str:
    """The file as the submit door reads a text asset (UTF-16 behind its mark, Latin-1, ...);
    a binary file, which that door lets pass, is still read here as far as UTF-8 goes."""
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise click.UsageError(f"{name}: cannot read: {exc.strerror}") from None
    text = scan.as_text(data)
    return text if text is not None else data.decode("utf-8", "replace")


def main(path: Path, *, paths: tuple[str, ...], as_json: bool) -> int:
    if not paths:
        raise click.UsageError("give at least one PATH, or - for standard input")
    allow = _allowed(path)
    findings: list[dict[str, object]] = []
    for name in paths:
        text = _read(name)
        shown = "<stdin>" if name == "-" else name
        for f in scan.scan(text, path=None if name == "-" else name, allow=allow):
            findings.append({"path": shown, **f.public()})
    if as_json:
        emit_json({"findings": findings})
    else:
        for row in findings:
            say(
                f"{row['path']} line {row['line']}: {row['kind']} "
                f"(fingerprint {row['fingerprint']})"
            )
    return 1 if findings else 0
