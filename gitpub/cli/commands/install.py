"""`git blogpub install` / `uninstall`: gitpub's git hooks in the repository's hooks folder."""

from __future__ import annotations

from pathlib import Path

from gitpub import config, trust
from gitpub.cli.commands.output import say
from gitpub.git.repo import Repo
from gitpub.sync.hooks import setup


def install(path: Path) -> None:
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    for line in setup.install(repo, cfg.publish.branch):
        say(line)
    here = trust.standing(cfg, repo.common_dir)
    if not here.ok:
        # Installing never allows anything: the person reads the commands first.
        count = len(here.current.commands)
        say(
            f"next: {config.CONFIG_NAME} names {count} external command(s) this node has not "
            "allowed; read them and allow them with `git blogpub trust` (until then, jobs that "
            "need them wait in REVIEW)"
        )


def uninstall(path: Path) -> None:
    repo = Repo.discover(path)
    for line in setup.uninstall(repo):
        say(line)
