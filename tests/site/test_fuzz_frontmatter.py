"""Front matter, fuzzed, through the door that reads it as a job would: `git blogpub dry-run`
(the real prepare pipeline on throwaway state) on a blog whose path template uses the title,
the slug and the date. YAML, TOML and JSON blocks, unclosed ones, tags a safe loader refuses,
dates no calendar has, slugs that are no file name.

Every source ends in an outcome (READY_TO_COMMIT, REVIEW with its reason, SKIPPED) or a
one-line refusal, never in exit 3; the report's lines are the report's own (no reason spills
onto a line of its own); and a dry run writes nothing, ever."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from testing import fuzzing
from testing.fixtures import CONFIG, make_blog

TEMPLATED = CONFIG.replace(
    'content = ["content/posts"]',
    'content = ["content/posts"]\npath = "content/posts/{date:%Y-%m-%d}-{slug}.mdx"',
)

WORDS = fuzzing.words(surrogates=False)
DATES = st.sampled_from(
    [
        "2026-11-30",
        "2026-11-30T08:00:00+01:00",
        "0999-06-01",
        "0001-01-01",
        "9999-12-31T23:59:59-05:00",
        "2026-13-45",
        "2026-02-30",
        "10000-01-01",
        "yesterday",
        "1e999",
        "-1",
        "2026-11-30 08:00:00 +0100",
    ]
)
YAML_VALUES = st.one_of(
    WORDS.map(lambda w: w.replace("\n", " ")),
    DATES,
    st.sampled_from(
        [
            '"unclosed',
            "[a, b",
            "{a: 1}",
            "&anchor x",
            "*anchor",
            "!!python/object:os.system echo",
            "!!binary AAAA",
            "|\n  block",
            "~",
            "null",
            "- a\n- b",
            "'" + fuzzing.GH_TOKEN + "'",
            "1" * 50,
        ]
    ),
)
KEYS = st.one_of(st.sampled_from(["title", "slug", "date", "tags", "draft", "? x"]), WORDS)


@st.composite
def sources(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["yaml", "toml", "json", "none", "yaml-unclosed"]))
    entries = draw(st.lists(st.tuples(KEYS, YAML_VALUES), max_size=4))
    if kind.startswith("yaml"):
        block = "\n".join(f"{k}: {v}" for k, v in entries)
        head = f"---\n{block}\n" + ("" if kind == "yaml-unclosed" else "---\n")
    elif kind == "toml":
        block = "\n".join(
            f'{k} = "{v}"' if not v[:1].isdigit() else f"{k} = {v}" for k, v in entries
        )
        head = f"+++\n{block}\n+++\n"
    elif kind == "json":
        head = "{" + ", ".join(f'"{k}": "{v}"' for k, v in entries) + "}\n"
    else:
        head = ""
    body = draw(st.sampled_from(["", "# A heading\n", "body\n", "<Note>\nunclosed\n", "# \n"]))
    return head + "\n" + body + draw(WORDS) + "\n"


REPORT = (
    "outcome:",
    "base:",
    "target:",
    "asset:",
    "manifest:",
    "  content/",
    "diff:",
    "warning:",  # a date the generators would not read, named instead of replaced
)


def test_front_matter_of_every_shape(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, TEMPLATED)

    @given(text=sources())
    @fuzzing.budget(1.5)
    def one(text: str) -> None:
        fuzzing.tried("front-matter")
        before = fuzzing.written(blog.root), blog.git("worktree", "list")
        argv = ["dry-run", "--source", "-"]
        code, out, err = fuzzing.in_process(blog.root, argv, text.encode("utf-8"))
        fuzzing.check_refusal(code, out, err, text)
        assert (fuzzing.written(blog.root), blog.git("worktree", "list")) == before, text
        if code == 0:
            head = out.split("\ndiff:\n", 1)[0].splitlines()
            assert head[0].startswith("outcome:"), out
            assert all(line.startswith(REPORT) for line in head), (text, out)

    one()
