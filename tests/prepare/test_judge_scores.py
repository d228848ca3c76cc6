"""What a person reads of a score: three decimals, and "the same article" only for the same
bytes (real posts showed a near-duplicate with three lines edited as "1.00 similar", the
words of an exact duplicate)."""

from __future__ import annotations

from testing.paths import CORPUS

from gitpub.config import StepsConfig
from gitpub.core.states import State
from gitpub.prepare import builtins
from gitpub.prepare import target as rules

POST = (
    CORPUS
    / "blogs"
    / "awesee"
    / "site"
    / "leetcode"
    / "2017-08-12-n-ary-tree-preorder-traversal.md"
)


def judged(text: str, other: str) -> dict[str, object]:
    request = {
        "mode": "prepare",
        "candidate": {"path": "posts/new.md", "text": text},
        "existing": [{"path": "posts/old.md", "text": other}],
    }
    return builtins.judge(request, 0.85, 0.5)


def test_a_post_with_three_lines_edited_is_not_read_as_a_duplicate() -> None:
    real = POST.read_text("utf-8")
    lines = real.split("\n")
    for i in (10, 20, 30):
        lines[i] += " (edited)"
    verdict = judged("\n".join(lines), real)
    assert verdict["decision"] == "NEW"
    score = verdict["score"]
    assert isinstance(score, float) and 0.85 <= score < 1.0
    outcome = rules.after_judge(rules.Target("posts/new.md", False, "test"), verdict, StepsConfig())
    assert outcome is not None and outcome.state is State.REVIEW
    shown = outcome.reason.split(" ", 1)[0]
    assert len(shown) == 5 and shown != "1.000" and shown.startswith("0.9")


def test_the_same_article_is_the_same_bytes() -> None:
    real = POST.read_text("utf-8")
    assert judged(real, real) == {
        "decision": "SKIP",
        "reason": "1.000 similar to posts/old.md: the same article",
    }
    # Other line endings, a byte order mark, no final newline: the same 3-grams, so the
    # best score there is, but a person's edit all the same — a person decides.
    for variant in (real.replace("\n", "\r\n"), "\ufeff" + real, real.rstrip("\n")):
        verdict = judged(variant, real)
        assert (verdict["decision"], verdict["score"]) == ("NEW", 1.0)
        outcome = rules.after_judge(
            rules.Target("posts/new.md", False, "test"), verdict, StepsConfig()
        )
        assert outcome is not None and outcome.state is State.REVIEW
        assert outcome.reason.startswith("1.000 similar to posts/old.md: a near-duplicate")


def test_scores_are_cut_to_three_decimals_never_rounded_up() -> None:
    assert [builtins.shown(s) for s in (0.0, 0.5, 0.8905, 0.9996, 1.0, 2 / 3)] == [
        "0.000",
        "0.500",
        "0.890",
        "0.999",
        "1.000",
        "0.666",
    ]
