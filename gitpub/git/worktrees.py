"""Private worktrees that no instant of a SIGKILL can leave half-made.

`git worktree add` registers the worktree first, with a HEAD of forty zeros, and only then
points HEAD at the commit. A process killed in between — or a second process looking in
between — leaves `worktrees/<id>/HEAD` naming no object, and from then on every
`git fetch` in the repository fails with "bad object worktrees/<id>/HEAD". git ignores an
entry of `worktrees/` that has no `gitdir` file, so here the registration is built with
HEAD valid from its first byte and `gitdir` written last, atomically: until that instant git
does not see the worktree at all, and from then on it sees a whole one. Removal drops
`gitdir` first, for the same reason in reverse."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from gitpub.core import crash
from gitpub.core.files import write_atomic
from gitpub.git.process import run_git
from gitpub.git.repo import Repo

READY = "gitpub-ready"
"""Marker in the admin folder: the checkout finished. Without it the worktree is remade."""

ZERO = "0" * 40


def admin_root(repo: Repo) -> Path:
    return repo.common_dir / "worktrees"


def add(repo: Repo, path: Path, start: str, branch: str | None = None) -> None:
    """A worktree at `path` on `branch` (moved to `start`), or detached at `start`."""
    remove(repo, path)  # whatever an earlier attempt left
    if branch:
        run_git(["update-ref", "-m", "gitpub: worktree", f"refs/heads/{branch}", start], repo.root)
    admin = admin_root(repo) / path.name
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text(f"ref: refs/heads/{branch}\n" if branch else f"{start}\n")
    (admin / "commondir").write_text("../..\n")
    path.mkdir(parents=True, exist_ok=True)
    (path / ".git").write_text(f"gitdir: {admin}\n")
    crash.point("during_worktree_add")
    write_atomic(admin / "gitdir", f"{path / '.git'}\n".encode())
    # read-tree runs no hook and honours .gitattributes as a checkout would.
    run_git(["read-tree", "--reset", "-u", "HEAD"], path)
    (admin / READY).write_text("")


def ready(repo: Repo, path: Path) -> bool:
    """The worktree at path was made whole by `add` and nothing is stuck inside it."""
    admin = admin_root(repo) / path.name
    if not (admin / READY).is_file() or not (path / ".git").is_file():
        return False
    # A lock a killed git left inside a private worktree would stop every later command.
    return not any((admin / name).exists() for name in ("index.lock", "HEAD.lock"))


def reset(path: Path, commit: str) -> None:
    """The worktree at `path` — its branch, index and files — back on `commit`."""
    run_git(["reset", "--hard", "--quiet", commit], path)


def remove(repo: Repo, path: Path, branch: str | None = None) -> None:
    """Remove one worktree, even a half-made one or one whose folder is already gone.

    Only this worktree's registration is dropped: a repository-wide `git worktree prune`
    would also forget a person's worktrees whose folders are merely out of reach."""
    remove_many(repo, [(path, branch)])


def remove_many(repo: Repo, places: Sequence[tuple[Path, str | None]]) -> None:
    """`remove` for several worktrees, their branches deleted in one ref transaction."""
    doomed = []
    for path, branch in places:
        for admin in _admins_of(repo, path):
            drop_admin(admin)
        shutil.rmtree(path, ignore_errors=True)
        if branch and repo.resolve(f"refs/heads/{branch}"):
            doomed.append(f"delete refs/heads/{branch}\n")
    if doomed:
        run_git(["update-ref", "--stdin"], repo.root, check=False, input="".join(doomed).encode())


def drop_admin(admin: Path) -> None:
    (admin / "gitdir").unlink(missing_ok=True)  # first: git stops seeing it at once
    shutil.rmtree(admin, ignore_errors=True)


def _admins_of(repo: Repo, path: Path) -> list[Path]:
    root = admin_root(repo)
    if not root.is_dir():
        return []
    target = str(path.resolve() / ".git")
    found = []
    for entry in root.iterdir():
        gitdir = _read(entry / "gitdir")
        if gitdir == target or (entry.name == path.name and gitdir is None):
            found.append(entry)
    return found


def _read(path: Path) -> str | None:
    with contextlib.suppress(OSError):
        return path.read_text().strip()
    return None


@dataclass(frozen=True)
class HalfMade:
    admin: Path  # the folder under <git dir>/worktrees/
    worktree: Path | None  # where it says its files are
    why: str
    ours: bool  # one of gitpub's private worktrees (under the state dir)


def half_made(repo: Repo) -> list[HalfMade]:
    """Registrations git would choke on: a HEAD naming no object (forty zeros, or a commit
    that is gone), a `git worktree add` that never finished, no HEAD at all."""
    root = admin_root(repo)
    if not root.is_dir():
        return []
    private = (repo.state_dir / "worktrees").resolve()
    out = []
    for admin in sorted(p for p in root.iterdir() if p.is_dir()):
        gitdir = _read(admin / "gitdir")
        if gitdir is None:
            continue  # invisible to git; `remove` clears ours when it meets them
        worktree = Path(gitdir).parent
        ours = worktree.resolve().is_relative_to(private)
        why = _broken(repo, admin)
        if why:
            out.append(HalfMade(admin, worktree, why, ours))
    return out


def _broken(repo: Repo, admin: Path) -> str | None:
    locked = _read(admin / "locked") or ""
    if locked.startswith("initializing"):
        return "`git worktree add` never finished"
    head = _read(admin / "HEAD")
    if head is None:
        return "no HEAD"
    if head.startswith("ref: "):
        return None  # a branch not yet born is a state git handles
    if head == ZERO or len(head) not in (40, 64):
        return f"HEAD is {head[:12] or 'empty'}…, no object"
    if repo.resolve(head) is None:
        return f"HEAD names the missing object {head[:12]}"
    return None


def scratch_checkout(repo: Repo, base: str, dest: Path) -> Path:
    """base's tree checked out at dest, in a repository of its own whose HEAD is base.

    The objects are read from the blog through an alternate, never copied into it or written
    there. The font gate needs a real repository here: it asks git for the article files and
    the HEAD they are measured against."""
    dest.mkdir(parents=True)
    pygit2.init_repository(str(dest))
    info = dest / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(str(repo.common_dir / "objects") + "\n", encoding="utf-8")
    scratch = pygit2.Repository(str(dest))  # opened again, so the alternate is read
    scratch.set_head(scratch[base].peel(pygit2.Commit).id)  # detached; no ref, no hook
    # read-tree runs no hook either, and honours the tree's .gitattributes as checkout would.
    run_git(["read-tree", "--reset", "-u", "HEAD"], dest)
    return dest
