"""`{date:…}` reads a post's date the way its generator does: Hexo's and VitePress's
`YYYY/MM/DD HH:mm[:ss]`, `YYYY-MM-DD HH:mm`, a date alone, one with an offset, YAML and TOML
datetimes. A date gitpub cannot read is named — in `dry-run` and `show` — and never quietly
replaced by the submit day."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, make_blog

from gitpub.site.article import Article
from gitpub.site.frontmatter import to_datetime
from gitpub.site.paths import derive

UTC8 = dt.timezone(dt.timedelta(hours=8))
SUBMITTED = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("2021/05/29 13:14", dt.datetime(2021, 5, 29, 13, 14)),  # VitePress blogs
        ("2016/10/09 19:18:24", dt.datetime(2016, 10, 9, 19, 18, 24)),  # Hexo's own
        ("2016-10-13 8:09:35", dt.datetime(2016, 10, 13, 8, 9, 35)),
        ("2024-05-01 10:30", dt.datetime(2024, 5, 1, 10, 30)),
        ("2024-05-01", dt.datetime(2024, 5, 1)),
        ("2017-08-13 21:30:00 +0800", dt.datetime(2017, 8, 13, 21, 30, tzinfo=UTC8)),
        ("2013-11-07T18:36:00+08:00", dt.datetime(2013, 11, 7, 18, 36, tzinfo=UTC8)),
        ("2005-05-30T21:40:06Z", dt.datetime(2005, 5, 30, 21, 40, 6, tzinfo=dt.timezone.utc)),
        ("2020.02.03", dt.datetime(2020, 2, 3)),
    ],
)
def test_date_strings_as_generators_write_them(written: str, read: dt.datetime) -> None:
    assert to_datetime(written) == read
    # And quoted, as a string in any front matter: the same date.
    art = Article.read(f"---\ntitle: T\ndate: '{written}'\n---\n")
    named = derive("p/{date:%Y/%m/%d}/{slug}.md", "p", ".md", art, SUBMITTED)
    assert named.path == f"p/{read:%Y/%m/%d}/T.md" and named.warning is None


@pytest.mark.parametrize(
    "front",
    [
        "---\ntitle: T\ndate: 2016/10/09 19:18:24\n---\n",  # YAML: a plain string
        "---\ntitle: T\ndate: 2016-10-09 19:18:24\n---\n",  # YAML: a timestamp
        "+++\ntitle = 'T'\ndate = 2016-10-09T19:18:24+08:00\n+++\n",  # TOML: an offset datetime
        "+++\ntitle = 'T'\ndate = 2016-10-09\n+++\n",  # TOML: a local date
    ],
)
def test_yaml_and_toml_dates_name_the_path(front: str) -> None:
    named = derive("p/{date:%Y-%m-%d}-{slug}.md", "p", ".md", Article.read(front), SUBMITTED)
    assert named.path == "p/2016-10-09-T.md" and named.warning is None


def test_no_date_at_all_takes_the_submit_time_without_a_warning() -> None:
    named = derive(
        "p/{date:%Y}/{slug}.md", "p", ".md", Article.read("---\ntitle: T\n---\n"), SUBMITTED
    )
    assert named.path == "p/2026/T.md" and named.warning is None


def test_an_unreadable_date_is_a_warning_in_dry_run_and_show(tmp_path: Path) -> None:
    config = CONFIG.replace(
        'content = ["content/posts"]',
        'content = ["content/posts"]\npath = "content/posts/{date:%Y/%m}/{slug}.md"',
    )
    blog: Blog = make_blog(tmp_path, config)
    text = "---\ntitle: Someday\nslug: someday\ndate: the first spring day\n---\n\nSoon.\n"
    src = tmp_path / "post.md"
    src.write_text(text)
    said = "the front-matter date 'the first spring day' is no date gitpub can read"
    dry = blog.ok("dry-run", "--source", str(src)).stdout
    assert f"warning:  {said}" in dry
    job = blog.submit("k", text)
    blog.ok("run", "--until-idle")
    shown = blog.ok("show", job).stdout
    assert f"warning:         {said}" in shown
    assert blog.job(job)["job"]["state"] == "PUBLISHED"
