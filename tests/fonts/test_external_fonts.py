"""external_sync with a font config: a note written straight into the content folder is
delivered with the subsets rebuilt for its characters, and the rebase onto a remote that moved
is never blocked by font files (the write-up's first review finding: only the content folder
was staged, the font gate rewrote tracked subsets in the live checkout, and `git rebase` then
refused with "cannot rebase: You have unstaged changes", trapping the note's commit locally)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testing.fixtures import Blog, article
from testing.fontkit import chars, cmap, commit_article, tiny_blog

FONT = "public/fonts/blog.woff2"
NOTE = "content/posts/note.mdx"


def sync_commit(blog: Blog) -> str:
    (commit,) = blog.remote_git(
        "log", "--format=%H", "--fixed-strings", "--grep=Blog-External-Sync: ", "main"
    ).split()
    return commit


def porcelain(blog: Blog) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain"], cwd=blog.root, capture_output=True, text=True, check=True
    ).stdout


def write_note(blog: Blog) -> None:
    # 笔记 and 手写 are in the tiny font but in no article yet: the subsets must change.
    (blog.root / NOTE).write_text(article("笔记", "手写的笔记。"), encoding="utf-8")


def test_note_is_committed_with_its_fonts_and_rebased_onto_a_moved_remote(
    tmp_path: Path,
) -> None:
    blog = tiny_blog(tmp_path)
    blog.ok("install")
    before = cmap(blog.remote_file(FONT))
    assert not chars("笔记手写") <= before
    other = blog.clone("other")  # the remote moves, so the delivery has to rebase
    (other.root / "about.txt").write_text("pushed by someone else\n")
    other.git("add", "about.txt")
    other.git("commit", "-q", "-m", "someone else")
    other.git("push", "-q", "origin", "main")
    write_note(blog)

    blog.ok("run", "--until-idle")

    commit = sync_commit(blog)
    files = blog.remote_git("show", "--format=", "--name-only", commit).split()
    assert sorted(files) == [NOTE, FONT]
    assert chars("笔记手写") <= cmap(blog.remote_file(FONT))
    assert blog.remote_file("about.txt") == b"pushed by someone else\n"
    assert blog.remote_log()[0] == commit  # on top of the other change: rebased, not trapped
    assert blog.git("rev-parse", "HEAD") == commit
    assert porcelain(blog) == ""  # no font file left unstaged in the live checkout
    assert blog.status() == []


def test_font_only_conflict_rebuilds_the_union_of_characters(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    other = blog.clone("other")
    commit_article(other, "tech.mdx", "科技", "引擎技术。", fonts_too=True)
    other.git("push", "-q", "origin", "main")
    write_note(blog)

    res = blog.ok("sweep")
    assert "1 event(s) delivered" in res.stdout

    subset = cmap(blog.remote_file(FONT))
    assert chars("笔记手写") | chars("科技引擎技术") <= subset
    assert blog.remote_file(NOTE).startswith("---\ntitle: 笔记".encode())
    assert blog.remote_file("content/posts/tech.mdx")
    assert blog.git("rev-parse", "HEAD") == blog.remote_log()[0]
    assert porcelain(blog) == ""
    assert blog.ok("fonts", "--check").returncode == 0  # the live checkout's subsets are current


def test_a_note_landing_on_articles_pushed_without_subsets_carries_subsets_for_both(
    tmp_path: Path,
) -> None:
    # The rebase is clean (the other side never touched the subsets), yet the merged articles
    # need characters neither subset has: the note's own commit is amended to carry them.
    blog = tiny_blog(tmp_path)
    other = blog.clone("other")
    commit_article(other, "plain.mdx", "电力", "水化高物理。", fonts_too=False)
    other.git("push", "-q", "origin", "main")
    theirs = other.git("rev-parse", "HEAD")
    write_note(blog)

    blog.ok("sweep")

    commit = sync_commit(blog)
    assert blog.remote_log()[:2] == [commit, theirs]  # the note's commit alone on top
    files = blog.remote_git("show", "--format=", "--name-only", commit).split()
    assert sorted(files) == [NOTE, FONT]
    assert chars("笔记手写") | chars("电力水化高物理") <= cmap(blog.remote_file(FONT))
    assert blog.git("rev-parse", "HEAD") == commit
    assert porcelain(blog) == ""
    assert blog.ok("fonts", "--check").returncode == 0
