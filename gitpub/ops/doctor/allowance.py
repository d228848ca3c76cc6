"""doctor's check of the node's allowance for the commands the shared config names."""

from __future__ import annotations

from gitpub import trust
from gitpub.config import CONFIG_NAME, Config
from gitpub.git.repo import Repo
from gitpub.ops.doctor.report import OK, PROBLEM, Report


def check_trust(report: Report, repo: Repo, cfg: Config, waiting: int) -> None:
    """`waiting`: jobs held in REVIEW because their commands were not allowed."""
    here = trust.standing(cfg, repo.common_dir)
    held = f"; {waiting} job(s) wait in REVIEW for it" if waiting else ""
    if here.problem:
        report.add("trust", PROBLEM, here.problem + held, "fix or remove that file, then trust")
    elif here.current.empty:
        report.add("trust", OK, f"{CONFIG_NAME} names no external commands")
    elif here.ok:
        count = len(here.current.commands)
        report.add("trust", OK, f"the {count} command(s) {CONFIG_NAME} names are allowed here")
    else:
        report.add(
            "trust",
            PROBLEM,
            trust.not_allowed_message(cfg.node) + held,
            "git blogpub trust (it shows the commands first; then "
            "`git blogpub retry JOB` for each job it held)",
        )
