"""The stylesheet of a chunked font: one @font-face per slice the articles use.

Each rule names the whole slice in its unicode-range, not just the characters in use, so the
text changes only when a slice is used for the first time; a browser then fetches a chunk
only for a page that shows one of its characters. The rules are few lines each, in the fixed
order of the slicing and apart from each other, so two writers who each bring in a new slice
touch different lines of the file."""

from __future__ import annotations

from collections.abc import Iterable

from gitpub.config import FontsConfig, slices

HEADER = (
    "/* Written by gitpub ([fonts] chunked): one @font-face per unicode-range slice the\n"
    "   articles use; each .woff2 holds just the characters of its slice that they use. */\n"
)


def file_name(name: str) -> str:
    return f"{name}.woff2"


def unicode_range(name: str) -> str:
    return ", ".join(
        f"U+{lo:04X}" if lo == hi else f"U+{lo:04X}-{hi:04X}" for lo, hi in slices.members(name)
    )


def css(fc: FontsConfig, used: Iterable[str]) -> str:
    order = {name: i for i, name in enumerate(slices.names())}
    rules = [
        "@font-face {\n"
        f'  font-family: "{fc.family}";\n'
        f'  src: url("{file_name(name)}") format("woff2");\n'
        "  font-display: swap;\n"
        f"  unicode-range: {unicode_range(name)};\n"
        "}\n"
        for name in sorted(set(used), key=order.__getitem__)
    ]
    return HEADER + "".join("\n" + rule for rule in rules)
