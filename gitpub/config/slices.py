"""The fixed slicing of a chunked web font (`[fonts] chunked`): which slice each character
belongs to, and so which files a chunked font may consist of.

A character's slice is a function of the character alone, never of the other characters a
blog uses: a new character rewrites exactly one chunk and leaves every other one byte for
byte. Han characters fall into slices by their rank in a fixed order, most frequent first,
in tiers (`TIERS`): the 1,400 commonest in one slice, then slices of 30, 80 and 1,000 ranks.
A chunk costs ~2 KB whatever it holds (~0.9 KB of tables, 0.2 KB of stamp, the rest what
Brotli no longer shares with the other glyphs) and a page loads every chunk it has a
character of, so the widths trade the two. An article uses each of a blog's characters of
ranks 300–1,400 with a chance of one in twenty to one in three, so a slice of 30 of them is
on most pages anyway: one slice for all of them is the cheapest. Past rank 1,400 an article
uses a character now and then, so narrow slices keep most of them off its page; past 5,100
a blog rarely uses any, so wide slices keep the chunk count down. Han characters outside the
order, and everything else, go by their position in Unicode (a block of Han code points, a
named group such as kana, else a page). Measured on five real Chinese blogs (benchmarks, docs).

It lives beside the config, not in the font engine, because the set of font output paths —
what gitpub may stage and what a job's write set allows — is derived from the config alone,
without loading a font."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator

SLICING = 3
"""Bump when any character changes slice: every chunk is then rebuilt once."""

CSS_NAME = "blog.css"
TIERS: tuple[tuple[int, int], ...] = ((1400, 1400), (2300, 30), (5100, 80), (1 << 30, 1000))
"""(rank the tier ends before, ranks per slice), in the order of `hanbands.ORDER`."""
HAN_BLOCK = 0x1000  # Han code points per positional block (outside the order)
PAGE = 0x100  # code points per page, elsewhere in the BMP
ASTRAL_PAGE = 0x1000  # code points per page above the BMP (planes 1, 2 and 3)

# Named groups: what a CJK page uses together, so that one chunk serves it.
GROUPS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("latin", ((0x0000, 0x024F),)),
    ("cjk-punct", ((0x3000, 0x303F), (0xFF00, 0xFFEF))),
    ("kana", ((0x3040, 0x30FF), (0x31F0, 0x31FF))),
)
HAN_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))


def _band_name(index: int) -> str:
    return f"han-{index + 1:03d}"


def band_of(rank: int) -> int:
    """The index of the frequency slice holding the character of this rank."""
    index, start = 0, 0
    for end, width in TIERS:
        if rank < end:
            return index + (rank - start) // width
        index += -(-(end - start) // width)
        start = end
    raise ValueError(rank)  # the last tier is open-ended


@functools.lru_cache(maxsize=1)
def _bands() -> dict[int, str]:
    from gitpub.config.hanbands import ORDER  # 18,000 characters: read on first use only

    out: dict[int, str] = {}
    index, start = 0, 0
    for end, width in TIERS:  # slice by slice: a name per slice, not per character
        for first in range(start, min(end, len(ORDER)), width):
            name = _band_name(index)
            out.update((ord(ch), name) for ch in ORDER[first : min(first + width, end)])
            index += 1
        start = end
    return out


def band_count() -> int:
    from gitpub.config.hanbands import ORDER

    return band_of(len(ORDER) - 1) + 1


def _is_han(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in HAN_RANGES)


def slice_of(cp: int) -> str:
    """The slice a code point belongs to."""
    band = _bands().get(cp)
    if band is not None:
        return band
    if _is_han(cp):
        return f"han-u{cp - cp % HAN_BLOCK:04x}"
    for name, ranges in GROUPS:
        if any(lo <= cp <= hi for lo, hi in ranges):
            return name
    if cp <= 0xFFFF:
        return f"u-{cp - cp % PAGE:04x}"
    if cp <= 0x3FFFF:
        return f"u-{cp - cp % ASTRAL_PAGE:05x}"
    return f"u-{cp - cp % 0x10000:05x}"  # planes 4–16: one slice per plane


def _spans() -> Iterator[tuple[str, int, int]]:
    """(name, first, last): every slice name with the code points it may hold (a superset:
    the characters that belong to a band are taken out of the blocks and pages)."""
    for i in range(band_count()):
        yield _band_name(i), -1, -1  # a band's members come from the table
    for lo, hi in HAN_RANGES:
        for start in range(lo - lo % HAN_BLOCK, hi + 1, HAN_BLOCK):
            yield f"han-u{start:04x}", max(start, lo), min(start + HAN_BLOCK - 1, hi)
    for name, group in GROUPS:
        for lo, hi in group:
            yield name, lo, hi
    for start in range(0, 0x10000, PAGE):
        yield f"u-{start:04x}", start, start + PAGE - 1
    for start in range(0x10000, 0x40000, ASTRAL_PAGE):
        yield f"u-{start:05x}", start, start + ASTRAL_PAGE - 1
    for start in range(0x40000, 0x110000, 0x10000):
        yield f"u-{start:05x}", start, start + 0xFFFF


@functools.lru_cache(maxsize=1)
def names() -> tuple[str, ...]:
    """Every slice name, in the order the CSS declares them. A few names can never occur
    (a page wholly inside a named group or a Han range): listing them costs nothing, and
    the list stays a plain function of the slicing."""
    seen: dict[str, None] = {}
    for name, _, _ in _spans():
        seen.setdefault(name)
    return tuple(seen)


@functools.lru_cache(maxsize=4)
def output_paths(folder: str) -> tuple[str, ...]:
    """Every path a chunked font in `folder` may write: the CSS and one file per slice."""
    return (f"{folder}/{CSS_NAME}", *(f"{folder}/{name}.woff2" for name in names()))


@functools.lru_cache(maxsize=1)
def _band_members() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for cp, band in _bands().items():
        out.setdefault(band, []).append(cp)
    return out


@functools.cache
def members(name: str) -> list[tuple[int, int]]:
    """The code points of one slice as sorted inclusive ranges (its CSS unicode-range)."""
    if name.startswith("han-") and not name.startswith("han-u"):
        return ranges(_band_members().get(name, ()))
    cps = [
        cp
        for span, lo, hi in _spans()
        if span == name
        for cp in range(lo, hi + 1)
        if slice_of(cp) == name
    ]
    return ranges(cps)


def ranges(codepoints: Iterable[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for cp in sorted(codepoints):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(lo, hi) for lo, hi in out]


def split(codepoints: Iterable[int]) -> dict[str, frozenset[int]]:
    """The code points grouped by slice."""
    out: dict[str, set[int]] = {}
    for cp in codepoints:
        out.setdefault(slice_of(cp), set()).add(cp)
    return {name: frozenset(cps) for name, cps in out.items()}


def codec_tiers() -> str:
    """The Han characters of the national standards' tiers, each in the standard's own
    order, a character counted in its first tier: GB 2312 level 1, Big5's common set, JIS X
    0208 level 1, then the second levels of the three."""
    tiers = (
        ("gb2312", range(0xB0, 0xD8), range(0xA1, 0xFF)),
        ("big5", range(0xA4, 0xC7), [*range(0x40, 0x7F), *range(0xA1, 0xFF)]),
        ("euc_jp", range(0xB0, 0xD0), range(0xA1, 0xFF)),
        ("gb2312", range(0xD8, 0xF8), range(0xA1, 0xFF)),
        ("big5", range(0xC9, 0xFA), [*range(0x40, 0x7F), *range(0xA1, 0xFF)]),
        ("euc_jp", range(0xD0, 0xF5), range(0xA1, 0xFF)),
    )
    order: dict[str, None] = {}
    for codec, leads, trails in tiers:
        for lead in leads:
            for trail in trails:
                try:
                    ch = bytes([lead, trail]).decode(codec)
                except UnicodeDecodeError:
                    continue
                if len(ch) == 1 and _is_han(ord(ch)):
                    order.setdefault(ch)
    return "".join(order)


def derive_han_order(word_list: str) -> str:
    """The band order: Han characters by their frequency in a word list with counts (lines
    "word count ..."; the one used is jieba's dict.txt, MIT licence), each character scoring
    the counts of the words it occurs in, ties by code point; then the characters of the
    standards' tiers the list never uses (`codec_tiers`)."""
    score: dict[str, int] = {}
    for line in word_list.splitlines():
        fields = line.split(" ")
        if len(fields) < 2 or not fields[1].isdigit():
            continue
        for ch in fields[0]:
            if _is_han(ord(ch)):
                score[ch] = score.get(ch, 0) + int(fields[1])
    ranked = sorted(score, key=lambda ch: (-score[ch], ord(ch)))
    seen = set(ranked)
    return "".join(ranked) + "".join(ch for ch in codec_tiers() if ch not in seen)


def _module_text(order: str) -> str:
    lines = [order[i : i + 60] for i in range(0, len(order), 60)]
    body = "\n".join(f'    "{line}"' for line in lines)
    return (
        '"""The Han order of the chunked font slicing, most frequent first, sliced by\n'
        "`slices.TIERS`: written by `python -m gitpub.config.slices DICT` from jieba's word list\n"
        "(jieba 0.42.1, jieba/dict.txt, MIT licence) by `slices.derive_han_order`, then the\n"
        "characters of the national standards' tiers the list lacks. Never edit it by hand, and\n"
        "never regenerate it without a reason: a changed order moves characters between chunks\n"
        '(bump `slices.SLICING`)."""\n\n'
        f"ORDER = (\n{body}\n)\n"
    )


if __name__ == "__main__":
    import sys
    from pathlib import Path

    text = Path(sys.argv[1]).read_text("utf-8")
    Path(__file__).with_name("hanbands.py").write_text(
        _module_text(derive_han_order(text)), encoding="utf-8"
    )
