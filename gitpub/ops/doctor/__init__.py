"""doctor: every check an operator would make by hand, each finding with the command that
fixes it. It reads and probes; it creates nothing (no state dir, no database, no lock file).

A "problem" is something wrong that stops or endangers publication (exit 1); a "warning" is
worth knowing but harmless (what gc would tidy, a holder doctor cannot see)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gitpub import trust
from gitpub.config import Config
from gitpub.core.errors import NotARepository
from gitpub.git.repo import Repo
from gitpub.ops.doctor.allowance import check_trust
from gitpub.ops.doctor.fonts import check_fonts
from gitpub.ops.doctor.handedits import check_held_edits
from gitpub.ops.doctor.publishing import check_publishing
from gitpub.ops.doctor.report import OK, PROBLEM, WARNING, Finding, ProblemsFound, Report
from gitpub.ops.doctor.repository import (
    check_config,
    check_git,
    check_hooks,
    check_ruleset,
    check_state_dir,
    check_version,
)
from gitpub.ops.doctor.state import (
    check_leases,
    check_leftovers,
    check_locks,
    check_withdrawn,
    database,
    shared_database,
)
from gitpub.ops.doctor.validation import check_validation
from gitpub.ops.doctor.wedges import check_refs, check_stuck_jobs, check_worktrees
from gitpub.store import reads
from gitpub.store.db import database_file

__all__ = ["Finding", "ProblemsFound", "Report", "diagnose", "render", "verdict"]


def diagnose(path: Path) -> Report:
    report = Report()
    check_version(report)
    check_git(report)
    try:
        repo = Repo.discover(path)
    except NotARepository as exc:
        report.add("repository", PROBLEM, exc.message, "run it inside the blog's clone, or -C PATH")
        return report
    report.add("repository", OK, f"{repo.root} (git dir {repo.common_dir})")
    cfg = check_config(report, repo)
    if cfg is not None:
        check_publishing(report, repo, cfg)
        check_fonts(report, repo, cfg)
    check_ruleset(report, cfg)
    if cfg is not None:
        check_validation(report, cfg)
        check_held_edits(report, repo, cfg)
    check_hooks(report, repo, cfg)
    check_state_dir(report, repo)
    check_worktrees(report, repo)
    check_refs(report, repo)
    opened = (
        shared_database(report, repo, cfg)
        if cfg is not None and cfg.store_url is not None
        else database(report, repo)
    )
    with opened as db:
        if db is not None:
            known = reads.all_rows(db)
            check_locks(report, repo, known)
            check_leases(report, known)
            check_withdrawn(report, known)
            check_stuck_jobs(report, db, cfg or Config(root=repo.root), known)
        elif database_file(repo.state_dir).exists() or _database_problem(report):
            if cfg is not None:
                check_trust(report, repo, cfg, 0)
            # An unusable or lost database: nothing below can be judged without it (every
            # job folder, worktree and ref would look orphaned).
            return report
        else:
            known = {}  # no database at all: job refs and worktrees left here belong to no job
        if cfg is not None:
            held = [
                j
                for j, r in known.items()
                if r["state"] == "REVIEW" and r["failure_code"] == trust.FAILURE_CODE
            ]
            check_trust(report, repo, cfg, len(held))
        check_leftovers(report, repo, cfg or Config(root=repo.root), known)
    return report


def _database_problem(report: Report) -> bool:
    return any(f.check == "database" and f.status == PROBLEM for f in report.findings)


def render(report: Report, say: Callable[[str], None]) -> None:
    """Human output: one line per finding, its fix indented below it."""
    labels = {OK: "ok", WARNING: "warning", PROBLEM: "PROBLEM"}
    for f in report.findings:
        say(f"{labels[f.status]:<8} {f.check:<10} {f.message}")
        if f.hint and f.status != OK:
            say(f"{'':<19} fix: {f.hint}")


def verdict(report: Report) -> None:
    """Raise ProblemsFound (exit 1) when the report holds a problem."""
    problems = report.count(PROBLEM)
    if problems:
        raise ProblemsFound(f"doctor: {problems} problem(s) found")
