"""The built-in judge's similarity: exact Jaccard of body 3-grams, however it is computed."""

from __future__ import annotations

import random

import pytest

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


def test_the_best_match_is_exact_when_the_memo_starts_over_between_comparisons(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _texts()
    others = [{"path": f"p{i}.md", "text": t} for i, t in enumerate(texts[1:])]
    expected = max((_plain(texts[0], o["text"]), o["path"]) for o in others)
    monkeypatch.setattr(builtins._Grams, "MAX_TEXTS", 2)  # it starts over at every call
    for _ in range(3):
        assert builtins._best(texts[0], others) == expected


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
