"""Job commits are made in memory: the tree gitpub writes must be the one git itself writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import git

from gitpub import objects
from gitpub.gitrepo import Repo


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
