"""How many external steps run at once in one worker process, and how often one starts:
`[steps] concurrency` and `[steps] rate`, for the model APIs behind draft and judge steps
that refuse more than so many calls at a time or per minute.

Both take the limit at each call, so a long-running worker follows a changed config pass by
pass. A step waiting for its turn keeps its job's lease: `beat` is called at least every
`every` seconds while it waits, and a lost lease (the exception `beat` raises) ends the wait."""

from __future__ import annotations

import contextlib
import threading
import time as _system
from collections.abc import Callable, Iterator


class Throttle:
    """Shared by every thread of one worker that runs external steps (see
    `gitpub.context.sibling`). `now` and `sleep` are the clock it spaces starts by: the
    monotonic clock, or a test's own."""

    def __init__(
        self,
        now: Callable[[], float] = _system.monotonic,
        sleep: Callable[[float], None] = _system.sleep,
    ) -> None:
        self._now = now
        self._sleep = sleep
        self._cond = threading.Condition()
        self._running = 0
        self._next_start = float("-inf")

    @property
    def running(self) -> int:
        """Steps holding a place right now."""
        return self._running

    @contextlib.contextmanager
    def place(
        self, limit: int | None, beat: Callable[[], None] | None = None, every: float = 30.0
    ) -> Iterator[None]:
        """Hold one of `limit` places (None: no limit of its own) for the block."""
        with self._cond:
            while limit is not None and self._running >= limit:
                self._cond.wait(timeout=every)
                if self._running >= limit:
                    self._cond.release()  # the heartbeat writes the store: never under our lock
                    try:
                        if beat is not None:
                            beat()
                    finally:
                        self._cond.acquire()
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify()

    def start(
        self, spacing: float, beat: Callable[[], None] | None = None, every: float = 30.0
    ) -> float:
        """Wait until a step may start, `spacing` seconds after the start before it (0: at
        once); returns the instant it was let start, on this throttle's clock. Each caller
        reserves its own instant first, so threads that ask together start one after another."""
        with self._cond:
            at = max(self._now(), self._next_start + spacing)
            self._next_start = at
        while (left := at - self._now()) > 0:
            self._sleep(min(left, every))
            if at - self._now() > 0 and beat is not None:
                beat()
        return at
