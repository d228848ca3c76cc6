"""The source font: found, validated, hashed and its coverage read once per process.

The face index of a `.ttc` is checked here, from the collection header: HarfBuzz silently
returns an empty face for an index out of range, which would subset to a font with no
glyphs instead of an error naming the key."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

from gitpub.config import CONFIG_NAME, FontsConfig
from gitpub.core import userdirs
from gitpub.core.errors import GitpubError
from gitpub.fonts import faces
from gitpub.git.repo import Repo

_SFNT_VERSIONS = {b"\x00\x01\x00\x00": "truetype", b"true": "truetype", b"OTTO": "cff"}


class FontError(GitpubError):
    """The source font cannot be used; the message names the key and the file."""


class SourceFont:
    def __init__(
        self,
        path: Path,
        face: int,
        sha256: str,
        outlines: str,
        coverage: frozenset[int],
        index: int | None = None,
    ) -> None:
        self.path = path  # the file the subsetter reads
        self.face = face  # the config's face: part of every stamp, with `sha256`
        self.sha256 = sha256  # of the source font file the config names
        self.outlines = outlines  # "truetype" (glyf) or "cff"
        self.coverage = coverage
        # The face's index in `path`: the config's, or 0 in a face copied out of a
        # collection (`gitpub.fonts.faces`).
        self.index = face if index is None else index
        self.cache: dict[str, Any] = {}  # engine objects, built on first use


Identity = tuple[str, int, int, int, int]
"""(file, face, size, mtime, inode) of a file read from disk, or ("blob:<git blob id>", face,
0, 0, 0) of a file known to hold exactly that blob."""

_loaded: dict[Identity, SourceFont] = {}
_KEEP = 2
"""Source fonts kept open per process: a blog has one; a long-lived process serving several
blogs keeps the newest two, never every face it ever read (a CJK face is ~20 MB)."""


def resolve(fc: FontsConfig, root: Path) -> Path:
    path = Path(fc.source).expanduser()
    if not path.is_absolute():
        path = root / path
    if not path.is_file():
        where = "" if Path(fc.source).expanduser().is_absolute() else " in the repository"
        raise FontError(f"{CONFIG_NAME}: fonts.source {fc.source!r}: no such file{where}")
    return path


def load(fc: FontsConfig, root: Path, blob: str | None = None) -> SourceFont:
    """The source font named by the config, relative to the checkout at `root`.

    `blob`: the git blob id the file is known to hold (a job's private checkout, fresh from
    a commit). Its facts are then found by that id, whichever checkout the file sits in:
    every job checks the font out anew, so its inode and mtime are new every time, and
    keying by them would hash a 20 MB collection for every article."""
    path = resolve(fc, root)
    if blob is not None:
        key: Identity = (f"blob:{blob}", fc.face, 0, 0, 0)
    else:
        st = path.stat()
        key = (str(path.resolve()), fc.face, st.st_size, st.st_mtime_ns, st.st_ino)
    font = _loaded.pop(key, None)
    if font is None:
        font = _open(fc, path, key)
    elif font.path != path:
        # The same blob in another job's checkout: the first one's may be gone by now, and
        # the engine objects read the file lazily.
        font.path, font.cache = path, {}
    _loaded[key] = font  # newest last
    while len(_loaded) > _KEEP:
        del _loaded[next(iter(_loaded))]
    return font


def load_blob(fc: FontsConfig, repo: Repo, blob: str) -> SourceFont:
    """The source font a commit holds as `blob`, its face read from the user cache
    (`faces`): no checkout needs the file. Its facts are the blob's, kept as `load` keeps
    them, under the config's face."""
    key: Identity = (f"blob:{blob}", fc.face, 0, 0, 0)
    # Remembered apart from `load`'s fonts of the same blob: those follow the checkout they
    # were last read from, this one reads the face kept in the user cache.
    held: Identity = (f"face:{blob}", fc.face, 0, 0, 0)
    font = _loaded.pop(held, None)
    if font is None:
        font = _open_blob(fc, repo, blob, key)
    _loaded[held] = font
    while len(_loaded) > _KEEP:
        del _loaded[next(iter(_loaded))]
    return font


def _open_blob(fc: FontsConfig, repo: Repo, blob: str, key: Identity) -> SourceFont:
    def check(data: bytes) -> None:
        _check_face(fc, Path(fc.source), io.BytesIO(data), data[:12])

    path, data = faces.face_file(repo, blob, fc.face, check)
    alone = dataclasses.replace(fc, face=0)  # the face alone in its file
    try:
        with path.open("rb") as fh:
            outlines = _check_face(alone, path, fh, fh.read(12))
    except OSError as exc:
        raise FontError(f"{CONFIG_NAME}: fonts.source {fc.source!r}: {exc.strerror}") from None
    cached = _read_cache(key)
    digest = cached.get("sha256") if isinstance(cached.get("sha256"), str) else None
    if digest is None:
        whole = data if data is not None else repo.blobs([blob])[blob]
        digest = hashlib.sha256(whole).hexdigest()
    ranges = cached.get("coverage", {}).get(str(fc.face))
    if isinstance(ranges, list):
        coverage = frozenset(cp for lo, hi in ranges for cp in range(lo, hi + 1))
    else:
        coverage = _coverage(alone, path)
    if not coverage:
        raise FontError(
            f"{CONFIG_NAME}: fonts.source {fc.source!r} (face {fc.face}) maps no characters"
        )
    _write_cache(key, digest, fc.face, coverage, cached)
    return SourceFont(path, fc.face, digest, outlines, coverage, index=0)


def _open(fc: FontsConfig, path: Path, key: Identity) -> SourceFont:
    try:
        with path.open("rb") as fh:
            head = fh.read(12)
            outlines = _check_face(fc, path, fh, head)
    except OSError as exc:
        raise FontError(f"{CONFIG_NAME}: fonts.source {fc.source!r}: {exc.strerror}") from None
    cached = _read_cache(key)
    digest = cached.get("sha256") if isinstance(cached.get("sha256"), str) else None
    if digest is None:
        digest = _sha256(path)
    ranges = cached.get("coverage", {}).get(str(fc.face))
    if isinstance(ranges, list):
        coverage = frozenset(cp for lo, hi in ranges for cp in range(lo, hi + 1))
    else:
        coverage = _coverage(fc, path)
    if not coverage:
        raise FontError(
            f"{CONFIG_NAME}: fonts.source {fc.source!r} (face {fc.face}) maps no characters"
        )
    _write_cache(key, digest, fc.face, coverage, cached)
    return SourceFont(path, fc.face, digest, outlines, coverage)


def _check_face(fc: FontsConfig, path: Path, fh: BinaryIO, head: bytes) -> str:
    name = f"{CONFIG_NAME}: fonts.source {fc.source!r}"
    if head[:4] == b"ttcf" and len(head) >= 12:
        (count,) = struct.unpack(">I", head[8:12])
        if fc.face >= count:
            raise FontError(
                f"{CONFIG_NAME}: fonts.face = {fc.face}, but {path.name} holds "
                f"{count} face(s) (0–{count - 1})"
            )
        fh.seek(12 + 4 * fc.face)
        (offset,) = struct.unpack(">I", fh.read(4))
        fh.seek(offset)
        version = fh.read(4)
    else:
        if fc.face != 0:
            raise FontError(
                f"{CONFIG_NAME}: fonts.face = {fc.face}, but {path.name} is a single font "
                "(only face 0)"
            )
        version = head[:4]
    outlines = _SFNT_VERSIONS.get(version)
    if outlines is None:
        raise FontError(f"{name}: not a TrueType or OpenType font")
    return outlines


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _coverage(fc: FontsConfig, path: Path) -> frozenset[int]:
    """Every code point the face's cmap maps."""
    try:
        import uharfbuzz as hb
    except ImportError:
        hb = None
    if hb is not None:
        face = hb.Face(hb.Blob.from_file_path(str(path)), fc.face)
        return frozenset(int(cp) for cp in face.unicodes)
    from fontTools.ttLib import TTFont, TTLibError

    try:
        font = TTFont(str(path), fontNumber=fc.face, lazy=True)
        cmap = font.getBestCmap() or {}
    except (TTLibError, AssertionError, struct.error, KeyError) as exc:
        raise FontError(
            f"{CONFIG_NAME}: fonts.source {fc.source!r}: unreadable font ({exc})"
        ) from None
    return frozenset(int(cp) for cp in cmap)


# ------------------------------------------------------------------- persistent cache
# Hashing a 20 MB collection and reading its cmap cost tens of milliseconds per process; a
# publish that adds no character should cost close to nothing, so both are remembered per
# (file, size, mtime, inode) — the same racy-but-practical identity git's index uses.


def _cache_path(key: Identity) -> Path:
    name = hashlib.sha256("\0".join(map(str, key[:1] + key[2:])).encode()).hexdigest()[:32]
    return userdirs.cache_dir() / "fonts" / f"{name}.json"


def _read_cache(key: Identity) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(_cache_path(key).read_text("utf-8"))
        if isinstance(data, dict):
            return data
    return {}


def _ranges(codepoints: frozenset[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for cp in sorted(codepoints):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def _write_cache(
    key: Identity,
    digest: str,
    face: int,
    coverage: frozenset[int],
    cached: dict[str, Any],
) -> None:
    faces = cached.get("coverage") if isinstance(cached.get("coverage"), dict) else {}
    assert isinstance(faces, dict)
    if cached.get("sha256") == digest and str(face) in faces:
        return
    faces = {**faces, str(face): _ranges(coverage)}
    path = _cache_path(key)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"sha256": digest, "coverage": faces}), "utf-8")
        os.replace(tmp, path)
