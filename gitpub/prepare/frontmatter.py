"""The small front-matter subset articles use: `---`, `key: value` lines, `---`."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, str]
    body_start_line: int  # 1-based line where the body starts (1 when there is no front matter)
    error: str | None = None


def parse(text: str) -> FrontMatter:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return FrontMatter({}, 1)
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return FrontMatter(fields, number + 1)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1] in " \t-":
            continue  # a nested value or list item; the keys we read are all top level
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            return FrontMatter(
                fields, number, f"line {number}: front matter entry is not `key: value`"
            )
        fields[key.strip()] = _unquote(value.strip())
    return FrontMatter(
        fields, len(lines) + 1, "line 1: front matter opened with --- is never closed"
    )


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def slugify(text: str) -> str:
    """A path-safe slug that keeps CJK characters (valid in URLs and file names)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE)
    return text.strip("-_")[:80]
