"""gc: remove what finished jobs left behind, never anything an unfinished job needs.

Finished means PUBLISHED or SKIPPED: the transition table has no way out of either, for the
worker or for an operator. REVIEW, CONFLICT and FAILED are terminal only until a person acts —
`resolve --continue` delivers the job branch as the person fixed it in the job worktree,
`retry` starts over, and a FAILED job is still probed with its commit — so gc keeps their
worktree, branch and job ref, exactly like those of a job in flight.

- the worktree and the `blogpub/job/<id>` branch of a finished job: removed at once (the
  commit stays reachable from the job ref, and a published one from the remote branch);
- `refs/blog-jobs/<id>` of a finished job: removed once the job finished more than
  `gc.keep_days` ago; a job ref whose job is not in the database at all: once its commit is
  that old;
- a job worktree or branch whose job is not in the database: removed (no job can use it);
- a job folder (`jobs/<id>/`) with no job row: what a submit that died between writing the
  source and inserting the row leaves; removed once older than an hour, so a submit in
  progress keeps its file.
Job folders of existing jobs are their durable record and are left alone."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gitpub.context import Context
from gitpub.core.states import State
from gitpub.git import trailers, worktrees
from gitpub.git.process import git_out
from gitpub.git.repo import Repo
from gitpub.prepare.jobtree import branch_name
from gitpub.store import jobs, reads
from gitpub.store.db import parse_time

FINISHED = frozenset({State.PUBLISHED, State.SKIPPED})
"""States nothing ever leaves: what a job in them left behind is needed by no one."""

ORPHAN_FOLDER_GRACE = 3600.0
"""Seconds a job folder without a row is left alone: a submit writes the folder first."""

BRANCH_PREFIX = "refs/heads/blogpub/job/"
_JOB_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
DAY = 86400.0


def is_job_id(name: str) -> bool:
    """A job id (uuid4 text); the state dir's other worktrees (external_sync's) are not jobs."""
    return bool(_JOB_ID.match(name))


@dataclass
class Inventory:
    """What jobs left in the repository and the state dir, by job id."""

    worktree_dirs: set[str] = field(default_factory=set)  # worktrees/<id> on disk
    registered: dict[str, bool] = field(default_factory=dict)  # git knows it; True: dir exists
    branches: set[str] = field(default_factory=set)  # blogpub/job/<id>
    refs: dict[str, str] = field(default_factory=dict)  # refs/blog-jobs/<id> → commit
    folders: set[str] = field(default_factory=set)  # jobs/<id>

    def worktree_ids(self) -> set[str]:
        return self.worktree_dirs | set(self.registered) | self.branches


def inventory(repo: Repo, state_dir: Path) -> Inventory:
    inv = Inventory()
    wt_root = state_dir / "worktrees"
    if wt_root.is_dir():
        inv.worktree_dirs = {p.name for p in wt_root.iterdir() if is_job_id(p.name)}
    real_root = wt_root.resolve()
    for block in git_out(["worktree", "list", "--porcelain"], repo.root).split("\n\n"):
        first = block.splitlines()[0] if block.strip() else ""
        if not first.startswith("worktree "):
            continue
        path = Path(first[len("worktree ") :])
        if path.parent.resolve() == real_root and is_job_id(path.name):
            inv.registered[path.name] = path.is_dir()
    refs = git_out(
        [
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            trailers.JOB_REF_PREFIX,
            BRANCH_PREFIX,
        ],
        repo.root,
    )
    for line in refs.splitlines():
        name, _, oid = line.partition(" ")
        if name.startswith(trailers.JOB_REF_PREFIX):
            job_id = name[len(trailers.JOB_REF_PREFIX) :]
            if is_job_id(job_id):
                inv.refs[job_id] = oid
        elif is_job_id(name[len(BRANCH_PREFIX) :]):
            inv.branches.add(name[len(BRANCH_PREFIX) :])
    folders = state_dir / "jobs"
    if folders.is_dir():
        inv.folders = {p.name for p in folders.iterdir() if is_job_id(p.name)}
    return inv


@dataclass(frozen=True)
class JobInfo:
    state: State
    updated_at: str


@dataclass
class Plan:
    """What gc removes, and why; `kept` names what it leaves for unfinished jobs."""

    worktrees: dict[str, str] = field(default_factory=dict)  # job id → why
    refs: dict[str, str] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)
    kept: dict[str, State] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.worktrees or self.refs or self.folders)


def plan(
    repo: Repo,
    state_dir: Path,
    inv: Inventory,
    known: Mapping[str, JobInfo],
    keep_days: float,
    now: float,
) -> Plan:
    """Decide from an inventory and the job rows read AFTER it (a worktree or ref is only
    ever made for a job whose row is already committed, so none listed can be too new)."""
    out = Plan()
    cutoff = now - keep_days * DAY
    for job_id in sorted(inv.worktree_ids()):
        info = known.get(job_id)
        if info is None:
            out.worktrees[job_id] = "no such job"
        elif info.state in FINISHED:
            out.worktrees[job_id] = f"job {info.state.value}"
        else:
            out.kept[job_id] = info.state
    for job_id, oid in sorted(inv.refs.items()):
        info = known.get(job_id)
        if info is None:
            when = _commit_time(repo, oid)
            if when is not None and when < cutoff:
                out.refs[job_id] = f"no such job, commit {_days(now - when)} old"
        elif info.state in FINISHED:
            if parse_time(info.updated_at) < cutoff:
                age = _days(now - parse_time(info.updated_at))
                out.refs[job_id] = f"job {info.state.value} {age} ago"
        else:
            out.kept[job_id] = info.state
    for job_id in sorted(inv.folders):
        folder = state_dir / "jobs" / job_id
        if job_id not in known and _newest_mtime(folder) < now - ORPHAN_FOLDER_GRACE:
            out.folders.append(job_id)
    return out


def _commit_time(repo: Repo, oid: str) -> float | None:
    try:
        return float(repo.commit(oid).commit_time)
    except (KeyError, ValueError):
        return None


def _newest_mtime(folder: Path) -> float:
    newest = folder.stat().st_mtime
    for path in folder.rglob("*"):
        try:
            newest = max(newest, path.lstat().st_mtime)
        except FileNotFoundError:
            continue
    return newest


def _days(seconds: float) -> str:
    days = seconds / DAY
    return f"{days:.1f} days" if days < 10 else f"{days:.0f} days"


def known_jobs(ctx: Context) -> dict[str, JobInfo]:
    return {
        job_id: JobInfo(state, updated)
        for job_id, (state, updated) in reads.states_and_times(ctx.store).items()
    }


def collect(ctx: Context, now: float | None = None) -> tuple[Plan, list[str]]:
    """Remove what the plan names; returns the plan and one line per thing removed.

    Everything happens under the repo lock, the one that every worktree, branch and job ref
    is made under, so nothing can appear between the inventory and the removal."""
    said: list[str] = []
    repo = ctx.repo
    with ctx.locks.hold("repo"):
        inv = inventory(repo, ctx.state_dir)
        p = plan(
            repo,
            ctx.state_dir,
            inv,
            known_jobs(ctx),
            ctx.config.gc.keep_days,
            time.time() if now is None else now,
        )
        for job_id, why in p.worktrees.items():
            path = ctx.worktree_dir(job_id)
            worktrees.remove(repo, path, branch_name(job_id))
            if path.exists():  # a folder git did not know as a worktree
                shutil.rmtree(path)
            said.append(f"removed worktree and branch of job {job_id} ({why})")
        for job_id, why in p.refs.items():
            ref = trailers.job_ref(job_id)
            repo.delete_ref(ref, f"gitpub: gc ({why})")
            said.append(f"removed {ref} ({why})")
    for job_id in p.folders:
        # A row can still arrive for a folder this old only if its submit hung for an hour;
        # check again right before removing.
        if jobs.get(ctx.store, job_id) is None:
            shutil.rmtree(ctx.job_dir(job_id), ignore_errors=True)
            said.append(f"removed job folder {job_id} (no such job)")
    return p, said
