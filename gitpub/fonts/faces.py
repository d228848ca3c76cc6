"""The source font's face, by the blob id of the font file, as a file of its own in the user
cache: a job's font gate subsets it without checking out the blog's 19 MB collection again.

A `.ttc` holds several faces over shared tables; the face the config names is copied out
into a plain sfnt — its own table directory, every table's bytes as they are — so the
subsetter sees the very tables it would read in the collection, and writes the same bytes.
A single font is kept as it is."""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable
from pathlib import Path

from gitpub.core import userdirs
from gitpub.core.files import write_atomic
from gitpub.git.repo import Repo


def cached(blob: str, face: int) -> Path:
    return userdirs.cache_dir() / "fonts" / "faces" / f"{blob}-{face}.sfnt"


def face_file(
    repo: Repo, blob: str, face: int, check: Callable[[bytes], object]
) -> tuple[Path, bytes | None]:
    """(file holding the face alone, the font file's bytes when they had to be read): the
    cached file when there is one, else made from the blob now — once `check` (which raises
    when the file holds no such face) has seen it."""
    place = cached(blob, face)
    if place.is_file():
        return place, None
    data = repo.blobs([blob])[blob]
    check(data)
    alone = extract(data, face) if data[:4] == b"ttcf" else data
    try:
        write_atomic(place, alone, sync=False)
    except OSError:
        # A read-only cache: the face is written where the job's own files are, for now.
        place = Path(repo.state_dir) / "fonts-face" / place.name
        with contextlib.suppress(OSError):
            write_atomic(place, alone, sync=False)
    return place, data


def extract(collection: bytes, face: int) -> bytes:
    """Face `face` of a TrueType/OpenType collection as a standalone sfnt."""
    (count,) = struct.unpack_from(">I", collection, 8)
    if not 0 <= face < count:
        raise ValueError(f"face {face} of a collection of {count}")
    (start,) = struct.unpack_from(">I", collection, 12 + 4 * face)
    version, tables, search, selector, shift = struct.unpack_from(">4sHHHH", collection, start)
    records = [struct.unpack_from(">4sIII", collection, start + 12 + 16 * i) for i in range(tables)]
    header = struct.pack(">4sHHHH", version, tables, search, selector, shift)
    offset = 12 + 16 * tables
    directory, body = [], []
    for tag, checksum, where, length in records:
        directory.append(struct.pack(">4sIII", tag, checksum, offset, length))
        data = collection[where : where + length]
        padding = b"\0" * (-length % 4)  # every table starts on a four-byte boundary
        body.append(data + padding)
        offset += length + len(padding)
    return header + b"".join(directory) + b"".join(body)
