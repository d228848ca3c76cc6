"""The command line imports only what each command needs: `submit` and `status` never load
pygit2 or fontTools (each costs more than the whole command), read from `-X importtime`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from testing.fixtures import Blog, article

HEAVY = ("pygit2", "fontTools", "uharfbuzz", "filelock")


def imported(blog: Blog, *args: str, stdin: str | None = None) -> tuple[set[str], str]:
    """Every module the command imported, and its stdout."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitpub", *args],
        cwd=blog.root,
        input=stdin,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "gitpub.cli.entry" in names  # the importtime report was read
    return names, proc.stdout


def top_level(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def test_submit_and_status_import_neither_pygit2_nor_fonttools(blog: Blog) -> None:
    src = blog.root.parent / "post.mdx"
    src.write_text(article("Fast", "Submitted without pygit2."))
    names, out = imported(blog, "submit", "--key", "fast", "--source", str(src), "--json")
    assert not top_level(names) & set(HEAVY), sorted(top_level(names) & set(HEAVY))
    job = blog.job(json.loads(out)["job_id"])["job"]
    assert job["state"] == "RECEIVED"  # and the job was really recorded

    names, _ = imported(blog, "submit", "--key", "stdin", "--source", "-", stdin="# text\n")
    assert not top_level(names) & set(HEAVY)
    names, out = imported(blog, "status", "--json")
    assert not top_level(names) & set(HEAVY)
    assert len(json.loads(out)["jobs"]) == 2
    # The secret scan a blog's CI runs is as light: its ruleset is data, not a library.
    names, out = imported(blog, "scan", "--json", str(src))
    assert not top_level(names) & set(HEAVY)
    assert json.loads(out) == {"findings": []}


def test_a_linked_worktree_and_a_subfolder_find_the_same_state(blog: Blog) -> None:
    """The repository is found without libgit2: from a subfolder and from a linked worktree
    the job lands in the one shared state dir."""
    src = blog.root.parent / "post.mdx"
    src.write_text(article("Anywhere", "From a subfolder."))
    sub = blog.root / "content" / "posts"
    res = subprocess.run(
        [sys.executable, "-m", "gitpub", "submit", "--key", "a", "--source", str(src)],
        cwd=sub,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    blog.git("branch", "side")
    linked = blog.root.parent / "linked"
    blog.git("worktree", "add", "-q", str(linked), "side")
    res = subprocess.run(
        [sys.executable, "-m", "gitpub", "submit", "--key", "b", "--source", str(src)],
        cwd=linked,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()
    assert not (linked / ".git").is_dir()
    assert len(blog.status()) == 2
