"""`--since`: a moment given as an age (`90m`, `2h`, `3d`, `1w`) or a UTC date or time
(`2026-11-30`, `2026-11-30T08:00`, `2026-11-30 08:00:00`)."""

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


def parse_since(text: str, now: float | None = None) -> float:
    """Seconds since the epoch, or ValueError naming what is accepted."""
    value = text.strip()
    age = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhdw])", value)
    if age:
        return (time.time() if now is None else now) - float(age[1]) * _UNITS[age[2]]
    for fmt in _FORMATS:
        try:
            moment = datetime.strptime(value.removesuffix("Z"), fmt)
        except ValueError:
            continue
        return moment.replace(tzinfo=timezone.utc).timestamp()
    raise ValueError(
        f"{text!r}: give an age (30m, 2h, 3d, 1w) or a UTC date/time (2026-11-30, 2026-11-30T08:00)"
    )


_AHEAD = re.compile(r"\+(\d+)([smhd])")


def parse_when(text: str, now: float | None = None) -> float:
    """`submit --at`: seconds since the epoch of a moment given as ISO 8601 with an offset
    (`2026-12-24T08:00:00+01:00`, `…Z`) or as a delay from now (`+90s`, `+15m`, `+2h`, `+3d`).
    ValueError naming what is accepted. A time without an offset is refused: a job scheduled
    on one node must come due at the same instant on every other."""
    value = text.strip()
    ahead = _AHEAD.fullmatch(value)
    if ahead:
        return (clock.time() if now is None else now) + int(ahead[1]) * _UNITS[ahead[2]]
    try:
        # fromisoformat only takes `Z` from Python 3.11 on; the floor is 3.10.
        moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        moment = None
    if moment is None or ("T" not in value and " " not in value):
        raise ValueError(
            f"{text!r}: give ISO 8601 with an offset (2026-12-24T08:00:00+01:00, "
            "2026-12-24T07:00:00Z) or a delay (+30s, +15m, +2h, +3d)"
        )
    if moment.tzinfo is None:
        raise ValueError(
            f"{text!r}: the time needs an offset (…+01:00 or …Z), so every node reads it alike"
        )
    return moment.timestamp()
