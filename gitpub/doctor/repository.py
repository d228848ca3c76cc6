"""doctor's checks of the setting: git, the repository, the config, the hooks, the state dir."""

from __future__ import annotations

import os
import re
import subprocess

from gitpub import config as config_mod
from gitpub import hooks
from gitpub.config import Config
from gitpub.doctor.report import OK, PROBLEM, WARNING, Report, some
from gitpub.errors import ConfigError
from gitpub.gitrepo import Repo, git_env

MIN_GIT = (2, 28)
"""The reference-transaction hook, which guards the job refs, needs git 2.28."""


def check_git(report: Report) -> None:
    try:
        proc = subprocess.run(["git", "--version"], capture_output=True, env=git_env(), check=False)
    except OSError:
        report.add("git", PROBLEM, "git is not on PATH", "install git 2.28 or newer")
        return
    text = proc.stdout.decode("utf-8", "replace").strip()
    found = re.search(r"(\d+)\.(\d+)", text)
    version = (int(found[1]), int(found[2])) if found else (0, 0)
    if version < MIN_GIT:
        need = ".".join(map(str, MIN_GIT))
        report.add(
            "git", PROBLEM, f"{text or 'git'}: older than {need}", f"upgrade git to {need} or newer"
        )
    else:
        report.add("git", OK, text)


def check_config(report: Report, repo: Repo) -> Config | None:
    try:
        cfg = config_mod.load(repo.root)
    except ConfigError as exc:
        hint = f"fix the key it names ({config_mod.CONFIG_NAME} or {config_mod.user_config_path()})"
        report.add("config", PROBLEM, exc.message, hint)
        return None
    pub = cfg.publish
    report.add(
        "config", OK, f"publishing {pub.branch!r} to {pub.remote!r} from {', '.join(pub.content)}"
    )
    if not repo.has_remote(pub.remote):
        report.add(
            "config",
            PROBLEM,
            f"no remote named {pub.remote!r}",
            f"git remote add {pub.remote} URL, or set publish.remote in {config_mod.CONFIG_NAME}",
        )
    elif repo.resolve(repo.tracking_ref(pub.remote, pub.branch)) is None:
        report.add(
            "config",
            WARNING,
            f"{repo.tracking_ref(pub.remote, pub.branch)} does not exist yet",
            f"git fetch {pub.remote} (and check that branch {pub.branch!r} exists there)",
        )
    return cfg


def check_hooks(report: Report, repo: Repo, cfg: Config | None) -> None:
    """Installed and current, recognised the way `install` recognises its own hooks: the id
    line says whose a hook is; the exact bytes `install` would write say it is current."""
    folder = hooks.hooks_dir(repo)
    fix = "git blogpub install"
    installed = 0
    for name in hooks.HOOK_NAMES:
        hook = folder / name
        if not os.path.lexists(hook):
            report.add("hooks", PROBLEM, f"{name} is not installed in {folder}", fix)
        elif not hooks.is_ours(hook):
            report.add(
                "hooks",
                PROBLEM,
                f"{hook} is not gitpub's hook",
                f"{fix} (it keeps that hook running first, as {name}{hooks.LEGACY})",
            )
        elif hook.read_bytes() != hooks.render(name, hooks.default_marker()):
            report.add(
                "hooks",
                PROBLEM,
                f"{hook} is from another gitpub version or installation",
                f"{fix} (it replaces the hook with this gitpub's)",
            )
        elif not os.access(hook, os.X_OK):
            report.add("hooks", PROBLEM, f"{hook} is not executable: git skips it", fix)
        else:
            installed += 1
    if installed and cfg is not None:
        branch_file = repo.state_dir / hooks.BRANCH_FILE
        try:
            watched = branch_file.read_text("utf-8").strip()
        except OSError:
            watched = None
        if watched != cfg.publish.branch:
            what = f"watch branch {watched!r}" if watched else f"have no {branch_file}"
            report.add(
                "hooks",
                PROBLEM,
                f"the hooks {what}, the config publishes {cfg.publish.branch!r}",
                fix,
            )
    if installed == len(hooks.HOOK_NAMES) and not any(
        f.check == "hooks" and f.status == PROBLEM for f in report.findings
    ):
        report.add("hooks", OK, f"{', '.join(hooks.HOOK_NAMES)} installed and current in {folder}")


def check_state_dir(report: Report, repo: Repo) -> None:
    state = repo.state_dir
    if not state.exists():
        where = repo.common_dir
        if os.access(where, os.W_OK | os.X_OK):
            report.add("state dir", OK, f"{state} does not exist yet (the first submit makes it)")
        else:
            report.add(
                "state dir",
                PROBLEM,
                f"{where} is not writable: gitpub cannot make {state}",
                f"fix the owner or permissions of {where}",
            )
        return
    bad = [
        str(p)
        for p in (
            state,
            state / "jobs",
            state / "locks",
            state / "worktrees",
            state / "state.sqlite3",
        )
        if p.exists() and not os.access(p, os.W_OK | (os.X_OK if p.is_dir() else 0))
    ]
    if bad:
        report.add(
            "state dir",
            PROBLEM,
            f"not writable: {some(bad)}",
            "give the user that runs gitpub write access (chown/chmod)",
        )
    else:
        report.add("state dir", OK, f"{state} is writable")
