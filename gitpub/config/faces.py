"""Which face of a font collection suits the blog's language.

A CJK collection holds one face per regional glyph standard — Debian's
`NotoSansCJK-Regular.ttc` is "Noto Sans CJK JP" at face 0 and "… SC" at face 2 — and the
same code point is drawn differently in each: a Chinese blog set in the JP face shows
Japanese glyph shapes. The faces are named by their own name tables (read here from the
file's headers, a few kilobytes: no font library, so loading a config stays cheap), and
matched to the language the blog's generator declares (`gitpub.site.language`)."""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import BinaryIO

REGIONS = {"SC": "zh-Hans", "TC": "zh-Hant", "HK": "zh-HK", "JP": "ja", "KR": "ko"}
"""The region tag a CJK family name ends in, and the language it is drawn for (`doctor`
names it)."""

_TAG = re.compile(r"\b(SC|TC|HK|JP|KR|CN|TW|J|K|Hans|Hant)\b")
_ALIASES = {"CN": "SC", "Hans": "SC", "TW": "TC", "Hant": "TC", "J": "JP", "K": "KR"}


def families(path: Path) -> list[str]:
    """The family name of each face of a .ttc/.otc (of the one face of a .ttf/.otf), in
    face order; [] when the file cannot be read as a font."""
    try:
        with path.open("rb") as fh:
            head = fh.read(12)
            if head[:4] == b"ttcf":
                (count,) = struct.unpack(">I", head[8:12])
                offsets = struct.unpack(f">{count}I", fh.read(4 * min(count, 64)))
            else:
                offsets = (0,)
            return [_family(fh, offset) for offset in offsets]
    except (OSError, struct.error, UnicodeDecodeError):
        return []


def _family(fh: BinaryIO, offset: int) -> str:
    fh.seek(offset + 4)
    (tables,) = struct.unpack(">H", fh.read(2))
    fh.seek(offset + 12)
    directory = fh.read(16 * tables)
    for i in range(tables):
        tag, _, where, _ = struct.unpack(">4sIII", directory[16 * i : 16 * i + 16])
        if tag == b"name":
            return _name_table(fh, where)
    return ""


def _name_table(fh: BinaryIO, where: int) -> str:
    fh.seek(where)
    _, count, strings = struct.unpack(">HHH", fh.read(6))
    records = fh.read(12 * count)
    found: dict[tuple[int, int], tuple[int, int, int]] = {}
    for i in range(count):
        platform, encoding, language, name_id, length, at = struct.unpack(
            ">HHHHHH", records[12 * i : 12 * i + 12]
        )
        # The typographic family (16) when there is one, else the family (1); Windows
        # Unicode English first, as font menus show it.
        if name_id in (1, 16) and (platform, encoding) in ((3, 1), (3, 10), (1, 0)):
            rank = (0 if name_id == 16 else 1, 0 if language in (0x409, 0) else 1)
            if rank not in found or platform == 3:
                found[rank] = (platform, length, at)
    if not found:
        return ""
    platform, length, at = found[min(found)]
    fh.seek(where + strings + at)
    raw = fh.read(length)
    return raw.decode("utf-16-be" if platform == 3 else "mac-roman").strip()


def region(family: str) -> str | None:
    """ "SC", "TC", "HK", "JP" or "KR" of a CJK family name ("Noto Sans CJK SC"), else None."""
    found = _TAG.findall(family)
    if not found:
        return None
    tag = str(found[-1])
    return _ALIASES.get(tag, tag)


def wanted_region(language: str) -> tuple[str, ...]:
    """The regions that draw `language` ("zh-CN", "zh_TW", "ja-JP", "ko"), best first."""
    lang = language.replace("_", "-").lower()
    if lang.startswith(("ja", "jp")):
        return ("JP",)
    if lang.startswith("ko"):
        return ("KR",)
    if lang.startswith("zh") or lang in ("cn", "tw", "hk"):
        parts = lang.split("-")
        if "hant" in parts or {"tw", "hk", "mo"} & set(parts) or lang in ("tw", "hk"):
            return ("TC", "HK")  # traditional characters; TC before the Hong Kong face
        return ("SC",)
    return ()


def choose(path: Path, language: str | None) -> tuple[int, str] | None:
    """(face index, family) of the collection's face for `language`; None when the language
    is not a CJK one or no face is drawn for it."""
    if not language:
        return None
    names = families(path)
    for want in wanted_region(language):
        for index, family in enumerate(names):
            if region(family) == want:
                return index, family
    return None


def default_face(root: Path, source: str) -> int:
    """The face of an unset `fonts.face`: of a collection, the one drawn for the blog's
    language (none declared, or none drawn for it: 0); of a single font, 0."""
    if not source.lower().endswith((".ttc", ".otc")):
        return 0
    from gitpub.site.language import blog_language  # only a collection without a face

    language = blog_language(root)
    chosen = choose(root / source, language[0] if language else None)
    return chosen[0] if chosen else 0
