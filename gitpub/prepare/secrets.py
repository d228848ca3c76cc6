"""Secrets in what prepare writes: a step's answer, the article, the text assets.

A step's answer is persisted only sanitized, and what leaked in it is kept as kind, line and
fingerprint so the REVIEW can name it. Before the manifest is sealed, the built-in ruleset
reads the article and every asset that is text (it decodes as UTF-8) once more, whatever the
configured `scan` step is: they go out in one commit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gitpub import scan


def text_files(
    path: str, text: str, placed: Mapping[str, str], assets: Mapping[str, bytes]
) -> list[tuple[str, str]]:
    """(path, text) of the article, then of each text asset at its place (by name)."""
    out = [(path, text)]
    for name in sorted(assets):
        body = scan.as_text(assets[name])
        if body is not None:
            out.append((placed[name], body))
    return out


def last_word(files: list[tuple[str, str]], allow: frozenset[str]) -> str | None:
    """The REVIEW reason when a file holds a secret nobody allowed (or a redaction marker),
    else None. The article's reason names no path (it is the job's target); an asset's does."""
    for i, (path, text) in enumerate(files):
        found = scan.scan(text, path=path, allow=allow) + scan.markers(text)
        if found:
            first = min(found, key=lambda f: f.line)
            about = f"{path}: " if i else ""
            return (
                f"secrets: {about}{first.kind} (fingerprint {first.fingerprint}) "
                f"(line {first.line})"
            )
    return None


def leaked(step: str, found: Sequence[Mapping[str, object]]) -> str:
    """The REVIEW reason for a step answer that held a secret."""
    first = found[0]
    where = f" (line {first['line']})" if first.get("field") == "text" else ""
    return (
        f"{step} step output holds a {first['kind']} (fingerprint {first['fingerprint']}) "
        f"in {first['field'] or 'its answer'}{where}; it was kept only sanitized. If it is no "
        f"secret, restore it on the job branch and `resolve --continue --allow "
        f"{first['fingerprint']}`"
    )
