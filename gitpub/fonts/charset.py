"""Which characters the subsets must hold: every character of every article, plus the
always-kept ones. Nothing is subtracted — front matter, code blocks and punctuation all
render in the same font on the page."""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from gitpub.config import Config, FontsConfig
from gitpub.git.process import run_git
from gitpub.git.repo import Repo

ASCII = frozenset(range(0x20, 0x7F))

# The punctuation a Chinese text uses, kept by `cjk_punctuation = true` so that the first
# article using 《》 or ～ does not change the subset.
CJK_PUNCTUATION = frozenset(
    [*range(0x3000, 0x3012), *range(0x3014, 0x3020), 0x30FB]
    + [*range(0xFF01, 0xFF10), *range(0xFF1A, 0xFF21), *range(0xFF3B, 0xFF41)]
    + [*range(0xFF5B, 0xFF66)]
    + [0x00B7, 0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D, 0x2026]
)

# Characters that never show as a glyph: their absence from the font draws no tofu, so
# they are requested (the subset keeps them if the font maps them) but never reported.
_SILENT_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def always(fc: FontsConfig) -> frozenset[int]:
    if fc.always == "ascii":
        kept = set(ASCII)
    elif fc.always == "none":
        kept = set()
    else:
        kept = {ord(c) for c in fc.always}
    if fc.cjk_punctuation:
        kept |= CJK_PUNCTUATION
    return frozenset(kept)


def pathspecs(cfg: Config) -> list[str]:
    """The article files as git glob pathspecs."""
    assert cfg.fonts is not None
    if cfg.fonts.articles:
        return [f":(glob){a}" for a in cfg.fonts.articles]
    return [
        f":(glob){folder}/**/*{suffix}"
        for folder in cfg.publish.content
        for suffix in cfg.publish.suffixes
    ]


def _z_lines(data: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]


def text_chars(data: bytes) -> frozenset[int]:
    # Bytes that are not UTF-8 are no characters at all; the MDX gate rejects such articles.
    return frozenset(map(ord, data.decode("utf-8", "ignore")))


class Articles:
    """The article files of one checkout (tracked or not, never ignored ones) and their
    characters, read from the working tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, frozenset[int]] = {}

    @functools.cached_property
    def chars(self) -> frozenset[int]:
        return frozenset().union(*self.files.values())

    def baseline(self, cfg: Config) -> frozenset[int]:
        """The characters the articles held at HEAD: what a change is measured against."""
        specs = pathspecs(cfg)
        out = run_git(
            ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--"]
            + specs,
            self.root,
        ).stdout
        changed = {entry[3:] for entry in _z_lines(out)}
        kept = [chars for path, chars in self.files.items() if path not in changed]
        repo = Repo(self.root)
        head = repo.resolve("HEAD")
        if head is not None:
            for path in changed:
                data = repo.blob_at(head, path)
                if data is not None:
                    kept.append(text_chars(data))
        return frozenset().union(*kept)


def article_paths(cfg: Config, root: Path) -> list[str]:
    """The article files of the checkout: tracked or not, never ignored ones."""
    out = run_git(
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--"] + pathspecs(cfg),
        root,
    ).stdout
    return sorted(set(_z_lines(out)))


def read_articles(cfg: Config, root: Path) -> Articles:
    articles = Articles(root)
    for path in article_paths(cfg, root):
        try:
            articles.files[path] = text_chars((root / path).read_bytes())
        except (FileNotFoundError, IsADirectoryError):
            continue  # deleted in the working tree but still in the index
    return articles


def visible(codepoints: Iterable[int]) -> list[int]:
    """The code points that draw something, sorted."""
    out = []
    for cp in codepoints:
        if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:
            continue  # variation selectors: a font without them shows the base character
        if unicodedata.category(chr(cp)) not in _SILENT_CATEGORIES:
            out.append(cp)
    return sorted(out)


def summary(codepoints: Iterable[int], sample: int = 40) -> dict[str, object]:
    """A count plus a readable sample, for event details and `show`."""
    cps = sorted(codepoints)
    return {
        "count": len(cps),
        "sample": "".join(chr(c) for c in cps[:sample]),
        "codepoints": [f"U+{c:04X}" for c in cps[:sample]],
    }


def digest(codepoints: Iterable[int]) -> str:
    text = ",".join(f"{c:x}" for c in sorted(codepoints))
    return hashlib.sha256(text.encode("ascii")).hexdigest()
