"""The one wall clock of gitpub: every reading that decides something — a lease's expiry, a
retry's due time, a hand-edit scan's period — is `clock.time()`.

`GITPUB_CLOCK_SKEW` (seconds) moves it for this process and the gitpub processes it starts:
tests make a retry due by moving time forward instead of sleeping until it is."""

from __future__ import annotations

import os
import time as _system

SKEW = "GITPUB_CLOCK_SKEW"

_offset = 0.0


def time() -> float:
    """Seconds since the epoch, as gitpub sees them."""
    skew = os.environ.get(SKEW)
    return _system.time() + _offset + (float(skew) if skew else 0.0)


def align(offset: float) -> None:
    """Follow another clock `offset` seconds ahead of this machine's (a shared store's, whose
    nodes must agree on when a lease ran out)."""
    global _offset
    _offset = offset
