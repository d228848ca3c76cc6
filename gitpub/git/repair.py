"""Repairs for what a killed process or a person's `git gc --prune=now` can leave in the
repository: half-made worktrees, refs at objects that are gone, lock files nobody holds.

Only gitpub's own things are repaired (its worktrees under the state dir, `refs/blog-jobs/*`
and the `blogpub/job/*` branches, the lock files of refs it alone writes); a person's are
reported by `doctor` with the command that fixes them. A job whose commit was lost this way
is made again from its verified artifacts by the relay, as when a person deletes its ref."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from gitpub.git import worktrees
from gitpub.git.process import run_git
from gitpub.git.repo import Repo

JOB_REFS = ("refs/blog-jobs/", "refs/heads/blogpub/job/")

LOCK_GRACE = 2.0
"""Seconds a lock file must have existed before it counts as stale. A git process that
holds one (a person's fetch, or the git child of a worker just killed) is done long before."""


@dataclass
class Repaired:
    worktrees: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    locks: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.worktrees or self.refs or self.locks)

    def summary(self) -> dict[str, list[str]]:
        return {k: v for k, v in vars(self).items() if v}


def clear_stale(path: Path, grace: float = LOCK_GRACE) -> bool:
    """Remove the lock file at path if it is (still) there after `grace` seconds of age."""
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return False
    if age < grace:
        time.sleep(grace - age)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def clear_private_locks(repo: Repo, job_id: str) -> list[str]:
    """Lock files on the job's own refs; only the job's lease holder, under the repo lock,
    ever writes those refs, so one still there is a dead writer's."""
    gone = []
    for prefix in JOB_REFS:
        lock = repo.common_dir / f"{prefix}{job_id}.lock"
        if lock.exists() and clear_stale(lock, grace=0.5):
            gone.append(str(lock.relative_to(repo.common_dir)))
    return gone


def shared_locks(repo: Repo, tracking_ref: str) -> list[Path]:
    """Lock files a fetch of the published branch needs free."""
    d = repo.common_dir
    return [d / f"{tracking_ref}.lock", d / "packed-refs.lock", d / "shallow.lock"]


def broken_refs(repo: Repo, prefixes: tuple[str, ...] = JOB_REFS) -> list[tuple[str, str]]:
    """(ref, oid) of refs under prefixes whose commit or tree is gone: `git fetch` checks
    connectivity against every ref and fails on such a one."""
    out = run_git(
        ["for-each-ref", "--format=%(objectname) %(refname)", *[p.rstrip("/") for p in prefixes]],
        repo.root,
        check=False,
    ).stdout.decode("utf-8", "replace")
    refs = [tuple(line.split(" ", 1)) for line in out.splitlines() if " " in line]
    if not refs:
        return []
    queries = "".join(f"{oid}\n{oid}^{{tree}}\n" for oid, _ in refs)
    proc = run_git(
        ["cat-file", "--batch-check"],
        repo.root,
        check=False,
        input=queries.encode(),
        env={"GIT_NO_LAZY_FETCH": "1"},
    )
    missing = {
        line.split(" ", 1)[0].split("^", 1)[0]
        for line in proc.stdout.decode("utf-8", "replace").splitlines()
        if line.endswith(" missing")
    }
    return [(ref, oid) for oid, ref in refs if oid in missing]


def repair(repo: Repo, tracking_ref: str | None = None) -> Repaired:
    """Remove gitpub's half-made worktrees, its refs at missing objects and, when a fetch is
    about to be retried, stale locks on the refs it needs. Called under the repo lock."""
    done = Repaired()
    for half in worktrees.half_made(repo):
        if half.ours:
            worktrees.drop_admin(half.admin)
            done.worktrees.append(half.admin.name)
    for ref, _ in broken_refs(repo):
        # update-ref -d needs no object; the ref file is removed whatever it names.
        proc = run_git(["update-ref", "-d", ref], repo.root, check=False)
        if proc.returncode != 0:
            (repo.common_dir / ref).unlink(missing_ok=True)
        done.refs.append(ref)
    if tracking_ref:
        for lock in shared_locks(repo, tracking_ref):
            if lock.exists() and clear_stale(lock):
                done.locks.append(lock.name)
    return done


def wedged(stderr: str) -> bool:
    """A git failure that repository state, not the network, explains."""
    signs = (
        "bad object",
        "did not send all necessary objects",
        "missing object",
        "unable to read",
        ".lock': File exists",
        "cannot lock ref",
        "Unable to create",
    )
    return any(s in stderr for s in signs)
