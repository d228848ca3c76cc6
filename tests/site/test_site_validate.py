"""Validation by file type: `.md` only needs readable front matter; `.mdx` needs balanced JSX,
with code found the way the MDX compiler finds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, make_blog
from testing.paths import CORPUS

from gitpub.site.validate import check

# Each of these was refused by the first built-in check (a tag matcher) and is accepted by
# the MDX compiler, or is ordinary Markdown.
ACCEPTED_MDX = {
    "fence indented in a list item": (
        "1. Install:\n\n        ```java\n        List<Integer> xs;\n        ```\n\n2. Run.\n"
    ),
    "fence indented inside JSX": (
        '<Tabs>\n  <TabItem value="a">\n\n    ```ts\n    const m = new Map<string, T>();\n'
        "    ```\n\n  </TabItem>\n</Tabs>\n"
    ),
    "javascript in an export block": (
        "export const Box = ({children}) => (\n  <div style={{padding: 8}}>{children}</div>\n);\n"
        "\nexport const sample = `\n<b>\n\n`;\n\n# Title\n\n<Box>hi</Box>\n"
    ),
    "opening tag spread over lines": (
        '<Card\n  title="卡片"\n  href="/docs"\n>\n\nBody text.\n\n</Card>\n'
    ),
    "code span holding a tag": "Use `<div>` or ``a ` <span>`` inline.\n",
    "escaped angle bracket": "Generic \\<T> and a \\<tag>.\n",
    "fragment": "<>\n  text\n</>\n",
}

# The compiler refuses these; a check without a compiler lets doubtful text through.
LENIENT_MDX = {
    "comparison and a heart": "a < b, and <3\n",
    "void element without a slash": '<img src="a.png">\n<Image src="b.png" />\n<br>\n',
}

REFUSED_MDX = {
    "unclosed tag": ("<Note>\n\nnever closed\n", "tag <Note> is never closed", 1),
    "mismatched tag": ("<Note>\n\n</Tip>\n", "closing tag </Tip> does not match", 3),
    "unclosed front matter": ("---\ntitle: x\n\nbody\n", "front matter:", 1),
    # The attribute's braces balance only on line 62: the tag is read whole, and is unclosed.
    "unclosed tag after a long attribute": (
        "<Table rows={[\n" + "  { type: 'Promise<void>' },\n\n" * 30 + "]}>\n\ntext\n",
        "tag <Table> is never closed",
        1,
    ),
}


@pytest.mark.parametrize("name", sorted({**ACCEPTED_MDX, **LENIENT_MDX}))
def test_accepted_mdx(name: str) -> None:
    body = {**ACCEPTED_MDX, **LENIENT_MDX}[name]
    assert check("content/posts/a.mdx", "---\ntitle: t\n---\n\n" + body) is None


@pytest.mark.parametrize("name", sorted(REFUSED_MDX))
def test_refused_mdx(name: str) -> None:
    text, reason, line = REFUSED_MDX[name]
    problem = check("content/posts/a.mdx", text)
    assert problem is not None and problem.reason.startswith(reason)
    assert problem.line == line


def test_line_numbers_count_the_front_matter() -> None:
    problem = check("a.mdx", "---\ntitle: t\ntags: [a]\n---\n\nfine\n\n<Note>\n")
    assert problem is not None and problem.line == 8


def test_markdown_is_refused_only_for_unreadable_front_matter() -> None:
    odd = "    List<Integer> xs;  // indented code\n\n```plantuml\n<include>\n```\n\n<div>\n"
    assert check("a.md", odd) is None  # a tag left open is plain HTML to Markdown
    assert check("a.md", "---\nno title at all: true\n---\n" + odd) is None
    problem = check("a.md", "+++\ntitle = 'never closed'\n")
    assert problem is not None and "never closed" in problem.reason


def _publish(blog: Blog, key: str, text: str, name: str) -> dict[str, object]:
    src = blog.root.parent / name
    src.write_text(text, encoding="utf-8")
    job_id = blog.ok("submit", "--key", key, "--source", str(src), "--json").json()["job_id"]
    blog.ok("run", "--until-idle")
    return dict(blog.job(job_id)["job"])


def test_md_post_without_title_publishes_when_its_slug_names_the_path(tmp_path: Path) -> None:
    blog = make_blog(
        tmp_path,
        CONFIG.replace(
            'content = ["content/posts"]', 'content = ["content/posts"]\nsuffixes = [".md"]'
        ),
    )
    text = "---\nslug: no-title\n---\n\n    List<Integer> xs;\n"
    assert _publish(blog, "a", text, "a.md")["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/no-title.md") == text.encode()

    nameless = "Just a paragraph, no title, no slug.\n"
    job = _publish(blog, "b", nameless, "b.md")
    assert job["state"] == "REVIEW"
    shown = blog.job(str(job["job_id"]))
    reason = next(e for e in shown["events"] if e["step"] == "prepare:done")["detail"]["reason"]
    assert "no title" in reason and "--target" in reason


def test_validate_empty_list_turns_validation_off(tmp_path: Path) -> None:
    broken = "---\ntitle: Broken\nslug: broken\n---\n\n<Note>\n"
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    on = make_blog(tmp_path / "on")
    assert _publish(on, "a", broken, "a.mdx")["state"] == "REVIEW"
    off = make_blog(tmp_path / "off", CONFIG + "\n[steps]\nvalidate = []\n")
    assert _publish(off, "a", broken, "a.mdx")["state"] == "PUBLISHED"
    assert off.remote_file("content/posts/broken.mdx") == broken.encode()


MDX_PAGE = CORPUS / "mdx" / "mdx-js" / "docs" / "guides"


def test_an_mdx_article_given_a_markdown_template_is_named_mdx_and_checked(
    tmp_path: Path,
) -> None:
    blog = make_blog(
        tmp_path,
        CONFIG.replace(
            'content = ["content/posts"]',
            'content = ["content/posts"]\nsuffixes = [".md", ".mdx"]\n'
            'path = "content/posts/{slug}.md"',
        ),
    )
    # A real MDX page (export blocks, JSX): named .mdx, where the JSX check applies.
    page = (MDX_PAGE / "gfm.mdx").read_text("utf-8")
    job = _publish(blog, "gfm", page, "gfm.mdx")
    assert (job["state"], job["target_path"]) == (
        "PUBLISHED",
        "content/posts/GitHub-flavored-markdown-GFM.mdx",
    )
    assert blog.remote_file("content/posts/GitHub-flavored-markdown-GFM.mdx") == page.encode()
    # The same check that passed it stops a component left open.
    broken = "import {Note} from './note.jsx'\n\n# Open note\n\n<Note>\n\nnever closed\n"
    job = _publish(blog, "open", broken, "open.mdx")
    assert (job["state"], job["target_path"]) == ("REVIEW", "content/posts/Open-note.mdx")
    # Markdown stays Markdown: the template's .md.
    plain = "# Plain\n\nA post with `<Note>` only in code.\n"
    job = _publish(blog, "plain", plain, "plain.md")
    assert (job["state"], job["target_path"]) == ("PUBLISHED", "content/posts/Plain.md")
