"""The no-op font gate: `git blogpub fonts` with nothing changed answers from what the last
check saw (no font opened, no font library imported), and any change at all — an article,
an output, the source font — still reaches the full check."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from testing.fixtures import Blog, article
from testing.fontkit import COVERED, cmap, tiny_blog, tiny_font

from gitpub.core import userdirs
from gitpub.fonts import unchanged

WOFF2 = "public/fonts/blog.woff2"


def _settle() -> None:
    """Let every file written so far age past the racy window: a record names only files
    whose mtime cannot be shared with a later write."""
    time.sleep(unchanged.RACY_SECONDS + 0.1)


def _recorded(blog: Blog) -> None:
    _settle()
    assert blog.ok("fonts").stdout.strip() == "fonts: up to date"  # the full check records


def _imports(blog: Blog, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitpub", "-C", str(blog.root), *args],
        capture_output=True,
        text=True,
    )
    return proc, proc.stderr


def _font_facts() -> list[Path]:
    """The per-font facts (hash, coverage) gitpub keeps in the user cache."""
    folder = userdirs.cache_dir() / "fonts"
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("current-"))


def test_nothing_changed_opens_no_font_and_imports_no_font_library(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    _recorded(blog)
    # Without the font facts a full check must hash the font and read its cmap again; the
    # no-op gate needs neither.
    for facts in _font_facts():
        facts.unlink()

    proc, imports = _imports(blog, "fonts")
    assert proc.returncode == 0 and proc.stdout.strip() == "fonts: up to date"
    assert "fontTools" not in imports and "uharfbuzz" not in imports
    assert _font_facts() == []
    proc, imports = _imports(blog, "fonts", "--check")
    assert proc.returncode == 0 and "fontTools" not in imports and "uharfbuzz" not in imports


def test_an_article_edited_after_the_record_is_seen_even_at_the_same_size(
    tmp_path: Path,
) -> None:
    blog = tiny_blog(tmp_path)
    _recorded(blog)
    hello = blog.root / "content" / "posts" / "hello.mdx"
    text = hello.read_text("utf-8")
    # Same length in bytes, same mtime second: only the file's identity as a whole tells.
    edited = text.replace("第一篇", "科学技")
    assert len(edited.encode()) == len(text.encode()) and edited != text
    stamp = hello.stat().st_mtime_ns
    hello.write_text(edited, encoding="utf-8")
    os.utime(hello, ns=(stamp, stamp))

    res = blog.blogpub("fonts", "--check")
    assert res.returncode == 1 and f"{WOFF2}: stale (characters changed)" in res.stderr
    assert blog.ok("fonts").stdout.strip() == f"rebuilt {WOFF2}"
    assert {ord(c) for c in "科学技"} <= cmap((blog.root / WOFF2).read_bytes())


def test_a_new_article_an_output_replaced_and_a_new_font_are_each_seen(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    _recorded(blog)
    note = blog.root / "content" / "posts" / "note.mdx"
    note.write_text(article("笔记", "电力水化。"), encoding="utf-8")
    assert blog.blogpub("fonts", "--check").returncode == 1
    blog.ok("fonts")
    _recorded(blog)

    out = blog.root / WOFF2
    good = out.read_bytes()
    out.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    res = blog.blogpub("fonts", "--check")
    assert res.returncode == 1 and WOFF2 in res.stderr
    blog.ok("fonts")
    assert out.read_bytes() == good
    _recorded(blog)

    # The same path, another font: fewer characters, so the subset must change.
    fewer = frozenset(c for c in COVERED if c != ord("电"))
    tiny_font(tmp_path / "other.ttf", fewer)
    shutil.copyfile(tmp_path / "other.ttf", blog.root / "fonts" / "tiny.ttf")
    res = blog.blogpub("fonts", "--check")
    assert res.returncode == 1 and "source font changed" in res.stderr
    blog.ok("fonts")
    assert ord("电") not in cmap(out.read_bytes())


def test_jobs_find_the_font_facts_of_a_committed_font_by_its_blob(tmp_path: Path) -> None:
    # Every job checks the font out anew (new inode, new mtime): keyed by those, each job
    # would hash the whole font again and leave one more record behind.
    blog = tiny_blog(tmp_path)
    before = len(_font_facts())
    for key, title, body in (("a", "一", "我们学习科学。"), ("b", "二", "电力水化高。")):
        blog.submit(key, article(title, body, slug=key))
        blog.ok("run", "--until-idle")
    assert all(job["state"] == "PUBLISHED" for job in blog.status())
    assert len(_font_facts()) == before + 1
