"""Job commits are made in memory: the tree gitpub writes must be the one git itself writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testing.fixtures import git

from gitpub.git import objects
from gitpub.git.repo import Repo


def git_tree_with(repo: Path, base_tree: str, files: dict[str, bytes]) -> str:
    """What git's own index makes of base_tree plus these files."""
    env_index = {"GIT_INDEX_FILE": str(repo / "scratch-index")}
    git(repo, "read-tree", base_tree, env=env_index)
    for path, data in files.items():
        blob = (
            subprocess.run(
                ["git", "hash-object", "-w", "--stdin"],
                cwd=repo,
                input=data,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
        git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env_index)
    return git(repo, "write-tree", env=env_index).strip()


def test_tree_with_matches_git(tmp_path: Path) -> None:
    repo = tmp_path / "blog"
    git(tmp_path, "init", "--quiet", str(repo))
    for rel, text in {
        "content/posts/a.md": "a",
        "content/posts/b.md": "b",
        "content/about.md": "about",
        "themes/t/layouts/x.html": "x",
        "themes/t/static/y.css": "y",
        "README.md": "readme",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "base")
    base_tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    files = {
        "content/posts/b.md": b"b, revised",  # a file replaced
        "content/posts/c.md": b"c",  # a file added beside others
        "content/posts/c/cover.svg": b"<svg/>",  # a new folder below an old one
        "static/fonts/sub.woff2": b"\x00font",  # a new folder at the root
        "TOP.md": b"top",  # a file at the root
    }
    ours = objects.tree_with(Repo(repo), base_tree, files)
    assert ours == git_tree_with(repo, base_tree, files)
    # The trees nobody wrote are the base's own objects, unchanged.
    assert (
        git(repo, "rev-parse", f"{ours}:themes").strip()
        == git(repo, "rev-parse", f"{base_tree}:themes").strip()
    )


def commit_files(repo: Path, files: dict[str, str | None], message: str) -> str:
    for rel, text in files.items():
        if text is None:
            git(repo, "rm", "--quiet", rel)
            continue
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
        git(repo, "add", rel)
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def git_cherry_pick(repo: Path, commit: str, onto: str) -> str | None:
    """What git's own cherry-pick makes of the commit on `onto`: its tree, or None when
    it stops on a conflict."""
    git(repo, "checkout", "--quiet", "--detach", onto)
    picked = subprocess.run(
        ["git", "cherry-pick", "--no-rerere-autoupdate", commit], cwd=repo, capture_output=True
    )
    if picked.returncode != 0:
        git(repo, "cherry-pick", "--abort")
        return None
    return git(repo, "rev-parse", "HEAD^{tree}").strip()


def test_a_replayed_job_commit_has_the_tree_git_cherry_pick_makes(tmp_path: Path) -> None:
    from gitpub import config

    repo = tmp_path / "blog"
    git(tmp_path, "init", "--quiet", str(repo))
    base = commit_files(
        repo,
        {"content/posts/a.md": "a", "content/about.md": "about", "themes/t/x.html": "x"},
        "base",
    )
    # The remote moved on: other posts, a changed theme, a new folder, a deleted page.
    git(repo, "checkout", "--quiet", "-b", "remote")
    tip = commit_files(
        repo,
        {
            "content/posts/b.md": "b",
            "themes/t/x.html": "x2",
            "static/new.css": "css",
            "content/about.md": None,
        },
        "remote moves on",
    )
    cfg = config.load(repo)  # the defaults: no signing
    cases = {
        "a new post": {"content/posts/c.md": "c"},
        "a revised post": {"content/posts/a.md": "a, revised"},
        "a post in a new folder": {"content/notes/2026/n.md": "n"},
        "a post and its asset": {"content/posts/d.md": "d", "content/posts/d/cover.svg": "<svg/>"},
        "a file the remote also changed": {"themes/t/x.html": "x3"},
        "a file the remote deleted": {"content/about.md": "about, revised"},
        "a file the remote added too": {"static/new.css": "other css"},
    }
    for name, files in cases.items():
        git(repo, "checkout", "--quiet", "--detach", base)
        job = commit_files(repo, files, name)
        ours, conflicted = objects.cherry_pick(cfg, Repo(repo), job, tip)
        theirs = git_cherry_pick(repo, job, tip)
        if theirs is None:
            assert ours is None and conflicted, name
        else:
            assert ours is not None and not conflicted, name
            assert git(repo, "rev-parse", f"{ours}^{{tree}}").strip() == theirs, name
            assert git(repo, "rev-parse", f"{ours}^").strip() == tip, name
