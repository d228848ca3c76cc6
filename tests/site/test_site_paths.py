"""`[publish] path` templates: each generator's own layout, and front matter that names no
safe path."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, make_blog

from gitpub.site.article import Article
from gitpub.site.paths import PathError, derive, title_segment


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
    assert shown["job"]["target_path"] == f"_posts/{submitted}-No-Date-Here.md"
    assert blog.remote_file(f"_posts/{submitted}-No-Date-Here.md") == undated.encode()


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
    assert named.path == "p/2025-01-01-T.md" and not named.explicit
    assert title_segment("  a/b: c?  ") == "a-b-c"


def tree(blog: Blog) -> dict[str, str]:
    """path → blob id of every file on the remote's main branch."""
    out = blog.remote_git("ls-tree", "-r", "-z", "main")
    rows = (entry.split("\t", 1) for entry in out.split("\0") if entry)
    return {path: meta.split()[2] for meta, path in rows}


def test_the_default_path_keeps_the_titles_case_and_cjk(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, CONFIG.replace("branch =", 'suffixes = [".md"]\nbranch ='))
    text = "---\ntitle: Hello World 你好\n---\n\n第一篇。\n"
    shown = _run(blog, "a", text)
    assert (shown["job"]["state"], shown["job"]["target_path"]) == (
        "PUBLISHED",
        "content/posts/Hello-World-你好.md",
    )
    assert blog.remote_file("content/posts/Hello-World-你好.md") == text.encode()


def test_a_new_post_titled_hello_never_replaces_a_hand_written_hello_md(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, CONFIG.replace("branch =", 'suffixes = [".md"]\nbranch ='))
    (blog.root / "content" / "posts" / "hello.md").write_text("# hello\n\nWritten by hand.\n")
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "a hand-written post")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    before = tree(blog)

    shown = _run(blog, "a", "---\ntitle: Hello\n---\n\nA new post.\n")
    assert shown["job"]["state"] == "REVIEW"
    events = shown["events"]
    assert isinstance(events, list)
    reason = next(e for e in events if e["step"] == "prepare:done")["detail"]["reason"]
    assert reason == (
        "content/posts/Hello.md collides with content/posts/hello.md "
        "on case-insensitive file systems"
    )
    assert tree(blog) == before  # hello.md keeps its blob; no Hello.md beside it


def test_derived_names_stay_one_safe_segment_and_fit_the_file_system() -> None:
    at = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)

    def default(title: str) -> str:
        return derive(None, "p", ".md", Article.read(f"---\ntitle: '{title}'\n---\n"), at).path

    assert default("../..//etc\\passwd") == "p/etc-passwd.md"
    assert default(".hidden _draft") == "p/hidden-_draft.md"
    assert default("Ünïcode café, déjà vu") == "p/Ünïcode-café-déjà-vu.md"
    long_cjk = default("长" * 150)  # 450 bytes of title
    assert long_cjk == "p/" + "长" * 66 + ".md"  # at most 200 bytes: 66 whole characters
    assert default("word " * 30) == "p/" + "-".join(["word"] * 16) + ".md"  # 80 characters
    for device in ("CON", "nul", "Com1"):
        with pytest.raises(PathError, match="a name Windows reserves for a device"):
            default(device)
    named = derive(None, "p", ".md", Article.read("---\ntitle: x\nslug: con\n---\n"), at)
    assert named.path == "p/con.md" and named.explicit  # the writer's own slug is theirs
