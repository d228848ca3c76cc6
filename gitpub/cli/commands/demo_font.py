"""The demo's CJK source font: the system's when one is installed, else one built on the spot.

The built font is a real TrueType font (fontTools' FontBuilder) with one box-shaped glyph
per character the demo's articles use; it exists so the demo needs no network and no prior
setup, and it is written only into the demo's scratch repository."""

from __future__ import annotations

import glob
import io
from collections.abc import Iterable
from pathlib import Path

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen

# Standard places of Debian's CJK font packages; the first that exists wins.
SYSTEM_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
)


def system_font() -> Path | None:
    for candidate in SYSTEM_FONTS:
        if Path(candidate).is_file():
            return Path(candidate)
    found = sorted(glob.glob("/usr/share/fonts/**/*CJK*.tt[cf]", recursive=True))
    return Path(found[0]) if found else None


def build(chars: Iterable[str]) -> bytes:
    """A TrueType font covering ASCII and `chars`, each glyph a box of its own size."""
    cps = sorted({ord(c) for c in chars if not c.isspace()} | set(range(0x21, 0x7F)))
    names = [".notdef", "space"] + [f"uni{cp:04X}" for cp in cps]
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder(names)
    fb.setupCharacterMap({0x20: "space", **{cp: f"uni{cp:04X}" for cp in cps}})
    glyphs = {}
    for i, name in enumerate(names):
        pen = TTGlyphPen(None)
        if name not in (".notdef", "space"):
            w, h = 300 + (i * 37) % 600, 300 + (i * 53) % 600
            pen.moveTo((60, 0))
            pen.lineTo((60, h))
            pen.lineTo((60 + w, h))
            pen.lineTo((60 + w, 0))
            pen.closePath()
        glyphs[name] = pen.glyph()
    fb.setupGlyf(glyphs)
    fb.setupHorizontalMetrics({n: (1000 if n != "space" else 300, 60) for n in names})
    fb.setupHorizontalHeader(ascent=880, descent=-120)
    fb.setupNameTable({"familyName": "gitpub demo", "styleName": "Regular"})
    fb.setupOS2(sTypoAscender=880, usWinAscent=880, usWinDescent=120)
    fb.setupPost()
    out = io.BytesIO()
    fb.save(out)
    return out.getvalue()
