"""`submit --asset`: files beside the article, in its one commit, never over another file."""

from __future__ import annotations

from pathlib import Path

from testing.fixtures import CONFIG, Blog, make_blog

BUNDLES = CONFIG.replace(
    'content = ["content/posts"]',
    'content = ["content/posts"]\nsuffixes = [".md"]\npath = "content/posts/{slug}/index.md"',
)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def _submit(blog: Blog, key: str, text: str, *assets: Path) -> str:
    src = blog.root.parent / f"{key}.md"
    src.write_text(text, encoding="utf-8")
    args = ["submit", "--key", key, "--source", str(src), "--json"]
    for a in assets:
        args += ["--asset", str(a)]
    return str(blog.ok(*args).json()["job_id"])


def test_bundle_image_rides_in_the_articles_one_commit(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, BUNDLES)
    cover = tmp_path / "cover.png"
    cover.write_bytes(PNG)
    text = "---\ntitle: 带图的文章\nslug: with-image\n---\n\n![封面](cover.png)\n"
    job_id = _submit(blog, "a", text, cover)
    blog.ok("run", "--until-idle")

    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/with-image/index.md") == text.encode()
    assert blog.remote_file("content/posts/with-image/cover.png") == PNG
    tip = blog.remote_git("log", "-1", "--format=%H%n%(trailers:key=Blog-Job-Id,valueonly)", "main")
    assert tip.splitlines()[1] == job_id
    changed = blog.remote_git("show", "--name-only", "--format=", "main").splitlines()
    assert sorted(changed) == [
        "content/posts/with-image/cover.png",
        "content/posts/with-image/index.md",
    ]
    events = blog.job(job_id)["events"]
    files = next(e for e in events if e["step"] == "step:manifest")["detail"]["files"]
    assert files == changed and len(files) == 2


def test_an_asset_over_a_file_with_other_bytes_goes_to_review(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, BUNDLES)
    first = tmp_path / "one" / "cover.png"
    first.parent.mkdir()
    first.write_bytes(PNG)
    _submit(blog, "a", "---\ntitle: A\nslug: shared\n---\n\nfirst\n", first)
    blog.ok("run", "--until-idle")
    blob = blog.remote_git("rev-parse", "main:content/posts/shared/cover.png")

    other = tmp_path / "two" / "cover.png"
    other.parent.mkdir()
    other.write_bytes(PNG[::-1])
    job_id = _submit(blog, "b", "---\ntitle: A\nslug: shared\n---\n\nsecond\n", other)
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    reason = next(e for e in shown["events"] if e["step"] == "prepare:done")["detail"]["reason"]
    assert reason.startswith("asset content/posts/shared/cover.png already exists with other bytes")
    assert blog.remote_git("rev-parse", "main:content/posts/shared/cover.png") == blob


def test_same_article_with_a_new_asset_delivers_the_asset(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, BUNDLES)
    text = "---\ntitle: A\nslug: later\n---\n\nbody\n"
    _submit(blog, "a", text)
    blog.ok("run", "--until-idle")
    extra = tmp_path / "diagram.png"
    extra.write_bytes(PNG)
    job_id = _submit(blog, "b", text, extra)
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/later/diagram.png") == PNG


def test_missing_asset_is_refused_before_anything_is_recorded(blog: Blog) -> None:
    src = blog.root.parent / "a.mdx"
    src.write_text("---\ntitle: A\n---\n\nbody\n")
    res = blog.blogpub("submit", "--key", "k", "--source", str(src), "--asset", "nope.png")
    assert res.returncode == 1
    assert res.stderr.strip() == "git blogpub: --asset nope.png: no such file"
    assert not (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()
