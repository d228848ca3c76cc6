"""doctor's checks for what makes git itself fail or a job go round in circles: half-made
worktrees, refs at missing objects (every `git fetch` fails on either), and jobs in flight
that keep failing the same way."""

from __future__ import annotations

import json

from gitpub.config import Config
from gitpub.core import clock
from gitpub.core.states import TERMINAL, State
from gitpub.git import repair, worktrees
from gitpub.git.repo import Repo
from gitpub.ops.doctor.report import OK, PROBLEM, Report, some
from gitpub.store import reads
from gitpub.store.db import Connection, Row, parse_time

_RUN = "git blogpub run --until-idle"


def check_worktrees(report: Report, repo: Repo) -> None:
    found = worktrees.half_made(repo)
    for half in found:
        where = f"{half.worktree}" if half.worktree else half.admin.name
        if half.ours:
            report.add(
                "wedges",
                PROBLEM,
                f"half-made job worktree {where}: {half.why}; every `git fetch` fails on it",
                f"{_RUN} (removes gitpub's half-made worktrees before it fetches)",
            )
        else:
            report.add(
                "wedges",
                PROBLEM,
                f"half-made worktree {where}: {half.why}; every `git fetch` fails on it",
                f"rm -rf {half.admin} (its registration; then `git worktree prune`)",
            )
    if not found:
        report.add("wedges", OK, "no half-made worktree")


def check_refs(report: Report, repo: Repo) -> None:
    broken = repair.broken_refs(repo, ("refs/",))
    ours = [ref for ref, _ in broken if ref.startswith(repair.JOB_REFS)]
    theirs = [ref for ref, _ in broken if not ref.startswith(repair.JOB_REFS)]
    if ours:
        report.add(
            "wedges",
            PROBLEM,
            f"job refs at missing objects (a `git gc --prune=now` during delivery?): {some(ours)}",
            f"{_RUN} (drops them; each job commit is made again from its verified artifacts)",
        )
    if theirs:
        report.add(
            "wedges",
            PROBLEM,
            f"refs at missing objects; `git fetch` fails on them: {some(theirs)}",
            f"git update-ref -d {theirs[0]} (after checking what it was for)",
        )
    if not broken:
        report.add("wedges", OK, "every ref names an object the repository has")


def check_stuck_jobs(report: Report, db: Connection, cfg: Config, known: dict[str, Row]) -> None:
    """Jobs in flight, untouched for longer than a lease, whose last passes all failed."""
    lease = cfg.retry.lease_seconds
    stuck = 0
    for job_id, row in known.items():
        state = State(row["state"])
        if state in TERMINAL or state is State.RETRY_WAIT:
            continue
        if clock.time() - parse_time(row["updated_at"]) < lease:
            continue
        errors, last = _errors_since_reset(db, job_id)
        if errors < 2:
            continue
        stuck += 1
        report.add(
            "jobs",
            PROBLEM,
            f"job {job_id} in flight ({state.value}) beyond its lease, {errors} worker errors; "
            f"last: {last}",
            f"git blogpub show {job_id} (git's words); fix the cause, then {_RUN} — it ends in "
            f"REVIEW after retry.max_attempts ({row['max_attempts']}) failures, or "
            f"`git blogpub resolve {job_id} --abandon` once it has",
        )
    if not stuck:
        report.add("jobs", OK, "no job in flight going round in circles")


def _errors_since_reset(db: Connection, job_id: str) -> tuple[int, str]:
    count, last = 0, ""
    for step, detail in reads.steps_newest_first(db, job_id):
        if str(step).startswith("operator:"):
            break
        if step == "worker:error":
            count += 1
            if not last:
                text = str(json.loads(detail or "{}").get("error", ""))
                last = text.strip().splitlines()[0] if text.strip() else "?"
    return count, last
