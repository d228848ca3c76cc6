"""The fixed slicing of chunked fonts: total, disjoint, and the same whatever else a blog uses."""

from __future__ import annotations

import random

from gitpub.config import slices
from gitpub.config.hanbands import ORDER


def test_every_code_point_has_one_slice_among_the_names_and_in_its_range() -> None:
    names = set(slices.names())
    rng = random.Random(29)
    sample = [*range(0, 0x10000, 7), *rng.sample(range(0x10000, 0x110000), 3000)]
    for cp in sample:
        name = slices.slice_of(cp)
        assert name in names, hex(cp)
    # Each slice's unicode-range holds its members and nothing of another slice.
    for name in {slices.slice_of(cp) for cp in rng.sample(sample, 40)} | {"latin", "han-001"}:
        for lo, hi in slices.members(name):
            for cp in range(lo, hi + 1, max(1, (hi - lo) // 50)):
                assert slices.slice_of(cp) == name, (name, hex(cp))


def test_the_band_order_holds_each_standard_hanzi_once() -> None:
    assert len(set(ORDER)) == len(ORDER)
    assert all(slices.slice_of(ord(ch)).startswith("han-") for ch in ORDER)
    assert set(slices.codec_tiers()) <= set(ORDER)
    # Most frequent first: the first band holds the commonest characters of any text.
    assert set("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年") <= set(ORDER[:200])
    sizes: dict[str, int] = {}
    for ch in ORDER:
        band = slices.slice_of(ord(ch))
        sizes[band] = sizes.get(band, 0) + 1
    # The tiers: the 1,400 commonest together, then slices of 30, 80 and 1,000 ranks.
    want = [1400, 30, 30, 80, 80, 1000]
    assert [sizes[f"han-{i:03d}"] for i in (1, 2, 31, 32, 66, 67)] == want
    edges = (0, 1399, 1400, 2299, 2300, 5099, 5100)
    assert [slices.band_of(rank) for rank in edges] == [0, 0, 1, 30, 31, 65, 66]
    assert len(sizes) == slices.band_count()


def test_a_slice_depends_on_the_character_alone() -> None:
    rng = random.Random(7)
    text = [rng.randrange(0x4E00, 0xA000) for _ in range(2000)]
    alone = {cp: slices.slice_of(cp) for cp in text}
    grouped = slices.split(text)
    for name, cps in grouped.items():
        assert all(alone[cp] == name for cp in cps)
    assert slices.split(text[:100]) == {
        n: frozenset(c for c in cps if c in set(text[:100]))
        for n, cps in grouped.items()
        if any(c in set(text[:100]) for c in cps)
    }


def test_output_paths_are_the_stylesheet_and_one_file_per_slice() -> None:
    paths = slices.output_paths("public/fonts/blog")
    assert paths[0] == "public/fonts/blog/blog.css"
    assert len(paths) == len(set(paths)) == len(slices.names()) + 1
    assert "public/fonts/blog/han-001.woff2" in paths
