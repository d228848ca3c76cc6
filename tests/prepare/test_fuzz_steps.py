"""Step answers, fuzzed: an external draft, judge and review gate that answer whatever the
fuzzer writes (JSON of any shape, fields outside the contract, wrong types, bytes that are not
UTF-8, a token, a non-zero exit), run as real processes by a real dry run.

A step that answers outside its contract is a failed step and the preview says REVIEW with a
reason on one line; nothing a step answers makes gitpub exit 3, repeat a secret, or write
anything (a dry run records nothing)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from testing import fuzzing
from testing.fixtures import CONFIG, article, make_blog

STEP = 'cat >/dev/null; cat "$0/$1.out"; exit "$(cat "$0/$1.rc")"'
"""A step that answers what the fuzzer wrote for it (a shell, not Python: many examples)."""

WORDS = fuzzing.words(surrogates=False)
SCALAR = st.one_of(
    WORDS,
    st.sampled_from(["NEW", "UPDATE", "SKIP", "KEEP", "content/posts/x.mdx", "../../etc/x.md"]),
    st.sampled_from([f"token {fuzzing.GH_TOKEN}", "a\nb\x1b[2J", article("Draft", "text")]),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
)
FIELDS = {
    "draft": ["text", "path", "title"],
    "judge": ["decision", "target", "reason", "score"],
    "review": ["ok", "reason", "line"],
}


@st.composite
def answers(draw: st.DrawFn, step: str) -> tuple[bytes, int]:
    """What one step prints, and its exit status."""
    keys = st.one_of(st.sampled_from(FIELDS[step]), WORDS)
    obj = draw(st.dictionaries(keys, st.one_of(SCALAR, st.lists(SCALAR, max_size=2)), max_size=4))
    out = json.dumps(obj, ensure_ascii=draw(st.booleans())).encode("utf-8")
    bend = draw(st.integers(0, 9))
    if bend == 0:
        out = draw(st.binary(max_size=30))
    elif bend == 1:
        out = out[: draw(st.integers(0, len(out)))]
    elif bend == 2:
        out = b"[1, 2]"
    elif bend == 3:
        out = out.replace(b"}", b', "x": NaN}', 1)
    code = draw(st.sampled_from([0, 0, 0, 0, 1, 2, 137]))
    return out, code


def test_step_answers_of_every_shape(tmp_path: Path) -> None:
    folder = tmp_path / "answers"
    folder.mkdir()
    argv = lambda step: json.dumps(["sh", "-c", STEP, str(folder), step])  # noqa: E731
    blog = make_blog(
        tmp_path,
        CONFIG
        + f"\n[steps]\ndraft = {argv('draft')}\njudge = {argv('judge')}\n"
        + f"review = [{argv('review')}]\ntimeout = 30\n",
    )
    blog.trust()
    source = blog.root.parent / "post.mdx"
    source.write_text(article("Stepped", "An article the fuzzed steps prepare."))

    @given(draft=answers("draft"), judge=answers("judge"), review=answers("review"))
    @fuzzing.budget(0.5)
    def one(draft: tuple[bytes, int], judge: tuple[bytes, int], review: tuple[bytes, int]) -> None:
        fuzzing.tried("step-answers")
        for step, (out, code) in (("draft", draft), ("judge", judge), ("review", review)):
            (folder / f"{step}.out").write_bytes(out)
            (folder / f"{step}.rc").write_text(str(code))
        before = fuzzing.written(blog.root), blog.git("worktree", "list")
        res = fuzzing.in_process(blog.root, ["dry-run", "--source", str(source)], b"")
        code, out, err = res
        fuzzing.check_refusal(code, out, err, (draft, judge, review))
        assert (fuzzing.written(blog.root), blog.git("worktree", "list")) == before
        if code == 0:
            first = out.splitlines()[0]
            assert first.startswith("outcome: "), out
            head = out.split("\ndiff:\n", 1)[0].splitlines()
            prefixes = ("outcome:", "base:", "target:", "asset:", "manifest:", "  ")
            assert all(line.startswith(prefixes) for line in head), (draft, judge, review, out)

    one()
