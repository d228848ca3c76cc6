"""Who holds a lock file, and whether a process is a gitpub one: what `doctor` can really know.

gitpub's locks are flock(2) locks (filelock). The kernel drops them when their holder exits,
and filelock closes them in forked children, so a lock can never outlive a dead holder; the
files stay on disk while free, and their age says nothing. What can go wrong is a LIVE holder
that is not doing gitpub's work: a foreign process holding the file, or a gitpub process that
hangs. Linux lists flock holders in /proc/locks; elsewhere the holder stays unknown."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_ARGS_SHOWN = 100  # characters of a command line worth printing


@dataclass(frozen=True)
class Holder:
    pid: int | None  # None: the kernel shows no pid we can see (another pid namespace or host)
    alive: bool
    args: str  # its command line, "" when unreadable
    gitpub: bool | None  # None: cannot tell (another user's process)


def holder(lock_file: Path, db_file: Path) -> Holder | None:
    """The holder of the flock on lock_file, or None when this platform cannot say."""
    locks = PROC / "locks"
    try:
        st = lock_file.stat()
        table = locks.read_text("ascii", "replace")
    except OSError:
        return None
    wanted = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 23424 fe:00:2286563 0 EOF"; "->" lines are waiters.
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            major, minor, ino = fields[5].split(":")
            where = (int(major, 16), int(minor, 16), int(ino))
            pid = int(fields[4])
        except ValueError:
            continue
        if where == wanted:
            return describe(pid, db_file) if pid > 0 else Holder(None, False, "", None)
    return Holder(None, False, "", None)


def describe(pid: int, db_file: Path) -> Holder:
    if not alive(pid):
        return Holder(pid, False, "", None)
    args = command_line(pid)
    return Holder(pid, True, args, is_gitpub(pid, args, db_file))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def command_line(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    words = " ".join(raw.replace(b"\0", b" ").decode("utf-8", "replace").split())
    return words if len(words) <= _ARGS_SHOWN else words[: _ARGS_SHOWN - 1] + "…"


def is_gitpub(pid: int, args: str, db_file: Path) -> bool | None:
    """A process running gitpub: started as `git blogpub`/`python -m gitpub`, or holding the
    job database open (a program using gitpub as a library does)."""
    words = args.split()
    if any(Path(w).name == "git-blogpub" for w in words[:2]) or "gitpub" in words[1:3]:
        return True
    fd_dir = PROC / str(pid) / "fd"
    try:
        fds = list(fd_dir.iterdir())
    except PermissionError:
        return None
    except OSError:
        return False
    want = db_file.resolve()
    for fd in fds:
        with contextlib.suppress(OSError):
            if Path(os.readlink(fd)) == want:
                return True
    return False
