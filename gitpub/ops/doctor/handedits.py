"""doctor's check of hand edits held back because they hold a secret (see gitpub.sync.held)."""

from __future__ import annotations

from gitpub.config import Config
from gitpub.core.errors import GitCommandError
from gitpub.git.repo import Repo
from gitpub.ops.doctor.report import OK, PROBLEM, WARNING, Report
from gitpub.sync import editgit, held


def check_held_edits(report: Report, repo: Repo, cfg: Config) -> None:
    """Scans the checkout's changed content files now, as the next pass would."""
    if cfg.sync.hand_edits != "all":
        return  # uncommitted edits are never committed for the person: nothing to hold
    try:
        changes = editgit.changes_in(cfg, repo.root)
    except GitCommandError as exc:
        report.add("hand edits", WARNING, f"cannot list the checkout's changes: {exc.message}")
        return
    _, secret = held.split(repo.root, changes, cfg.scan.allow)
    if not secret:
        report.add("hand edits", OK, "no hand edit holds a secret")
        return
    for path, found in sorted(secret.items()):
        report.add(
            "hand edits",
            PROBLEM,
            "held back, not delivered: " + held.describe(path, found),
            held.FIX,
        )
