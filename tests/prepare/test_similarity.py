"""The built-in judge's similarity: exact Jaccard of body 3-grams, however it is computed."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from testing.fixtures import Blog, make_blog

from gitpub.prepare import builtins
from gitpub.site import frontmatter


def _texts() -> list[str]:
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghij") for _ in range(5)) for _ in range(300)]
    out = [
        "---\ntitle: T\n---\n\n" + " ".join(rng.choice(words) for _ in range(150))
        for _ in range(12)
    ]
    out.append(out[0].replace("title: T", "title: Another title"))  # same body
    out.append(out[1][: len(out[1]) // 2])  # half of another
    out.append("+++\ntitle = '山'\n+++\n\n山高月小，水落石出。" * 2)
    out += ["---\ntitle: short\n---\n\nab", ""]
    return out


def _plain(a: str, b: str) -> float:
    sa, sb = builtins.shingles(a), builtins.shingles(b)
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def test_similarity_is_the_jaccard_of_the_bodies_3_gram_sets() -> None:
    texts = _texts()
    for a in texts:
        for b in texts:
            assert builtins.similarity(a, b) == _plain(a, b)
    assert builtins.similarity(texts[0], texts[12]) == 1.0  # front matter is not compared


@pytest.mark.parametrize("room", [0, 2, 6, 1 << 30])
def test_the_best_match_is_exact_whatever_part_of_the_blog_the_memo_holds(
    monkeypatch: pytest.MonkeyPatch, room: int
) -> None:
    # Room for no text, a few, or all: the texts it cannot hold are compared as plain sets.
    monkeypatch.setattr(builtins.Grams, "MAX_TEXTS", room)
    memo = builtins.Grams()
    texts = _texts()
    others = [{"path": f"p{i}.md", "text": t} for i, t in enumerate(texts[1:])]
    expected = max((_plain(texts[0], o["text"]), o["path"]) for o in others)
    for _ in range(3):
        assert builtins._best(texts[0], others, memo) == expected
    assert len(memo.texts) == min(room, len(texts))


def test_a_full_memo_starts_over_when_the_blog_it_holds_is_no_longer_asked_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(builtins.Grams, "MAX_TEXTS", 4)
    memo = builtins.Grams()
    texts = _texts()
    builtins._best(texts[0], [{"path": "a", "text": t} for t in texts[1:8]], memo)
    held = set(memo.texts)
    assert memo.full and len(held) == 4
    builtins._best(texts[0], [{"path": "a", "text": t} for t in texts[1:8]], memo)
    assert set(memo.texts) == held  # the same blog again: kept
    # Another blog: the first comparison leaves what is held unused, the next starts over.
    others = texts[8:]
    expected = max((_plain(texts[8], t), "b") for t in others)
    for _ in range(2):
        assert (
            builtins._best(texts[8], [{"path": "b", "text": t} for t in others], memo) == expected
        )
    assert set(memo.texts) <= {texts[8], *others}


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: A\n---\nbody\n",
        "---\ntitle: [unclosed\n---\n\nbody",
        "---\ntitle: A\n...\nbody",
        "+++\ntitle = 'A'\n+++\nbody",
        '{"title": "A"}\nbody',
        "\ufeff---\ntitle: A\n---\nbody",
        "---\ntitle: never closed\nbody",
        "no front matter\n---\n",
        "",
    ],
)
def test_body_start_agrees_with_the_parser(text: str) -> None:
    assert frontmatter.body_start(text) == frontmatter.parse(text).body_start_line


def test_each_repository_has_its_own_memo(blog: Blog, tmp_path: Path) -> None:
    """Two repositories served by one long-lived process (a Publisher each): the judge's
    3-grams hang on each one's Context, never on the process."""
    from gitpub.context import memo, open_context

    (tmp_path / "second").mkdir()
    other = make_blog(tmp_path / "second")
    with open_context(blog.root) as one, open_context(other.root) as two:
        first = memo(one.memos, builtins.Grams)
        assert memo(one.memos, builtins.Grams) is first
        assert memo(two.memos, builtins.Grams) is not first


@pytest.mark.parametrize("floor", [0.2, 0.5, 0.85])
def test_the_floor_drops_only_articles_that_cannot_reach_it(floor: float) -> None:
    """With a floor, the answer is the exact best whenever that reaches the floor, and
    nothing otherwise: the substring bound never drops an article that could matter."""
    rng = random.Random(floor)
    texts = _texts()
    for n in range(25):
        candidate = rng.choice(texts)
        # Near-copies of the candidate at every distance, among unrelated texts.
        words = candidate.split()
        near = [" ".join(w for w in words if rng.random() > cut) for cut in (0.1, 0.3, 0.6)]
        pool = [{"path": f"p{i}.md", "text": t} for i, t in enumerate(texts + near)]
        pool = [o for o in pool if o["text"] != candidate]
        scores = {o["path"]: _plain(candidate, o["text"]) for o in pool}
        top = max(scores.values())
        got = builtins._best(candidate, pool, builtins.Grams(), floor)
        if top >= floor:
            # The first article of the best score, as an exact comparison of all finds it.
            assert got == (top, next(p for p, s in scores.items() if s == top)), (n, floor)
        else:
            assert got == (0.0, None), (n, floor)


def test_a_huge_articles_3_grams_are_kept_in_the_cache_and_read_back_the_same() -> None:
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzäöü漢字") for _ in range(6))] * 3
    words += ["".join(rng.choice("abcdefghijklmnop") for _ in range(5)) for _ in range(500)]
    text = "---\ntitle: Huge\n---\n\n" + " ".join(rng.choice(words) for _ in range(200_000))
    assert len(text) >= builtins.BIG
    first = builtins.shingles(text)
    (kept,) = (Path(os.environ["XDG_CACHE_HOME"]) / "gitpub" / "grams").iterdir()
    assert builtins.shingles(text) == first == builtins._shingles(text)
    kept.write_text("abc\ndef\n")  # what is read back is what the cache holds
    assert builtins.shingles(text) == {"abc", "def"}
