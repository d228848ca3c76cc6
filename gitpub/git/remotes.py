"""What a remote holds, asked of the remote itself: its branches and the one its HEAD names.

The remote-tracking refs say what a remote held at the last fetch, and nothing at all about
a branch this clone never fetched; `git ls-remote` asks the remote now, through the user's
own transport (credential helpers, ssh config), without writing a ref."""

from __future__ import annotations

from dataclasses import dataclass

from gitpub.git.process import run_git
from gitpub.git.repo import Repo


@dataclass(frozen=True)
class Heads:
    branches: frozenset[str]  # every refs/heads/* name the remote holds
    default: str | None  # the branch its HEAD points at (None: an empty remote, or unsaid)


def heads(repo: Repo, remote: str) -> Heads | None:
    """The remote's branches and default branch now; None when it cannot be asked (no
    network, no such remote): callers fall back on what the last fetch left."""
    proc = run_git(
        ["ls-remote", "--symref", remote, "HEAD", "refs/heads/*"], repo.root, check=False
    )
    if proc.returncode != 0:
        return None
    branches: set[str] = set()
    default = None
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        what, _, ref = line.partition("\t")
        if what.startswith("ref: refs/heads/") and ref == "HEAD":
            default = what.removeprefix("ref: refs/heads/")
        elif ref.startswith("refs/heads/"):
            branches.add(ref.removeprefix("refs/heads/"))
    return Heads(frozenset(branches), default if default in branches else None)


def last_fetched(repo: Repo, remote: str) -> Heads:
    """The same, as the remote-tracking refs of the last fetch have it."""
    prefix = f"refs/remotes/{remote}/"
    out = run_git(["for-each-ref", "--format=%(refname)", prefix], repo.root, check=False)
    names = {
        ref.removeprefix(prefix)
        for ref in out.stdout.decode("utf-8", "replace").split()
        if ref != f"{prefix}HEAD"
    }
    head = run_git(["symbolic-ref", "--quiet", f"{prefix}HEAD"], repo.root, check=False)
    default = head.stdout.decode("utf-8", "replace").strip().removeprefix(prefix) or None
    return Heads(frozenset(names), default if default in names else None)
