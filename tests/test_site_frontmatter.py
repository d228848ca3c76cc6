"""Front matter read as the generators read it; the article's bytes are never rewritten."""

from __future__ import annotations

import datetime as dt

from conftest import Blog

from gitpub.site.article import Article
from gitpub.site.frontmatter import parse

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
