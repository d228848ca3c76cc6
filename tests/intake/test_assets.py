"""`submit --asset`: files beside the article, in its one commit, never over another file."""

from __future__ import annotations

import os
import subprocess
import unicodedata
from pathlib import Path

import pytest
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


def test_an_asset_equal_to_a_file_up_to_normalization_is_named_so(tmp_path: Path) -> None:
    """NFD beside NFC is one name on macOS: the reason says Unicode normalization (it once said
    "case-insensitive"); up to case and normalization, it says both."""
    blog = make_blog(tmp_path, BUNDLES)
    composed = unicodedata.normalize("NFC", "café.png")
    first = tmp_path / "one" / composed
    first.parent.mkdir()
    first.write_bytes(PNG)
    _submit(blog, "a", "---\ntitle: A\nslug: cafe\n---\n\nfirst\n", first)
    blog.ok("run", "--until-idle")
    for key, name, why in (
        ("b", unicodedata.normalize("NFD", composed), "by Unicode normalization"),
        ("c", unicodedata.normalize("NFD", "CAFÉ.png"), "by case and Unicode normalization"),
        ("d", "Café.png", "on case-insensitive file systems"),
    ):
        other = tmp_path / key / name
        other.parent.mkdir()
        other.write_bytes(PNG)
        job_id = _submit(blog, key, f"---\ntitle: A\nslug: cafe\n---\n\n{key}\n", other)
        blog.ok("run", "--until-idle")
        shown = blog.job(job_id)
        assert shown["job"]["state"] == "REVIEW"
        reason = next(e for e in shown["events"] if e["step"] == "prepare:done")["detail"]
        assert reason["reason"] == (
            f"asset content/posts/cafe/{name} collides with content/posts/cafe/{composed} "
            + why
            + {
                "b": " (NFC and NFD spell one name on macOS file systems)",
                "c": " (one name on macOS file systems)",
                "d": "",
            }[key]
        )


SMALL = CONFIG.replace(
    'content = ["content/posts"]', 'content = ["content/posts"]\nmax_asset_bytes = 64'
)


def _refused(blog: Blog, args: list[str], needle: str) -> None:
    res = blog.blogpub(*args, timeout=60)
    assert res.returncode == 1, res
    (line,) = res.stderr.splitlines()
    assert needle in line, line
    assert not (blog.root / ".git" / "blogpub").exists()  # not even an empty store


def test_an_asset_is_bounded_while_it_is_read(tmp_path: Path) -> None:
    """/dev/zero, a pipe someone keeps writing and a huge (sparse) file are cut off at the
    bound, never read to the end: one line, exit 1, nothing written; dry-run alike."""
    blog = make_blog(tmp_path)
    src = tmp_path / "a.mdx"
    src.write_text("---\ntitle: A\n---\n\nbody\n")
    huge = tmp_path / "huge.bin"
    with huge.open("wb") as fh:
        fh.truncate(20 * 1024 * 1024)
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    # A writer that never stops (it opens the pipe again for each reader that left).
    endless = f"while :; do yes > '{fifo}'; done"
    writer = subprocess.Popen(["sh", "-c", endless], stderr=subprocess.DEVNULL)
    try:
        for asset in ("/dev/zero", str(fifo), str(huge)):
            for command in ("submit", "dry-run"):
                args = [command, "--source", str(src), "--asset", f"{asset}=x.bin"]
                if command == "submit":
                    args += ["--key", "k"]
                _refused(blog, args, f"--asset {asset}: over the limit of 10485760 bytes")
    finally:
        writer.kill()
        writer.wait()


def test_the_bound_is_the_blogs_and_holds_at_every_door(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, SMALL)
    src = tmp_path / "a.mdx"
    src.write_text("---\ntitle: A\n---\n\nbody\n")
    (tmp_path / "ok.bin").write_bytes(bytes(64))
    (tmp_path / "big.bin").write_bytes(bytes(65))
    args = ["submit", "--key", "k", "--source", str(src), "--asset"]
    _refused(blog, [*args, str(tmp_path / "big.bin")], "over the limit of 64 bytes")
    from gitpub import Publisher
    from gitpub.core.errors import InputError

    with pytest.raises(InputError, match=r"asset 'big.bin' for key 'k': over the limit of 64"):
        Publisher(blog.root).submit(
            "---\ntitle: A\n---\n\nbody\n", key="k", assets={"big.bin": bytes(65)}
        )
    assert not (blog.root / ".git" / "blogpub").exists()
    blog.ok(*args, str(tmp_path / "ok.bin"))
