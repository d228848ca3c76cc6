"""doctor's checks of the setting: git, the repository, the config, the hooks, the state dir."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from gitpub import config as config_mod
from gitpub.config import Config
from gitpub.core.errors import ConfigError
from gitpub.git.process import git_env
from gitpub.git.repo import Repo, config_value
from gitpub.ops.doctor.report import OK, PROBLEM, WARNING, Report, some
from gitpub.store.db import database_file
from gitpub.sync import hooks
from gitpub.sync.hooks import setup, tracked

MIN_GIT = (2, 28)
"""The reference-transaction hook, which guards the job refs, needs git 2.28."""


def check_version(report: Report) -> None:
    """Which gitpub this is, first: a report pasted into an issue says what ran."""
    import platform

    from gitpub.core.version import VERSION

    report.add("version", OK, f"git blogpub {VERSION} (Python {platform.python_version()})")


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
    if cfg.ignored_store:
        # Whoever can push writes that file: it must never choose where a node's jobs live.
        report.add(
            "config",
            WARNING,
            f"{config_mod.CONFIG_NAME} has a [store] table, which is ignored: a node's store is "
            "GITPUB_STORE or [store] url in its user config",
            f"remove [store] from {config_mod.CONFIG_NAME}; set it in "
            f"{config_mod.user_config_path()} on each node that shares a store",
        )
    if cfg.fonts is not None:  # the font files themselves: doctor/fonts.py
        check_font_engine(report, cfg.fonts.engine)
    return cfg


def check_font_engine(report: Report, preference: str) -> None:
    """Which subsetter the font gate uses here: HarfBuzz is the fast one, fontTools the
    fallback where no uharfbuzz wheel exists."""
    from importlib import metadata

    from gitpub.fonts import engine

    hb = engine.harfbuzz_available()
    version = metadata.version("uharfbuzz") if hb else None
    if preference == "fonttools":
        report.add("fonts", OK, "font engine: fontTools (fonts.engine = 'fonttools')")
    elif hb:
        report.add("fonts", OK, f"font engine: HarfBuzz (uharfbuzz {version})")
    elif preference == "harfbuzz":
        report.add(
            "fonts",
            PROBLEM,
            "fonts.engine = 'harfbuzz', but uharfbuzz is not installed",
            "pip install 'git-blogpub[fast]' (builds uharfbuzz where no wheel exists)",
        )
    else:
        report.add(
            "fonts",
            WARNING,
            "font engine: fontTools, the slower fallback (uharfbuzz is not installed)",
            "pip install 'git-blogpub[fast]' (builds uharfbuzz where no wheel exists)",
        )


def check_hooks(report: Report, repo: Repo, cfg: Config | None) -> None:
    """Installed and current, recognised the way `install` recognises its own hooks: the id
    line says whose a hook is, wherever it runs from (pre-commit's `.legacy` included); the
    exact bytes `install` would write say it is current. Another tool's hook in gitpub's place
    is named."""
    folder = hooks.hooks_dir(repo)
    if tracked.is_tracked(repo, folder):
        installed = _check_tracked(report, repo, folder)
    else:
        installed = sum(_check_slot(report, repo, hooks.Slot(folder, n)) for n in hooks.HOOK_NAMES)
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
                FIX,
            )
    if installed == len(hooks.HOOK_NAMES) and not any(
        f.check == "hooks" and f.status == PROBLEM for f in report.findings
    ):
        report.add("hooks", OK, f"{', '.join(hooks.HOOK_NAMES)} installed and current in {folder}")


FIX = "git blogpub install"


def _check_slot(report: Report, repo: Repo, slot: hooks.Slot) -> bool:
    """One hook in an ordinary hooks folder; True when gitpub's runs and is current."""
    name = slot.name
    ours = slot.ours()
    if ours is None:
        _not_ours(report, repo, slot)
        return False
    if not _current(report, ours, name):
        return False
    parked = slot.park_of(ours)
    if hooks.exists(parked) and _lfs_gone(repo, parked):
        report.add(
            "hooks",
            WARNING,
            f"{parked} is git-lfs's hook, which gitpub's runs first, but git-lfs is no longer "
            f"set up in this repository (after `git lfs uninstall`)",
            f"rm {parked}",
        )
    if ours != slot.hook:
        tool = hooks.identify(slot.hook)
        who = tool.name if tool is not None else "another tool"
        if not os.access(slot.hook, os.X_OK):
            report.add("hooks", PROBLEM, f"{slot.hook} ({who}'s) is not executable: git skips it")
            return False
        report.add("hooks", OK, f"{name}: gitpub's hook runs as {ours.name}, from {who}'s hook")
    return True


def _lfs_gone(repo: Repo, parked: Path) -> bool:
    """`git lfs uninstall` removes the hooks it knows by name; the one gitpub parked stays."""
    tool = hooks.identify(parked)
    return (
        tool is not None and tool.name == "git-lfs" and not config_value(repo, "filter.lfs.process")
    )


def _current(report: Report, path: Path, name: str) -> bool:
    if path.read_bytes() != hooks.render(name, hooks.default_marker()):
        report.add(
            "hooks",
            PROBLEM,
            f"{path} is from another gitpub version or installation",
            f"{FIX} (it replaces the hook with this gitpub's)",
        )
        return False
    if not os.access(path, os.X_OK):
        report.add("hooks", PROBLEM, f"{path} is not executable: git skips it", FIX)
        return False
    return True


def _not_ours(report: Report, repo: Repo, slot: hooks.Slot) -> None:
    name, hook = slot.name, slot.hook
    if not os.path.lexists(hook):
        report.add("hooks", PROBLEM, f"{name} is not installed in {slot.folder}", FIX)
        return
    tool = hooks.identify(hook)
    if tool is not None and tool.runs_legacy:
        keeps = f"it joins {tool.name}'s chain as {name}{hooks.LEGACY}, which {tool.name} runs"
    else:
        keeps = f"it keeps that hook running first, as {name}{hooks.PARK}"
    whose = f"{tool.name}'s hook" if tool is not None else "not gitpub's hook"
    # gitpub was here: its parked hook is left, or `install` wrote into this folder last.
    replaced = os.path.lexists(slot.parked) or setup.installed_in(repo) == slot.folder
    if replaced:
        report.add("hooks", PROBLEM, f"{hook} is {whose}: it replaced gitpub's", f"{FIX} ({keeps})")
    else:
        report.add("hooks", PROBLEM, f"{hook} is {whose}", f"{FIX} ({keeps})")


def _check_tracked(report: Report, repo: Repo, folder: Path) -> int:
    """A tracked hooks folder: gitpub's hooks in the state dir, and a line in each tracked
    hook that runs them."""
    private = tracked.private_dir(repo)
    installed = 0
    for name in hooks.HOOK_NAMES:
        path = private / name
        if not os.path.lexists(path):
            report.add("hooks", PROBLEM, f"{name} is not installed in {private}", FIX)
            continue
        if not _current(report, path, name):
            continue
        script = tracked.script_for(folder, name)
        if tracked.has_line(script, name):
            installed += 1
            continue
        where = tracked.shown(repo, script)
        report.add(
            "hooks",
            PROBLEM,
            f"{where} does not run gitpub's {name} hook ({tracked.shown(repo, folder)} is "
            f"the repository's, gitpub writes nothing there)",
            f"add this line to {where}: {tracked.line(name)}",
        )
    return installed


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
            database_file(state),
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


def check_ruleset(report: Report, cfg: Config | None) -> None:
    """Which secret ruleset guards submit, the gates and the sanitizer, and that it loads."""
    from gitpub import scan
    from gitpub.scan.rules import RuleError

    try:
        info = scan.ruleset()
        scan.scan("probe: ghp_" + "0" * 36)  # compiles the rules a probe touches
    except (RuleError, OSError, ValueError) as exc:
        report.add("secrets", PROBLEM, f"secret ruleset does not load: {exc}", "reinstall gitpub")
        return
    allowed = len(cfg.scan.allow) if cfg is not None else 0
    report.add(
        "secrets",
        OK,
        f"ruleset {info['name']} {info['version']} ({info['rules']} rules); "
        f"{allowed} fingerprint(s) allowed in [scan] allow",
    )
