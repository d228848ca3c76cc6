"""`--since`: a moment given as an age (`90m`, `2h`, `3d`, `1w`) or a UTC date or time
(`2026-11-30`, `2026-11-30T08:00`, `2026-11-30 08:00:00`); `--at`: a moment to publish at.

Both are ASCII: `\\d` in a Python pattern also takes Arabic-Indic or Devanagari digits, which
`int()` then reads as numbers (`+١٠m` was ten minutes). Both keep to the years 1000–9999:
the store writes a time as text that sorts in time order only with a four-digit year (glibc's
`%Y` writes 999 as `999`, which sorts after 2026), so a moment outside them is refused here,
with one line, rather than stored where it would never come due."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

from gitpub.core import clock

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_FORMATS = (
    "%Y-%m-%d",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d %H:%M:%S",
)


def _quoted(text: str) -> str:
    """The value as an error names it: quoted, and cut short (a value may be any length)."""
    return repr(text) if len(text) <= 60 else repr(text[:60]) + "…"


FIRST = datetime(1000, 1, 1, tzinfo=timezone.utc).timestamp()
LAST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc).timestamp()


def in_years(epoch: float, text: str) -> float:
    """`epoch`, when it falls in the years 1000–9999; else ValueError naming `text`."""
    if not FIRST <= epoch <= LAST:
        raise ValueError(f"{_quoted(text)}: gives a moment outside the years 1000 to 9999")
    return epoch


def _ago(amount: str, unit: str, now: float, text: str) -> float:
    # float() of a number too long for a double is ±inf, never an error: the range says it.
    return in_years(now - float(amount) * _UNITS[unit], text)


def parse_since(text: str, now: float | None = None) -> float:
    """Seconds since the epoch, or ValueError naming what is accepted."""
    value = text.strip()
    age = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhdw])", value, re.ASCII)
    if age:
        return _ago(age[1], age[2], time.time() if now is None else now, text)
    for fmt in _FORMATS:
        if not value.isascii():
            break
        try:
            moment = datetime.strptime(value.removesuffix("Z"), fmt)
        except ValueError:
            continue
        return in_years(moment.replace(tzinfo=timezone.utc).timestamp(), text)
    raise ValueError(
        f"{_quoted(text)}: give an age (30m, 2h, 3d, 1w) or a UTC date/time "
        "(2026-11-30, 2026-11-30T08:00)"
    )


_AHEAD = re.compile(r"\+(\d+)([smhd])", re.ASCII)


def parse_when(text: str, now: float | None = None) -> float:
    """`submit --at`: seconds since the epoch of a moment given as ISO 8601 with an offset
    (`2026-12-24T08:00:00+01:00`, `…Z`) or as a delay from now (`+90s`, `+15m`, `+2h`, `+3d`).
    ValueError naming what is accepted. A time without an offset is refused: a job scheduled
    on one node must come due at the same instant on every other."""
    value = text.strip()
    ahead = _AHEAD.fullmatch(value)
    if ahead:
        return _ago("-" + ahead[1], ahead[2], clock.time() if now is None else now, text)
    try:
        # fromisoformat only takes `Z` from Python 3.11 on; the floor is 3.10.
        moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        moment = None
    if moment is None or not value.isascii() or ("T" not in value and " " not in value):
        raise ValueError(
            f"{_quoted(text)}: give ISO 8601 with an offset (2026-12-24T08:00:00+01:00, "
            "2026-12-24T07:00:00Z) or a delay (+30s, +15m, +2h, +3d)"
        )
    if moment.tzinfo is None:
        raise ValueError(
            f"{_quoted(text)}: the time needs an offset (…+01:00 or …Z), "
            "so every node reads it alike"
        )
    return in_years(moment.timestamp(), text)
