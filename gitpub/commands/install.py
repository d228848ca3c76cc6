"""`git blogpub install` / `uninstall`: gitpub's git hooks in the repository's hooks folder."""

from __future__ import annotations

from pathlib import Path

from gitpub import config
from gitpub.commands.output import say
from gitpub.gitrepo import Repo
from gitpub.hooks import setup


def install(path: Path) -> None:
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    for line in setup.install(repo, cfg.publish.branch):
        say(line)


def uninstall(path: Path) -> None:
    repo = Repo.discover(path)
    for line in setup.uninstall(repo):
        say(line)
