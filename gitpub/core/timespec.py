"""`--since`: a moment given as an age (`90m`, `2h`, `3d`, `1w`) or a UTC date or time
(`2026-11-30`, `2026-11-30T08:00`, `2026-11-30 08:00:00`)."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

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
