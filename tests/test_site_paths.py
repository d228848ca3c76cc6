"""`[publish] path` templates: each generator's own layout, and front matter that names no
safe path."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from conftest import CONFIG, Blog, make_blog

from gitpub.site.article import Article
from gitpub.site.paths import derive, title_segment


def _config(content: str, suffixes: str, template: str) -> str:
    return CONFIG.replace(
        'content = ["content/posts"]',
        f'content = ["{content}"]\nsuffixes = {suffixes}\npath = "{template}"',
    )


def _run(blog: Blog, key: str, text: str) -> dict[str, object]:
    job_id = blog.submit(key, text)
    blog.ok("run", "--until-idle")
    return dict(blog.job(job_id))


def test_jekyll_posts_are_named_by_date_and_slug(tmp_path: Path) -> None:
    blog = make_blog(
        tmp_path, _config("_posts", '[".md", ".markdown"]', "_posts/{date:%Y-%m-%d}-{slug}.md")
    )
    dated = (
        "---\nlayout: post\ntitle: 秋天的第一场雨\nslug: first-rain\n"
        "date: 2023-09-21 08:00:00 +0800\n---\n\n下雨了。\n"
    )
    assert _run(blog, "a", dated)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("_posts/2023-09-21-first-rain.md") == dated.encode()

    undated = "---\nlayout: post\ntitle: No Date Here\n---\n\nWritten today.\n"
    shown = _run(blog, "b", undated)
    submitted = str(shown["job"]["created_at"])[:10]  # the submit time, UTC
    assert shown["job"]["target_path"] == f"_posts/{submitted}-no-date-here.md"
    assert blog.remote_file(f"_posts/{submitted}-no-date-here.md") == undated.encode()


def test_hugo_bundles_put_the_article_in_its_own_folder(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, _config("content/posts", '[".md"]', "content/posts/{slug}/index.md"))
    text = '+++\ntitle = "Bundle"\nslug = "my-bundle"\n+++\n\nWith an image beside it.\n'
    assert _run(blog, "a", text)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/my-bundle/index.md") == text.encode()


def test_hexo_names_files_by_their_title_keeping_case_and_cjk(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, _config("source/_posts", '[".md"]', "source/_posts/{title}.md"))
    text = (
        "---\ntitle: 'Go 语言: 接口与 Generics'\ndate: 2022-01-01 10:00:00\n"
        "tags:\n- Go\n---\n\n正文\n"
    )
    assert _run(blog, "a", text)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("source/_posts/Go-语言-接口与-Generics.md") == text.encode()


def test_unsafe_slug_goes_to_review_and_bad_template_is_a_config_error(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    shown = _run(blog, "a", "---\ntitle: Escape\nslug: ../../etc/passwd\n---\n\nx\n")
    assert shown["job"]["state"] == "REVIEW"
    events = shown["events"]
    assert isinstance(events, list)
    reason = next(e for e in events if e["step"] == "prepare:done")["detail"]["reason"]
    assert "front-matter slug '../../etc/passwd' is not a safe file name" in reason

    (blog.root / ".blogpub.toml").write_text(CONFIG + "\n[publish]\n")  # placeholder below
    (blog.root / ".blogpub.toml").write_text(
        CONFIG.replace(
            'content = ["content/posts"]',
            'content = ["content/posts"]\npath = "content/posts/{name}.md"',
        )
    )
    res = blog.blogpub("status")
    assert res.returncode == 1
    assert "publish.path" in res.stderr and "{slug}" in res.stderr
    assert "Traceback" not in res.stderr


def test_derive_uses_the_submit_time_in_utc_without_a_date() -> None:
    art = Article.read("---\ntitle: T\n---\n")
    late = dt.datetime(2024, 12, 31, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    named = derive("p/{date:%Y-%m-%d}-{slug}.md", "p", ".md", art, late)
    assert named.path == "p/2025-01-01-t.md" and not named.explicit
    assert title_segment("  a/b: c?  ") == "a-b-c"
