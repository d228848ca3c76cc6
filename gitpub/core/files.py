"""Writing files so that a crash leaves either the old bytes or the new ones, never half."""

from __future__ import annotations

import contextlib
import os
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


def write_atomic(path: Path, data: bytes, mode: int | None = None, sync: bool = True) -> None:
    """Write `data` to a temp file beside `path` (`.<name>.<random>.tmp`), fsync it (unless
    `sync` is false), then rename it over `path`. A killed writer leaves at most that temp
    file behind."""
    try:
        fd, tmp = _create_beside(path)
    except (FileNotFoundError, NotADirectoryError):
        # The folder is new (made on the first write only), or a file is in its way, which
        # mkdir then names.
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_beside(path: Path) -> tuple[int, str]:
    """A new file of mode 0600 next to path, as tempfile.mkstemp makes one, without importing
    tempfile (and shutil, bz2, lzma, random behind it): `submit` writes one of these."""
    while True:
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        with contextlib.suppress(FileExistsError):
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), tmp
