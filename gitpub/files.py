"""Writing files so that a crash leaves either the old bytes or the new ones, never half."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

_umask: int | None = None


def umask() -> int:
    """The process umask, read without changing it where Linux shows it (setting it to read
    it back would race with threads creating files at that instant)."""
    global _umask
    if _umask is None:
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("Umask:"):
                    _umask = int(line.split()[1], 8)
        except (OSError, ValueError):
            pass
        if _umask is None:
            _umask = os.umask(0o022)
            os.umask(_umask)
    return _umask


def public_mode() -> int:
    """The mode a file written into a checkout gets, as git's own checkout would give it
    (0644 under the usual umask): the temp file's private 0600 must not leak into it."""
    return 0o666 & ~umask()


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to a temp file beside `path` (`.<name>.<random>.tmp`), fsync it, then
    rename it over `path`. A killed writer leaves at most that temp file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
