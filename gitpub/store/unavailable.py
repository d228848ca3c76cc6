"""A job database that is intact but cannot be used right now: the disk is full, the
filesystem fails reads or writes, the file cannot be opened or written. That is the machine's
trouble, not the database's: it must never count as "lost" (which leads to a rebuild that
moves the intact history aside), only be named, so a person frees space or fixes the disk
and runs the command again. Lost is kept for a database that is really empty or corrupt."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from gitpub.store.errors import Unavailable

# SQLite's primary result codes (extended codes carry them in the low byte).
_PERM, _BUSY, _LOCKED, _NOMEM, _READONLY, _IOERR, _FULL, _CANTOPEN = 3, 5, 6, 7, 8, 10, 13, 14
_KIND = {
    _IOERR: "I/O error",
    _FULL: "disk full",
    _CANTOPEN: "cannot be opened",
    _READONLY: "not writable",
    _PERM: "not writable",
    _BUSY: "locked by another process",
    _LOCKED: "locked by another process",
    _NOMEM: "out of memory",
}
# Python 3.10 has no `sqlite_errorcode`: SQLite's own words for the same codes.
_BY_TEXT = (
    ("disk I/O error", _IOERR),
    ("database or disk is full", _FULL),
    ("unable to open database file", _CANTOPEN),
    ("attempt to write a readonly database", _READONLY),
    ("database is locked", _BUSY),
    ("database table is locked", _LOCKED),
    ("out of memory", _NOMEM),
)


def classify(exc: sqlite3.Error | OSError, path: Path) -> Unavailable | None:
    """The error as a Unavailable naming the database and the machine's trouble, or None
    when the error is about the database's own content (corrupt, not a database)."""
    if isinstance(exc, OSError):
        kind = "disk full" if exc.errno in (28, 122) else _os_kind(exc)  # ENOSPC, EDQUOT
        return _unavailable(path, kind, exc.strerror or str(exc))
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        code = next((c for text, c in _BY_TEXT if text in str(exc)), None)
    found = _KIND.get(code & 0xFF) if isinstance(code, int) else None
    if found is None:
        return None
    if found == "I/O error" and _no_space(path):
        found = "disk full"  # SQLite reports a file it could not create as a mere I/O error
    return _unavailable(path, found, str(exc))


def _os_kind(exc: OSError) -> str:
    return "I/O error" if exc.errno == 5 else "not writable"  # EIO; EACCES, EROFS, …


def _unavailable(path: Path, kind: str, words: str) -> Unavailable:
    fix = {
        "disk full": "free space on its filesystem and run the command again",
        "locked by another process": "wait for it, or stop it, and run the command again",
    }.get(kind, "fix the filesystem (see the system log) and run the command again")
    return Unavailable(
        f"job database {path}: {kind} ({words}); the database itself is not lost: {fix}", words
    )


def _no_space(path: Path) -> bool:
    for where in (path, path.parent):
        try:
            st = os.statvfs(where)
        except OSError:
            continue
        return st.f_bavail == 0 or st.f_favail == 0
    return False
