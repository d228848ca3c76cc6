"""Front matter as the site generators read it: YAML `---`, TOML `+++`, JSON `{ … }`.

The article's bytes are only ever read here, never rewritten. A strict parse with a real
parser comes first; when it fails, a tolerant reading of top-level `key: value` (or
`key = value`) lines still finds the title, slug and date, because generators accept more
than the strict libraries do (Go's YAML reads flow lists indented with tabs, which PyYAML
rejects). Only front matter no generator could read — an opening delimiter that never
closes, or a block with no readable entry at all — is an error."""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

_DELIMITERS = {"---": "yaml", "+++": "toml"}
_ENTRY = re.compile(r"^([A-Za-z_][\w.-]*)\s*[:=]\s?(.*)$")


@dataclass(frozen=True)
class FrontMatter:
    kind: str | None  # "yaml", "toml", "json", or None when the text has no front matter
    data: dict[str, Any] = field(default_factory=dict)
    body_start_line: int = 1  # 1-based line where the body starts
    error: str | None = None  # set only when no generator could read the block
    tolerant: bool = False  # the strict parser refused it; data comes from the tolerant reading

    def text(self, key: str) -> str | None:
        """A scalar entry as a string (YAML may have read a title as a number or a date)."""
        value = self.data.get(key)
        if value is None or isinstance(value, (dict, list)):
            return None
        if isinstance(value, bool):
            return None
        out = value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else str(value)
        return out.strip() or None

    @property
    def title(self) -> str | None:
        return self.text("title")

    @property
    def slug(self) -> str | None:
        return self.text("slug")

    @property
    def date(self) -> dt.datetime | None:
        return to_datetime(self.data.get("date"))

    @property
    def unreadable_date(self) -> str | None:
        """The `date` as written when it is there but no date (`date: someday`)."""
        raw = self.data.get("date")
        return None if raw is None or raw == "" or self.date is not None else str(raw)


def parse(text: str) -> FrontMatter:
    lines, first = _opening(text)
    if first in _DELIMITERS:
        return _delimited(lines, first, _DELIMITERS[first])
    if first.startswith("{"):
        return _json(text)
    return FrontMatter(None)


def body_start(text: str) -> int:
    """`parse(text).body_start_line` without reading the front matter's entries (the judge
    compares bodies only, of every article of a blog)."""
    lines, first = _opening(text)
    if first in _DELIMITERS:
        end = _closing_line(lines, first, _DELIMITERS[first])
        return len(lines) + 1 if end is None else end + 2
    return _json(text).body_start_line if first.startswith("{") else 1


def _opening(text: str) -> tuple[list[str], str]:
    """The text's lines, and its first line as a front matter delimiter would stand there."""
    lines = text.split("\n")
    return lines, lines[0].lstrip("\ufeff").rstrip() if lines else ""


def _closing_line(lines: list[str], delimiter: str, kind: str) -> int | None:
    closers = {delimiter, "..."} if kind == "yaml" else {delimiter}
    return next((i for i in range(1, len(lines)) if lines[i].rstrip() in closers), None)


def _delimited(lines: list[str], delimiter: str, kind: str) -> FrontMatter:
    end = _closing_line(lines, delimiter, kind)
    if end is None:
        return FrontMatter(
            kind,
            body_start_line=len(lines) + 1,
            error=f"front matter opened with {delimiter} on line 1 is never closed",
        )
    block = "\n".join(lines[1:end])
    strict = _strict(kind, block)
    if strict is not None:
        return FrontMatter(kind, strict, end + 2)
    loose = _tolerant(lines[1:end])
    if not loose and block.strip():
        return FrontMatter(
            kind,
            body_start_line=end + 2,
            error=f"front matter (lines 2-{end}) is neither {kind.upper()} nor key: value lines",
        )
    return FrontMatter(kind, loose, end + 2, tolerant=bool(block.strip()))


def _strict(kind: str, block: str) -> dict[str, Any] | None:
    try:
        data = yaml.safe_load(block) if kind == "yaml" else tomllib.loads(block)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError):
        return None
    if data is None:
        return {}
    return data if isinstance(data, dict) else None


def _json(text: str) -> FrontMatter:
    # Hugo's JSON front matter is one object at the very start of the file.
    try:
        data, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError:
        return FrontMatter(None)  # not front matter: a body that happens to start with "{"
    if not isinstance(data, dict):
        return FrontMatter(None)
    return FrontMatter("json", data, text.count("\n", 0, end) + 2)


def _tolerant(lines: list[str]) -> dict[str, str | None]:
    """Top-level scalar entries, read line by line; nested and multi-line values are left."""
    out: dict[str, str | None] = {}
    for line in lines:
        m = _ENTRY.match(line.rstrip())
        if m is None:
            continue
        key, value = m.group(1), m.group(2).strip()
        if value.startswith(("[", "{", "|", ">")) or not value:
            out.setdefault(key, None)
            continue
        out[key] = _unquote(_strip_comment(value))
    return out


def _strip_comment(value: str) -> str:
    if value[:1] in "\"'":
        return value
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


_DATE = re.compile(
    r"(\d{4})([-/.])(\d{1,2})\2(\d{1,2})"  # 2016-10-09, 2016/10/09, 2016.10.09
    r"(?:[ T]+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?"  # 19:18, 8:09:35, 19:18:24.5
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?$",  # Z, +08:00, +0800, -05
    re.IGNORECASE,
)


def to_datetime(value: object) -> dt.datetime | None:
    """A front-matter date as the generators read them: YAML/TOML dates and datetimes, or the
    strings they accept — `2024-05-01`, `2024-05-01 10:30`, `2016/10/09 19:18:24` (Hexo's and
    VitePress's own), `2017-08-13 21:30:00 +0800`, ISO 8601 with an offset. None for anything
    else (the caller names it: an unreadable date is never quietly today)."""
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        pass
    m = _DATE.match(text)
    if m is None:
        return None
    year, _, month, day, hour, minute, second, offset = m.groups()
    try:
        moment = dt.datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0)
        )
        return moment.replace(tzinfo=_zone(offset)) if offset else moment
    except ValueError:
        return None


def _zone(offset: str) -> dt.timezone:
    if offset.upper() == "Z":
        return dt.timezone.utc
    digits = offset[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:4] or 0)
    return dt.timezone(dt.timedelta(minutes=-minutes if offset[0] == "-" else minutes))
