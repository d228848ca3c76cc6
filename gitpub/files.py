"""Writing files so that a crash leaves either the old bytes or the new ones, never half."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to a temp file beside `path` (`.<name>.<random>.tmp`), fsync it, then
    rename it over `path`. A killed writer leaves at most that temp file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_beside(path)
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


def _create_beside(path: Path) -> tuple[int, str]:
    """A new file of mode 0600 next to path, as tempfile.mkstemp makes one, without importing
    tempfile (and shutil, bz2, lzma, random behind it): `submit` writes one of these."""
    while True:
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        with contextlib.suppress(FileExistsError):
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), tmp
