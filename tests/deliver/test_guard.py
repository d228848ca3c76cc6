"""The write-set guard on its own, on a real repository: what a replay may change on top of the
tree it lands on, for a job (its manifest) and for a person's hand edits (what their own
commits changed)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from testing.fixtures import git

from gitpub.core.errors import InternalError
from gitpub.core.ids import Oid, Sha256
from gitpub.deliver import guard
from gitpub.git.repo import Repo


def commit(root: Path, files: dict[str, bytes | None], message: str) -> Oid:
    for rel, data in files.items():
        path = root / rel
        if data is None:
            git(root, "rm", "--quiet", "-r", rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        git(root, "add", rel)
    git(root, "commit", "--quiet", "--allow-empty", "-m", message)
    return Oid(git(root, "rev-parse", "HEAD"))


def sha(data: bytes) -> Sha256:
    return Sha256(hashlib.sha256(data).hexdigest())


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Repo, Path]:
    git(tmp_path, "init", "--quiet", "repo")
    root = tmp_path / "repo"
    return Repo.discover(root), root


def test_a_job_may_only_add_its_manifest_files_with_their_bytes(repo: tuple[Repo, Path]) -> None:
    r, root = repo
    base = commit(root, {"posts/a.md": b"a\n", "posts/b.md": b"b\n"}, "base")
    own = guard.WriteSet({"posts/new.md": sha(b"new\n")})
    good = commit(root, {"posts/new.md": b"new\n"}, "job")
    assert guard.violations(r, base, good, own) == []
    git(root, "reset", "--quiet", "--hard", base)
    wrong = commit(root, {"posts/new.md": b"other\n"}, "job")
    assert guard.violations(r, base, wrong, own) == ["posts/new.md: bytes differ from the artifact"]
    git(root, "reset", "--quiet", "--hard", base)
    more = commit(root, {"posts/new.md": b"new\n", "posts/b.md": None, "x": b"x"}, "job")
    assert guard.violations(r, base, more, own) == [
        "posts/b.md: deleted",
        "x: outside the write set",
    ]


def test_a_symlink_or_a_mode_change_is_refused(repo: tuple[Repo, Path]) -> None:
    r, root = repo
    base = commit(root, {"posts/a.md": b"a\n"}, "base")
    os.symlink("/tmp", root / "posts" / "link")
    git(root, "add", "posts/link")
    (root / "posts" / "a.md").chmod(0o755)
    git(root, "add", "posts/a.md")
    git(root, "commit", "--quiet", "-m", "odd")
    head = Oid(git(root, "rev-parse", "HEAD"))
    own = guard.WriteSet({"posts/link": sha(b"/tmp"), "posts/a.md": sha(b"a\n")})
    found = guard.violations(r, base, head, own)
    assert "posts/link: not a regular file (mode 120000)" in found
    assert any(f.startswith("posts/a.md:") for f in found)


def test_a_hand_edit_replay_changes_only_what_the_person_changed(repo: tuple[Repo, Path]) -> None:
    r, root = repo
    files: dict[str, bytes | None] = {
        "posts/a.md": b"a\n",
        "posts/old.md": b"old\n",
        "f.woff2": b"0",
    }
    base = commit(root, files, "base")
    local = commit(root, {"posts/a.md": b"a, fixed\n", "posts/old.md": None}, "the person's")
    git(root, "reset", "--quiet", "--hard", base)
    tip = commit(root, {"posts/c.md": b"c\n"}, "someone else's")
    own = guard.own_changes(r, base, local, frozenset({"f.woff2"}))
    fixed = {"posts/a.md": b"a, fixed\n", "posts/old.md": None}
    replay = commit(root, {**fixed, "f.woff2": b"1"}, "replayed, subsets rebuilt")
    assert guard.Checked().check_range(r, tip, replay, own) == []
    git(root, "reset", "--quiet", "--hard", tip)
    bad = commit(root, {**fixed, "posts/c.md": None}, "replayed badly")
    assert guard.Checked().check_range(r, tip, bad, own) == ["posts/c.md: deleted"]


def test_push_refuses_a_commit_nobody_checked(repo: tuple[Repo, Path]) -> None:
    r, root = repo
    tip = commit(root, {"a": b"a"}, "tip")
    head = commit(root, {"b": b"b"}, "unchecked")
    with pytest.raises(InternalError, match="never checked"):
        guard.push(r, guard.Checked(), "origin", tip, head, "main")
