"""A job changes only its own files: the one check every commit passes before gitpub pushes it.

The commit is compared with the exact tree it lands on (its parent in the stack that is about
to be pushed). It may add or modify regular files of its declared write set, each with exactly
the bytes the write set names — nothing else: no deletion, no file that becomes a folder or a
folder that becomes a file, no symlink, no mode change, no path outside the set. A path clash
(`--target a.md/b.md` where `a.md` is a file, a folder named like the article, a symlink pushed
by another clone) shows up here as a deletion, whatever let it through before.

`push` is the only way delivery reaches the remote: it walks the commits between the remote
tip and the head it is asked to push and refuses, as a bug, any commit that was not checked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from gitpub.core.errors import InternalError
from gitpub.core.ids import Oid, Sha256, sha256_hex
from gitpub.git.repo import PushResult, Repo

REGULAR = 0o100644


class WriteSet(NamedTuple):
    """What one commit may change: path → the SHA-256 of the bytes it must hold; `deletes`:
    paths it may remove (a person's own hand edits only; a job never deletes)."""

    files: Mapping[str, Sha256]
    deletes: frozenset[str] = frozenset()
    executable: frozenset[str] = frozenset()  # a person's own scripts keep their mode
    derived: frozenset[str] = frozenset()  # font outputs rebuilt on the way: any bytes


def violations(repo: Repo, parent: Oid, commit: Oid, allowed: WriteSet) -> list[str]:
    """What `commit` changes on top of `parent` beyond its write set, one line per path
    ("content/posts/a.md: deleted"); empty when it keeps to it."""
    import pygit2

    pg = repo.pg
    old = pg[parent].peel(pygit2.Tree)
    new = pg[commit].peel(pygit2.Tree)
    out: list[str] = []
    for delta in old.diff_to_tree(new).deltas:
        status = delta.status_char()
        path = delta.new_file.path if status != "D" else delta.old_file.path
        if status == "D":
            if path not in allowed.deletes:
                out.append(f"{path}: deleted")
            continue
        if status not in ("A", "M"):
            out.append(f"{path}: changed its kind ({status})")
            continue
        mode = delta.new_file.mode
        regular = mode == REGULAR or (mode == 0o100755 and path in allowed.executable)
        if not regular:
            out.append(f"{path}: not a regular file (mode {mode:o})")
        elif status == "M" and delta.old_file.mode != mode:
            out.append(f"{path}: mode changed")
        elif path in allowed.derived:
            continue  # rebuilt from the merged articles: their bytes are the rebuild's
        elif path not in allowed.files:
            out.append(f"{path}: outside the write set")
        elif sha256_hex(pg[delta.new_file.id].read_raw()) != allowed.files[path]:
            out.append(f"{path}: bytes differ from the artifact")
    return out


class Checked:
    """The commits of one push that passed `violations`, each against its own parent."""

    def __init__(self) -> None:
        self.passed: dict[Oid, Oid] = {}  # commit -> the parent it was checked against

    def check(self, repo: Repo, parent: Oid, commit: Oid, allowed: WriteSet) -> list[str]:
        found = violations(repo, parent, commit, allowed)
        if not found:
            self.passed[commit] = parent
        return found

    def check_range(self, repo: Repo, tip: Oid, head: Oid, allowed: WriteSet) -> list[str]:
        """The commits from `tip` (excluded) to `head` taken together, as one change: a
        person's hand edits replayed onto the remote, checked against what they changed."""
        found = violations(repo, tip, head, allowed)
        if not found:
            self.passed[head] = tip
        return found


def own_changes(repo: Repo, base: Oid | None, local: Oid, derived: frozenset[str]) -> WriteSet:
    """What a person's commits `base..local` changed, as the write set of their replay: each
    file they added or modified with its bytes at `local`, each file they deleted, and the
    `derived` files (font outputs: rebuilt from the merged articles) whatever their bytes."""
    import pygit2

    pg = repo.pg
    new = pg[local].peel(pygit2.Tree)
    old = pg[base].peel(pygit2.Tree) if base is not None else None
    diff = old.diff_to_tree(new) if old is not None else new.diff_to_tree(swap=True)
    files: dict[str, Sha256] = {}
    deletes: set[str] = set()
    executable: set[str] = set()
    for delta in diff.deltas:
        if delta.status_char() == "D":
            deletes.add(delta.old_file.path)
            continue
        path = delta.new_file.path
        files[path] = sha256_hex(pg[delta.new_file.id].read_raw())
        if delta.new_file.mode == 0o100755:
            executable.add(path)
    return WriteSet(files, frozenset(deletes), frozenset(executable), derived)


def push(
    repo: Repo,
    checked: Checked,
    remote: str,
    tip: Oid,
    head: Oid,
    branch: str,
    *,
    expect: str | None = None,
    marks: Mapping[str, str] | None = None,
) -> PushResult:
    """Push `head` onto the remote branch at `tip`, provided every commit in between passed
    the write-set check against exactly the tree it lands on. `expect`, `marks`: see
    `Repo.push` (a review branch is replaced, not fast-forwarded: its commit always sits on
    the published branch's tip; marks are the jobs' landmarks)."""
    at = head
    while at != tip:
        parent = checked.passed.get(at)
        if parent is None:
            raise InternalError(f"commit {at} was never checked against its write set")
        at = parent
    return repo.push(remote, head, branch, expect=expect, marks=marks)


def withdraw(repo: Repo, remote: str, branch: str, expect: str) -> PushResult:
    """Delete a branch gitpub owns on the remote (a review branch), provided it is still
    `expect`: a deletion carries no commit, so there is nothing to check against a write set,
    and the compare-and-swap keeps whatever a person pushed there meanwhile."""
    return repo.push(remote, "", branch, expect=expect)


def withdraw_refs(repo: Repo, remote: str, expected: Mapping[str, str]) -> bool:
    """Delete refs gitpub owns on the remote outside the branches (jobs' landmarks), each
    provided it still holds the value given; whether all went. Deletions carry no commit."""
    return repo.delete_remote(remote, expected)
