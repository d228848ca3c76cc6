"""doctor's checks of where jobs publish, each asked the way `run` asks it (prepare's
preflight): the remote and branch, the content folders, the font outputs' places, and a
`.blogpub.toml` that `.gitignore` would keep out of every commit."""

from __future__ import annotations

from gitpub.config import CONFIG_NAME, Config
from gitpub.git.process import run_git
from gitpub.git.repo import Repo
from gitpub.ops.doctor.report import PROBLEM, Report
from gitpub.prepare import preflight


def check_publishing(report: Report, repo: Repo, cfg: Config) -> None:
    pub = cfg.publish
    problem = preflight.branch_problem(repo, pub)
    if problem is not None:
        report.add(
            "config", PROBLEM, f"{problem.what}: every job would stop in REVIEW", problem.fix
        )
    base = repo.resolve(repo.tracking_ref(pub.remote, pub.branch))
    for folder in pub.content:
        on_remote = base is not None and _is_folder(repo, base, folder)
        if not on_remote and not (repo.root / folder).is_dir():
            where = f"on {pub.remote}/{pub.branch} or " if base is not None else ""
            report.add(
                "config",
                PROBLEM,
                f"publish.content {folder!r} does not exist ({where}in this checkout)",
                f"set publish.content in {CONFIG_NAME} to the folder that holds the posts "
                "(`git blogpub init --force` finds it)",
            )
    for misplaced in preflight.placement_problems(repo, base, cfg):
        report.add("fonts", PROBLEM, misplaced.what, misplaced.fix)
    _config_ignored(report, repo)


def _is_folder(repo: Repo, commit: str, folder: str) -> bool:
    proc = run_git(["cat-file", "-t", f"{commit}:{folder}"], repo.root, check=False)
    return proc.stdout.strip() == b"tree"


def _config_ignored(report: Report, repo: Repo) -> None:
    """An untracked `.blogpub.toml` that the ignore rules leave out (a `.*` line): `git add`
    refuses it, so the nodes and workers that clone the blog never see it."""
    if not (repo.root / CONFIG_NAME).is_file():
        return
    proc = run_git(["check-ignore", "--verbose", CONFIG_NAME], repo.root, check=False)
    if proc.returncode != 0:
        return  # not ignored, or tracked (what is tracked is never ignored)
    source, _, rest = proc.stdout.decode("utf-8", "replace").partition("\t")[0].partition(":")
    line, _, pattern = rest.partition(":")
    report.add(
        "config",
        PROBLEM,
        f"{CONFIG_NAME} is ignored by `{source}:{line}` ({pattern!r}): `git add` leaves it "
        "out, so no other clone or worker would read it",
        f"add the line `!{CONFIG_NAME}` to .gitignore, then commit and push {CONFIG_NAME}",
    )
