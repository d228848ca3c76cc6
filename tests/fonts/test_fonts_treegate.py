"""The font gate without a checkout answers as the gate in a checkout does, bytes included.

A job's font gate reads the commit it builds on (the face from the user cache by blob id, the
article characters counted by tree and brought up to date from the tree delta) instead of a
checkout of the whole blog. Here both run on the same commits and the same job files, job
after job on a blog that changes under them (articles added, edited, a character's last use
removed), for a font file of the repository, a face of a collection, a link to a font outside
the repository, single outputs and chunks."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from testing.fixtures import Blog, article, git
from testing.fontkit import (
    COVERED,
    HANZI,
    chunked_table,
    fonts_table,
    make_font_blog,
    tiny_collection,
    tiny_font,
)

from gitpub import config, fonts
from gitpub.fonts import charset, treegate, usedchars
from gitpub.git.repo import Repo
from gitpub.git.worktrees import scratch_checkout

MISSING = "龘靐齉"  # outside the tiny fonts


def blog_of(tmp_path: Path, kind: str) -> Blog:
    if kind == "collection":
        font = tiny_collection(tmp_path / "tiny.ttc", faces=3)
        table = fonts_table("fonts/tiny.ttf", face=1)
        return make_font_blog(tmp_path, table, font)
    if kind == "link":
        font = tiny_font(tmp_path / "outside" / "tiny.ttf")
        return make_font_blog(tmp_path, fonts_table(f"fonts/{font.name}"), link=font)
    font = tiny_font(tmp_path / "tiny.ttf")
    if kind == "chunked":
        return make_font_blog(tmp_path, chunked_table("fonts/tiny.ttf"), font)
    return make_font_blog(tmp_path, fonts_table("fonts/tiny.ttf"), font)


def job_files(rng: random.Random, blog: Blog) -> dict[str, bytes]:
    posts = sorted((blog.root / "content" / "posts").glob("*.mdx"))
    if posts and rng.random() < 0.4:  # a revision of an article, dropping some characters
        path = rng.choice(posts)
        name = f"content/posts/{path.name}"
    else:
        name = f"content/posts/job-{rng.randrange(10_000)}.mdx"
    body = "".join(rng.choice(HANZI[: rng.choice([20, 60, len(HANZI)])]) for _ in range(12))
    if rng.random() < 0.2:
        body += rng.choice(MISSING)
    return {name: article(f"T{rng.randrange(99)}", body).encode("utf-8")}


def both(tmp_path: Path, blog: Blog, files: dict[str, bytes], n: int) -> tuple[Any, Any]:
    cfg = config.load(blog.root)
    repo = Repo(blog.root)
    base = git(blog.root, "rev-parse", "HEAD").strip()
    folder = tmp_path / f"artifacts-{n}"
    checkout = scratch_checkout(repo, base, tmp_path / f"checkout-{n}")
    for where in (folder, checkout):
        for path, data in files.items():
            (where / path).parent.mkdir(parents=True, exist_ok=True)
            (where / path).write_bytes(data)
    tree = treegate.gate(cfg, repo, base, folder, files)
    plain = fonts.gate(cfg, checkout)
    for answer, root in ((tree, folder), (plain, checkout)):
        answer.pop("seconds")
        answer["bytes"] = {o: (root / o).read_bytes() for o in answer["outputs"]}
    return tree, plain


@pytest.mark.parametrize("kind", ["file", "collection", "link", "chunked"])
def test_the_gate_on_the_commit_answers_as_the_gate_in_a_checkout(
    tmp_path: Path, kind: str
) -> None:
    blog = blog_of(tmp_path, kind)
    rng = random.Random(kind)
    changed = 0
    for n in range(8):
        files = job_files(rng, blog)
        tree, plain = both(tmp_path, blog, files, n)
        assert tree == plain, n
        changed += bool(tree["outputs"])
        # The job is published, subsets and all: the next job builds on it.
        for path, data in files.items():
            (blog.root / path).write_bytes(data)
        for output, data in tree["bytes"].items():
            (blog.root / output).parent.mkdir(parents=True, exist_ok=True)
            (blog.root / output).write_bytes(data)
        blog.git("add", "-A")
        blog.git("commit", "--quiet", "-m", f"job {n}")
    assert changed >= 2  # some jobs brought new characters, and the outputs followed


def test_the_article_characters_follow_the_tree_delta(tmp_path: Path) -> None:
    """The counts brought up to date commit after commit (a character's last use removed,
    a file renamed out of the article folder) equal the characters a checkout reads."""
    blog = blog_of(tmp_path, "file")
    cfg = config.load(blog.root)
    repo = Repo(blog.root)
    rng = random.Random(11)
    posts = blog.root / "content" / "posts"
    for n in range(12):
        roll = rng.random()
        existing = sorted(posts.glob("*.mdx"))
        if existing and roll < 0.3:
            rng.choice(existing).unlink()
        elif existing and roll < 0.45:
            moved = rng.choice(existing)
            shutil.move(moved, blog.root / f"elsewhere-{n}.mdx")
        else:
            name = rng.choice([f"p{n}.mdx", *(p.name for p in existing)])
            body = "".join(rng.choice(HANZI) for _ in range(rng.randint(0, 15)))
            (posts / name).write_text(article(f"T{n}", body), encoding="utf-8")
        blog.git("add", "-A")
        blog.git("commit", "--quiet", "--allow-empty", "-m", f"change {n}")
        head = git(blog.root, "rev-parse", "HEAD").strip()
        assert usedchars.at(cfg, repo, head).chars == charset.read_articles(cfg, blog.root).chars


PATTERNS = [
    "content/**/*.md",
    "posts/*.md",
    "docs/**",
    "a?c/[ab]*.mdx",
    "**/*.md",
    "x/**/y/*.md",
    "notes/[!z]*.txt",
]


def test_font_globs_name_the_files_git_names(tmp_path: Path) -> None:
    rng = random.Random(3)
    parts = ["content", "posts", "docs", "abc", "aXc", "x", "y", "notes", "deep", "z"]
    names = ["a.md", "b.mdx", "zz.txt", "a.txt", ".md", "bb.mdx", "post.md"]
    paths = sorted(
        {
            "/".join([*(rng.choice(parts) for _ in range(rng.randint(0, 3))), rng.choice(names)])
            for _ in range(300)
        }
    )
    repo = tmp_path / "repo"
    git(tmp_path, "init", "--quiet", str(repo))
    for path in paths:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("x")
    for pattern in PATTERNS:
        by_git = git(repo, "ls-files", "--others", "-z", "--", f":(glob){pattern}").split("\0")
        want = sorted(p for p in by_git if p)
        got = sorted(p for p in paths if usedchars._pattern(pattern).fullmatch(p))
        assert got == want, pattern


def test_a_collection_face_is_kept_alone_in_the_cache_by_blob(tmp_path: Path) -> None:
    from gitpub.fonts import faces

    blog = blog_of(tmp_path, "collection")
    repo = Repo(blog.root)
    base = git(blog.root, "rev-parse", "HEAD").strip()
    cfg = config.load(blog.root)
    assert cfg.fonts is not None
    blob = treegate.source_of(repo, base, cfg.fonts)
    assert isinstance(blob, str)
    files = {"content/posts/a.mdx": article("A", "的一是").encode("utf-8")}
    folder = tmp_path / "artifacts"
    (folder / "content" / "posts").mkdir(parents=True)
    (folder / "content/posts/a.mdx").write_bytes(files["content/posts/a.mdx"])
    treegate.gate(cfg, repo, base, folder, files)
    kept = faces.cached(blob, 1)
    from fontTools.ttLib import TTFont

    assert str(TTFont(kept)["name"].getDebugName(1)) == "Tiny 1"  # that face, alone
    assert set(TTFont(kept).getBestCmap()) == set(COVERED)
