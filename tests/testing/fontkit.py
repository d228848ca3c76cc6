"""Fonts for the font tests: tiny ones built on the spot with fontTools' FontBuilder, the
system's Noto Sans CJK SC when it is installed, and blogs whose config has a [fonts] table."""

from __future__ import annotations

import io
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTCollection, TTFont

from gitpub import config, fonts
from testing.fixtures import Blog, article, git

# What the tiny font covers besides ASCII: common hanzi and CJK punctuation. Characters
# outside it (e.g. 龘) are the "missing" ones of the tests.
HANZI = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工"
    "也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小"
    "物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形"
    "相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建"
    "篇章文好今很字罕见旧更引擎科技术习还一改边笔记手写"
)
PUNCTUATION = "，。、！？：；“”（）《》「」…—"
COVERED = frozenset(map(ord, HANZI + PUNCTUATION)) | frozenset(range(0x20, 0x7F))


def _tiny(chars: Iterable[int], family: str) -> bytes:
    cps = sorted(set(chars))
    names = [".notdef"] + [f"u{cp:04X}" for cp in cps]
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder(names)
    fb.setupCharacterMap({cp: f"u{cp:04X}" for cp in cps})
    glyphs = {}
    for i, name in enumerate(names):
        pen = TTGlyphPen(None)
        if name != ".notdef":
            # Distinct outlines, so a subset with other glyphs is other bytes.
            w = 100 + (i * 37) % 700
            h = 100 + (i * 53) % 700
            pen.moveTo((50, 0))
            pen.lineTo((50, h))
            pen.lineTo((50 + w, h))
            pen.lineTo((50 + w, 0))
            pen.closePath()
        glyphs[name] = pen.glyph()
    fb.setupGlyf(glyphs)
    fb.setupHorizontalMetrics({name: (1000, 50) for name in names})
    fb.setupHorizontalHeader(ascent=880, descent=-120)
    fb.setupNameTable({"familyName": family, "styleName": "Regular"})
    fb.setupOS2(sTypoAscender=880, usWinAscent=880, usWinDescent=120)
    fb.setupPost()
    buf = io.BytesIO()
    fb.save(buf)
    return buf.getvalue()


def tiny_font(path: Path, chars: Iterable[int] = COVERED, family: str = "Tiny") -> Path:
    """A TrueType font with one distinct box-shaped glyph per code point."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_tiny(chars, family))
    return path


def tiny_collection(path: Path, faces: int = 2, families: Sequence[str] = ()) -> Path:
    """A .ttc of `faces` tiny fonts (for face-index checks), or one per family name given
    ("Tiny CJK JP", "Tiny CJK SC": a collection's faces are told apart by these)."""
    names = list(families) or [f"Tiny {i}" for i in range(faces)]
    coll = TTCollection()
    coll.fonts = [TTFont(io.BytesIO(_tiny(COVERED, name))) for name in names]
    path.parent.mkdir(parents=True, exist_ok=True)
    coll.save(str(path))
    return path


def cjk_blog(base: Path) -> Blog:
    """A font blog whose source is the system's CJK font, linked into the repository."""
    source, face = cjk_font()
    return make_font_blog(base, fonts_table(f"fonts/{Path(source).name}", face), link=Path(source))


def cjk_font() -> tuple[str, int]:
    """The system's Noto Sans CJK SC as (file, face index); skips the test without it."""
    if shutil.which("fc-match"):
        out = subprocess.run(
            ["fc-match", "-f", "%{file}\n%{index}\n%{family}", "Noto Sans CJK SC:style=Regular"],
            capture_output=True,
            text=True,
        ).stdout.split("\n")
        if len(out) >= 3 and "CJK" in out[2] and Path(out[0]).is_file():
            return out[0], int(out[1] or 0)
    for found in sorted(Path("/usr/share/fonts").glob("**/NotoSansCJK*-Regular.tt[cf]")):
        coll = TTCollection(str(found), lazy=True)
        for index, face in enumerate(coll.fonts):
            if "CJK SC" in str(face["name"].getDebugName(1)):
                return str(found), index
    pytest.skip("no CJK font installed (Debian: fonts-noto-cjk)")


def coverage(source: str, face: int = 0) -> set[int]:
    return set(TTFont(source, fontNumber=face, lazy=True).getBestCmap())


def cmap(data: bytes) -> set[int]:
    """The code points a woff/woff2 (or any sfnt) maps, as a browser would read them."""
    return set(TTFont(io.BytesIO(data)).getBestCmap())


def chars(text: str) -> set[int]:
    return set(map(ord, text))


def fonts_table(
    source: str,
    face: int = 0,
    outputs: tuple[str, ...] = ("public/fonts/blog.woff2",),
    quality: int = 1,
    extra: str = "",
) -> str:
    listed = ", ".join(f'"{o}"' for o in outputs)
    return (
        f'[fonts]\nsource = "{source}"\nface = {face}\noutputs = [{listed}]\n'
        f"quality = {quality}\n{extra}"
    )


CHUNKED = "public/fonts/blog"


def chunked_table(source: str, face: int = 0, quality: int = 1, extra: str = "") -> str:
    return (
        f'[fonts]\nsource = "{source}"\nface = {face}\nchunked = "{CHUNKED}"\n'
        f'family = "Blog Sans"\nquality = {quality}\n{extra}'
    )


def cjk_chunked_blog(base: Path) -> Blog:
    """A font blog in chunked mode whose source is the system's CJK font."""
    source, face = cjk_font()
    table = chunked_table(f"fonts/{Path(source).name}", face)
    return make_font_blog(base, table, link=Path(source))


def make_font_blog(
    base: Path, fonts_toml: str, font_file: Path | None = None, link: Path | None = None
) -> Blog:
    """A bare remote and a clone with a [fonts] config, one article and its subsets, pushed.

    `font_file`, when given, is committed as fonts/tiny.ttf (a source inside the repository);
    `link`, a system font, is committed as a symlink fonts/<its name> (fonts.source must be a
    file of the repository)."""
    remote = base / "remote.git"
    root = base / "blog"
    git(base, "init", "--quiet", "--bare", str(remote))
    git(base, "clone", "--quiet", str(remote), str(root))
    (root / ".blogpub.toml").write_text(
        '[publish]\nremote = "origin"\nbranch = "main"\ncontent = ["content/posts"]\n\n'
        "[retry]\nbase_delay = 0.2\nmax_delay = 1.0\nmax_attempts = 4\nprobe_interval = 0.5\n\n"
        + fonts_toml,
        encoding="utf-8",
    )
    if font_file is not None or link is not None:
        (root / "fonts").mkdir()
    if font_file is not None:
        shutil.copyfile(font_file, root / "fonts" / "tiny.ttf")
    if link is not None:
        (root / "fonts" / link.name).symlink_to(link.resolve())
    posts = root / "content" / "posts"
    posts.mkdir(parents=True)
    (posts / "hello.mdx").write_text(article("你好", "这是第一篇文章。"), encoding="utf-8")
    fonts.regenerate(config.load(root), root)
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "scaffold")
    git(root, "push", "--quiet", "origin", "HEAD:main")
    return Blog(root, remote)


def tiny_blog(base: Path, extra: str = "", outputs: tuple[str, ...] | None = None) -> Blog:
    font = tiny_font(base / "tiny.ttf")
    table = fonts_table("fonts/tiny.ttf", outputs=outputs or ("public/fonts/blog.woff2",))
    return make_font_blog(base, table + extra, font)


def commit_article(blog: Blog, name: str, title: str, body: str, *, fonts_too: bool) -> None:
    """A person's hand-written article, committed (with rebuilt subsets when asked)."""
    path = blog.root / "content" / "posts" / name
    path.write_text(article(title, body), encoding="utf-8")
    blog.git("add", str(path))
    if fonts_too:
        blog.ok("fonts")
        blog.git("add", "public")
    blog.git("commit", "--quiet", "-m", f"add {name}")
