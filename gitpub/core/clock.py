"""The one wall clock of gitpub: every reading that decides something — a lease's expiry, a
retry's due time, a hand-edit scan's period — is `clock.time()`.

`GITPUB_CLOCK_SKEW` (seconds) moves it for this process and the gitpub processes it starts:
tests make a retry due by moving time forward instead of sleeping until it is."""

from __future__ import annotations

import math
import os
import re
import time as _system

from gitpub.core.errors import ConfigError

SKEW = "GITPUB_CLOCK_SKEW"

SKEW_LIMIT = 2 * 86400.0
"""The most the skew may move the clock either way: enough to make a `+1d` schedule or a
day's backoff due at once, and far from where a timestamp computed from it would leave the
years every stored time is written in (1000–9999)."""

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)

_offset = 0.0
_parsed: tuple[str, float] = ("", 0.0)


def skew() -> float:
    """The skew in seconds (0 without the variable); ConfigError naming the variable for a
    value that is not a finite number of seconds within SKEW_LIMIT, which would otherwise
    turn every deadline into nonsense (NaN) or an overflow deep inside a command."""
    global _parsed
    raw = os.environ.get(SKEW, "")
    if raw == _parsed[0]:
        return _parsed[1]
    text = raw.strip()
    value = 0.0 if not text else float(text) if _NUMBER.fullmatch(text) else math.nan
    if not math.isfinite(value) or abs(value) > SKEW_LIMIT:
        raise ConfigError(
            f"{SKEW} must be a number of seconds from -{SKEW_LIMIT:.0f} to {SKEW_LIMIT:.0f} "
            "(two days either way), or unset"
        )
    _parsed = (raw, value)
    return value


def time() -> float:
    """Seconds since the epoch, as gitpub sees them."""
    return _system.time() + _offset + skew()


def align(offset: float) -> None:
    """Follow another clock `offset` seconds ahead of this machine's (a shared store's, whose
    nodes must agree on when a lease ran out)."""
    global _offset
    _offset = offset
