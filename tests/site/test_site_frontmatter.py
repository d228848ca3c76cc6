"""Front matter read as the generators read it; the article's bytes are never rewritten."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml
from testing.fixtures import Blog
from testing.paths import CORPUS

from gitpub.site.article import Article
from gitpub.site.frontmatter import parse

HBCHEN = CORPUS / "blogs" / "hbchen" / "site" / "content"
# Made up beside the real posts below: it also carries a `slug`, which none of them has, so it
# shows the tolerant reading finds the slug too.
HUGO_TABS = (
    '---\ntitle: "Go 的接口"\ndate: 2021-03-04T10:00:00+08:00\nslug: go-interface\n'
    'categories: [\n\t"Go"\n]\ntags: [\n\t"Go",\n\t"接口"\n]\n---\n\n正文。\n'
)


def test_yaml_with_multi_line_lists_is_read_strictly() -> None:
    fm = parse("---\ntitle: 列表\ntags:\n  - a\n  - b\ndate: 2024-05-01\n---\nbody\n")
    assert fm.kind == "yaml" and not fm.tolerant and fm.error is None
    assert fm.title == "列表"
    assert fm.data["tags"] == ["a", "b"]
    assert fm.date == dt.datetime(2024, 5, 1)
    assert fm.body_start_line == 8


def test_hugo_tab_indented_flow_lists_are_read_tolerantly() -> None:
    fm = parse(HUGO_TABS)
    assert fm.error is None and fm.tolerant  # PyYAML refuses the tabs; Hugo does not
    assert (fm.title, fm.slug) == ("Go 的接口", "go-interface")
    assert fm.date == dt.datetime.fromisoformat("2021-03-04T10:00:00+08:00")


def test_real_hugo_posts_with_tab_indented_flow_lists_are_read_tolerantly() -> None:
    """Hobo Chen's Hugo blog writes `categories: [` newline, tab, `"Go",` newline, `]`: Hugo
    reads it, PyYAML refuses it, and gitpub must still find the title and the date."""
    posts = sorted(HBCHEN.rglob("*.md"))
    assert len(posts) == 4
    for post in posts:
        text = post.read_text(encoding="utf-8")
        block = text.split("\n---\n", 1)[0].removeprefix("---\n")
        assert '[\n\t"' in block
        with pytest.raises(yaml.YAMLError):
            yaml.safe_load(block)  # the strict parser refuses this real front matter
        fm = parse(text)
        assert fm.error is None and fm.tolerant, post
    fronts = {p.name: parse(p.read_text(encoding="utf-8")) for p in posts}
    read = {name: (fm.title, fm.slug, fm.date) for name, fm in fronts.items()}
    cst = dt.timezone(dt.timedelta(hours=8))
    assert read == {
        "2013-11-07-mysql-you-hua-gong-ju.md": (
            "MySql:优化工具",
            None,
            dt.datetime(2013, 11, 7, 18, 36, tzinfo=cst),
        ),
        "2014-04-15-redmine-plugins.md": (
            "Redmine Plugins",
            None,
            dt.datetime(2014, 4, 15, 12, 9, tzinfo=cst),
        ),
        "2021-03-19-delve.md": ("Golang远程调试-Delve", None, dt.datetime(2021, 3, 19)),
        "2019-06-27-go-micro-use-kubernetes-registry.md": (
            "【go-micro】使用kubernetes注册中心",
            None,
            dt.datetime(2019, 6, 27),
        ),
    }


def test_toml_front_matter() -> None:
    text = (
        '+++\ntitle = "TOML 标题"\nslug = "toml-post"\ndate = 2023-01-02T03:04:05Z\n+++\n\nbody\n'
    )
    fm = parse(text)
    assert fm.kind == "toml" and not fm.tolerant
    assert (fm.title, fm.slug) == ("TOML 标题", "toml-post")
    assert fm.date == dt.datetime(2023, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def test_json_front_matter() -> None:
    text = '{\n  "title": "JSON post",\n  "slug": "json-post"\n}\n\nbody\n'
    fm = parse(text)
    assert fm.kind == "json"
    assert (fm.title, fm.slug) == ("JSON post", "json-post")
    assert fm.body_start_line == 5


def test_only_an_unclosed_delimiter_is_an_error() -> None:
    fm = parse("---\ntitle: never closed\n\nbody\n")
    assert fm.error == "front matter opened with --- on line 1 is never closed"
    assert parse("+++\ntitle = 'x'\n").error is not None
    assert parse("---\n: : :\n---\nbody\n").error is not None
    assert parse("# Just a heading\n\nbody\n").kind is None


def test_title_falls_back_to_the_first_heading_outside_code() -> None:
    text = "---\ndate: 2024-01-01\n---\n\n    # not a heading (indented code)\n\n# 真正的标题\n"
    assert Article.read(text).title == "真正的标题"
    assert Article.read("```\n# in a fence\n```\n\nTitle\n=====\n").title == "Title"


def test_toml_and_tab_list_posts_publish_byte_for_byte_at_their_slug(blog: Blog) -> None:
    toml = '+++\ntitle = "TOML 标题"\nslug = "toml-post"\n+++\n\n用 TOML 写的。\n'
    ids = [blog.submit("toml", toml), blog.submit("tabs", HUGO_TABS)]
    blog.ok("run", "--until-idle")
    assert [blog.job(i)["job"]["state"] for i in ids] == ["PUBLISHED", "PUBLISHED"]
    assert blog.remote_file("content/posts/toml-post.mdx") == toml.encode()
    assert blog.remote_file("content/posts/go-interface.mdx") == HUGO_TABS.encode()
