"""File locks with one total order: delivery > checkout > repo > db.

A process may take a lock only if every lock it already holds ranks above it, so two
processes can never wait on each other in a cycle. Taking one out of order raises.
"""

from __future__ import annotations

import _thread
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from gitpub.core.errors import LockOrderError

LockName = Literal["delivery", "checkout", "repo", "db"]

ORDER: tuple[LockName, ...] = ("delivery", "checkout", "repo", "db")
"""delivery: the network part of relay. checkout: transactions on the live checkout.
repo: short local git operations (worktree add/remove, log reads). db: store maintenance."""

_held: dict[int, list[LockName]] = {}
"""The locks each thread holds, by thread id. Not a `threading.local`: `submit` and `status`
take no lock and should not import `threading` for it. A thread's entry goes when its last
lock does, and a list is only ever non-empty while its thread holds a lock, so a later thread
given the same id starts empty."""


def _stack() -> list[LockName]:
    return _held.setdefault(_thread.get_ident(), [])


def held() -> tuple[LockName, ...]:
    """Names of the locks this thread holds, outermost first."""
    return tuple(_held.get(_thread.get_ident(), ()))


Fleet = Callable[[str], contextlib.AbstractContextManager[None]]
"""A lock the nodes of a shared store take together (see `gitpub.store.pg.PgStore.fleet`)."""


class Locks:
    def __init__(self, lock_dir: Path, fleet: Fleet | None = None) -> None:
        """`fleet`: also take `delivery` among every node of a shared store, so one of them
        pushes the published branch at a time."""
        self.dir = lock_dir
        self.fleet = fleet
        lock_dir.mkdir(parents=True, exist_ok=True)

    def path(self, name: LockName) -> Path:
        return self.dir / f"{name}.lock"

    @contextlib.contextmanager
    def hold(self, name: LockName, timeout: float = -1) -> Iterator[None]:
        """Hold lock `name` for the block; `timeout` < 0 waits forever."""
        if name not in ORDER:
            raise LockOrderError(f"unknown lock {name!r}")
        stack = _stack()
        rank = ORDER.index(name)
        for outer in stack:
            if ORDER.index(outer) >= rank:
                raise LockOrderError(
                    f"lock order violated: taking {name!r} while holding {outer!r} "
                    f"(order: {' > '.join(ORDER)})"
                )
        import filelock  # on first use: `submit` and `status` take no lock

        lock = filelock.FileLock(str(self.path(name)), timeout=timeout, thread_local=False)
        with lock, self.fleet(name) if self.fleet else contextlib.nullcontext():
            stack.append(name)
            try:
                yield
            finally:
                stack.pop()
                if not stack:
                    _held.pop(_thread.get_ident(), None)

    def is_free(self, name: LockName) -> bool:
        """True when no process holds `name` right now (probe without waiting)."""
        import filelock

        lock = filelock.FileLock(str(self.path(name)), timeout=0, thread_local=False)
        try:
            lock.acquire()
        except filelock.Timeout:
            return False
        lock.release()
        return True
