"""`git blogpub trust`: allow, list or revoke the commands the repository's config names."""

from __future__ import annotations

import sys
from pathlib import Path

from gitpub import config, trust
from gitpub.cli.commands.output import say
from gitpub.core.errors import GitpubError
from gitpub.git.repo import Repo
from gitpub.trust import allowances


def main(path: Path, *, yes: bool) -> None:
    """Show the command set as a diff against the one allowed last, ask, then allow it."""
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    here = trust.standing(cfg, repo.common_dir)
    if here.problem:
        raise GitpubError(here.problem)
    if here.current.empty:
        say(f"{config.CONFIG_NAME} names no external commands: there is nothing to allow")
        return
    if here.ok:
        say(f"already allowed on node {cfg.node}:")
        lines = here.current.lines()
        for line in filter(_command, lines):
            say(f"  {line}")
        say(f"  and the code they can reach: {len(lines) - len(here.current.commands)} file(s)")
        return
    before = list(here.allowed.lines) if here.allowed else []
    say(f"{repo.root / config.CONFIG_NAME} would run on node {cfg.node}:")
    for line in _diff(before, here.current.lines()):
        say(line)
    if not yes:
        _ask(cfg.node)
    # What is recorded is exactly the set shown above: a config that changed meanwhile has
    # another hash and stays refused.
    allowed = allowances.record(repo.common_dir, here.current)
    say(f"allowed: {len(here.current.commands)} command(s), sha256 {allowed.sha256[:16]}")


def _diff(before: list[str], after: list[str]) -> list[str]:
    """Each command of the new set, marked +/- against the old one (all + the first time),
    then only the files that changed: a blog tracks hundreds of theme files, and the person
    deciding needs to see which of them a push rewrote, not the whole list again."""
    old, new = set(before), set(after)
    out = [f"  {_mark(line, old, new)} {line}" for line in sorted(old | new) if _command(line)]
    changed = sorted(
        (line for line in old ^ new if not _command(line)),
        # "- file x blob A" right above "+ file x blob B": a rewritten file reads as a pair.
        key=lambda line: (line.rsplit(" ", 2)[0], line in new),
    )
    out += [f"  {_mark(line, old, new)} {line}" for line in changed]
    same = sum(1 for line in new & old if not _command(line))
    if same:
        out.append(f"    ({same} file(s) the commands can reach are unchanged)")
    if before and old == new:
        # Same visible lines, different hash: the difference sits in a redacted part.
        out.append("  (changed where the display hides a secret)")
    return out


def _command(line: str) -> bool:
    return not line.startswith("file ")


def _mark(line: str, old: set[str], new: set[str]) -> str:
    return " " if line in old and line in new else ("+" if line in new else "-")


def _ask(node: str) -> None:
    if not sys.stdin.isatty():
        raise GitpubError(
            "trust: not asking without a terminal; review the commands above and run "
            "`git blogpub trust --yes` to allow them"
        )
    sys.stdout.write(f"Allow these commands to run on node {node}? [y/N] ")
    sys.stdout.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise GitpubError("trust: not allowed; nothing recorded")


def show(path: Path) -> None:
    """`trust --list`: what this node allows for this repository, and whether it is current."""
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    here = trust.standing(cfg, repo.common_dir)
    if here.problem:
        raise GitpubError(here.problem)
    if here.allowed is None:
        say(f"nothing allowed for {repo.common_dir} on node {cfg.node}")
    else:
        a = here.allowed
        say(f"allowed for {a.repository} on node {cfg.node} at {a.at} (sha256 {a.sha256[:16]}):")
        files = [line for line in a.lines if not _command(line)]
        for line in a.lines:
            if _command(line):
                say(f"  {line}")
        if files:
            say(f"  and the code they can reach: {len(files)} tracked file(s)")
    if here.current.empty:
        say(f"{config.CONFIG_NAME} names no external commands now")
    elif here.ok:
        say(f"{config.CONFIG_NAME} names exactly these commands now, and their code is unchanged")
    else:
        say("changed since the allowance (run `git blogpub trust` to allow it):")
        for line in _diff(list(here.allowed.lines) if here.allowed else [], here.current.lines()):
            if not line.startswith("    "):
                say(line)


def revoke(path: Path) -> None:
    repo = Repo.discover(path)
    gone = allowances.revoke(repo.common_dir)
    if gone is None:
        say(f"nothing was allowed for {repo.common_dir}")
        return
    say(
        f"revoked: the commands allowed at {gone.at} (sha256 {gone.sha256[:16]}) "
        f"no longer run for {gone.repository}"
    )
