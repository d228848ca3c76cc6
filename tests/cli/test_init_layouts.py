"""`init` lays new articles out as the blog's author already does: on real blogs of each
generator it names the generator, the articles section, a suffix the generator renders and
the folder pattern of the existing posts; what it writes then publishes a real post there.
Sources and licences: tests/corpus/blogs/*/SOURCE.md."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from testing.fixtures import Blog, git
from testing.paths import CORPUS

from gitpub import config

CORPUS = CORPUS / "blogs"


def real_blog(tmp_path: Path, name: str, skip: tuple[str, ...] = ()) -> Blog:
    """A clone of a bare remote holding the kept files of a real blog (but `skip`)."""
    site = CORPUS / name / "site"
    remote, root = tmp_path / "remote.git", tmp_path / "blog"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(root))
    for src in sorted(site.rglob("*")):
        rel = src.relative_to(site).as_posix()
        if src.is_file() and rel not in skip:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, root / rel)
    return Blog(root, remote)


def init(blog: Blog) -> tuple[str, config.Config]:
    out = blog.ok("init").stdout
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "the blog")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    return out, config.load(blog.root)


def publish(blog: Blog, src: Path, key: str) -> dict[str, object]:
    job = blog.ok("submit", "--key", key, "--source", str(src), "--json").json()["job_id"]
    blog.ok("run", "--until-idle")
    return dict(blog.job(job)["job"])


def test_a_real_zola_blog_is_zola_with_its_main_section_as_articles(tmp_path: Path) -> None:
    post = "content/Rust-1.74.1.md"
    blog = real_blog(tmp_path, "rustblog", skip=(post,))
    out, cfg = init(blog)
    assert out.startswith("found Zola: config.toml sets base_url")
    assert "content/ is the section (_index.md) with the most pages (5)" in out
    assert cfg.publish.content == ("content",)
    assert cfg.publish.suffixes == (".md",)
    # Five pages, one of them a bundle: new posts are plain files of the section.
    assert cfg.publish.path is None

    shown = publish(blog, CORPUS / "rustblog" / "site" / post, "1.74.1")
    # No slug, no date in the front matter: the path is the title's, inside the section.
    assert (shown["state"], shown["target_path"]) == (
        "PUBLISHED",
        "content/Announcing-Rust-1-74-1.md",
    )
    assert (
        blog.remote_file("content/Announcing-Rust-1-74-1.md")
        == (CORPUS / "rustblog" / "site" / post).read_bytes()
    )


def test_section_pages_are_not_articles(tmp_path: Path) -> None:
    blog = real_blog(tmp_path, "rustblog")
    out, cfg = init(blog)
    # Five files and one bundle; the section's own `_index.md` is its list page.
    assert "content/ is the section (_index.md) with the most pages (6)" in out
    assert cfg.publish.content == ("content",)


def test_a_real_hugo_blog_of_year_folders_gets_a_year_folder_template(tmp_path: Path) -> None:
    post = "content/blog/2025/steering-council-results/index.md"
    blog = real_blog(tmp_path, "hugovk", skip=(post,))
    out, cfg = init(blog)
    assert out.startswith("found Hugo: config/_default/hugo.toml and content/ exist")
    assert "5 of 5 articles sit in year folders" in out
    assert cfg.publish.content == ("content/blog",)
    assert cfg.publish.suffixes == (".md",)
    assert cfg.publish.path == "content/blog/{date:%Y}/{slug}/index.md"

    shown = publish(blog, CORPUS / "hugovk" / "site" / post, "results")
    # The front matter's date names the year folder; the title names the bundle.
    path = "content/blog/2025/Steering-Council-results/index.md"
    assert (shown["state"], shown["target_path"]) == ("PUBLISHED", path)
    assert blog.remote_file(path) == (CORPUS / "hugovk" / "site" / post).read_bytes()


def test_one_stray_mdx_never_makes_hugo_articles_mdx(tmp_path: Path) -> None:
    blog = real_blog(tmp_path, "hugovk")
    # A page some tool left behind; Hugo does not render it.
    (blog.root / "content/blog/2026/notes.mdx").parent.mkdir(parents=True)
    (blog.root / "content/blog/2026/notes.mdx").write_text("---\ntitle: n\n---\n", "utf-8")
    out, cfg = init(blog)
    assert ".mdx" not in cfg.publish.suffixes
    assert cfg.publish.path == "content/blog/{date:%Y}/{slug}/index.md"
    assert "Hugo does not render .mdx: left out of suffixes" in out


def test_hexo_posts_in_topic_folders_are_named_in_the_reasons(tmp_path: Path) -> None:
    blog = real_blog(tmp_path, "xovel")
    posts = blog.root / "source" / "_posts"
    topic = posts / "notes"
    topic.mkdir(parents=True, exist_ok=True)
    notes = CORPUS / "weekly-practice" / "notes"
    for name in ("week015-elk-in-action", "week062-ssh-tunnel-vnc-remote-access"):
        shutil.copyfile(notes / name / "README.md", topic / f"{name}.md")
    flat = sorted(p for p in posts.glob("*.md"))
    for p in flat:
        p.unlink()
    out, cfg = init(blog)
    assert out.startswith("found Hexo: ")
    assert "2 of 2 articles sit in topic folders (notes/); pass --target" in out
    assert cfg.publish.suffixes == (".md",)


def test_a_post_dated_only_by_its_file_name_keeps_its_date_when_sent_again(
    tmp_path: Path,
) -> None:
    post = "website/blog/2019-12-30-docusaurus-2019-recap.md"
    blog = real_blog(tmp_path, "docusaurus")
    (blog.root / ".blogpub.toml").write_text(
        '[publish]\ncontent = ["website/blog"]\nsuffixes = [".md", ".mdx"]\n'
        'path = "website/blog/{date:%Y-%m-%d}-{slug}.md"\n',
        "utf-8",
    )
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "the blog")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    log = blog.remote_log()
    data = (CORPUS / "docusaurus" / "site" / post).read_bytes()
    src = tmp_path / "recap.md"

    # Sent again as it is, without --target: the same file, not a copy dated today.
    src.write_bytes(data)
    shown = blog.job(publish_id(blog, src, "again"))
    assert (shown["job"]["state"], reason(shown)) == (
        "SKIPPED",
        f"no change: {post} already holds these bytes",
    )
    assert blog.remote_log() == log

    # Revised: the path it names is the existing post's, which only --target may replace.
    src.write_bytes(data.replace(b"Cheers to a great 2020!", b"Cheers to a great 2020, all!"))
    shown = blog.job(publish_id(blog, src, "revised"))
    assert (shown["job"]["state"], reason(shown)) == (
        "REVIEW",
        f"{post} already exists; pass --target {post} to update it",
    )
    assert blog.remote_log() == log


def reason(shown: dict[str, Any]) -> str:
    done = next(e for e in shown["events"] if e["step"] == "prepare:done")
    return str(done["detail"]["reason"])


def publish_id(blog: Blog, src: Path, key: str) -> str:
    job = str(blog.ok("submit", "--key", key, "--source", str(src), "--json").json()["job_id"])
    blog.ok("run", "--until-idle")
    return job
