"""The one rebase driver: git's own `git rebase`, step by step, each stop handed to a callback.

Every rebase gitpub runs goes through here — a job's commit replayed onto the remote tip, a
hand edit's commits, a person's `git blogpub rebase` — so what a stop is, when a settled step
is skipped rather than continued, and what is left behind when a stop is refused are answered
once. The callback (`Settle`) knows only which conflicts it can settle and how; it never runs
`git rebase` itself. git's rebase, not an in-memory merge (`objects.cherry_pick`), because the
callback needs a checkout: it rebuilds files from the step's merged tree."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from gitpub.core.errors import GitCommandError
from gitpub.git.process import git_out, run_git
from gitpub.git.repo import in_progress, unmerged_paths

Settle = Callable[[list[str]], Sequence[str]]
"""Called at each stop with its unmerged paths (none when a person resolved and staged them
before going on): settles what it can — the resolved files written and staged (`stage`) — and
returns the paths it leaves to a person. Nothing returned: the step goes on. Each stop it
settles must make progress (the driver sets no bound: a person's rebase may be long); a
callback that could loop counts its stops and refuses."""

_EDITOR = {"GIT_EDITOR": "true"}  # a continued step keeps its commit's message as it is


class Rebased(NamedTuple):
    conflict: list[str] | None  # the paths of the stop the callback refused, or None
    settled: list[str]  # the unmerged paths of the stops the callback settled
    onto: str | None  # the commit the rebase replayed onto, when it ever stopped


def run(
    cwd: Path,
    args: Sequence[str],
    settle: Settle,
    *,
    config: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    person: bool = False,
) -> Rebased:
    """`git rebase ARGS` in the checkout at `cwd`, each stop settled by `settle`.

    `config` goes before the subcommand (`-c commit.gpgSign=…`), `env` to every step (the
    identity of the commits it makes). A refused stop, a step git fails without a conflict,
    and a callback that raises leave the rebase aborted — the branch and HEAD as they were —
    unless the rebase is a `person`'s: then it stays stopped for them, as git leaves it."""
    _step(cwd, ["rebase", *args], config, env, person)
    return _drive(cwd, settle, config, env, person)


def resume(
    cwd: Path,
    settle: Settle,
    *,
    config: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    person: bool = False,
) -> Rebased:
    """The rebase already stopped in `cwd` goes on, from the stop it is at, as `run` would."""
    return _drive(cwd, settle, config, env, person)


def _drive(
    cwd: Path,
    settle: Settle,
    config: Sequence[str],
    env: Mapping[str, str] | None,
    person: bool,
) -> Rebased:
    settled: set[str] = set()
    base = onto(cwd)
    while in_progress(cwd, "rebase"):
        unmerged = unmerged_paths(cwd)
        try:
            left = list(settle(unmerged))
        except Exception:
            if not person:
                abort(cwd)
            raise
        if left:
            if not person:
                abort(cwd)
            return Rebased(left, sorted(settled), base)
        settled.update(unmerged)
        # A settled step that leaves nothing to replay (the rebuilt files are upstream's
        # own) is skipped: `--continue` would stop on an empty commit. Only when the whole
        # checkout is HEAD's, so skipping (a hard reset to HEAD) discards nothing.
        same = run_git(["diff", "--quiet", "HEAD"], cwd, check=False).returncode == 0
        _step(cwd, ["rebase", "--skip" if same else "--continue"], config, env, person)
    return Rebased(None, sorted(settled), base)


def _step(
    cwd: Path,
    args: list[str],
    config: Sequence[str],
    env: Mapping[str, str] | None,
    person: bool,
) -> None:
    """One `git rebase …`; a failure that is no conflict (nothing unmerged) is git's error."""
    proc = run_git([*config, *args], cwd, check=False, env={**_EDITOR, **(env or {})})
    if proc.returncode != 0 and not unmerged_paths(cwd):
        if not person:
            abort(cwd)
        stderr = proc.stderr.decode("utf-8", "replace")
        raise GitCommandError(["git", *args], proc.returncode, stderr)


def abort(cwd: Path) -> None:
    """Abort the rebase stopped in `cwd`, if any: the branch and HEAD go back to where it
    started (what a crash interrupted included)."""
    run_git(["rebase", "--abort"], cwd, check=False)


def onto(cwd: Path) -> str | None:
    """The commit the rebase stopped in `cwd` replays onto, or None when none is stopped."""
    names = ("rebase-merge/onto", "rebase-apply/onto")
    where = git_out(["rev-parse", *(a for n in names for a in ("--git-path", n))], cwd)
    for path in where.splitlines():
        if (cwd / path).is_file():
            return (cwd / path).read_text().strip()
    return None


def replayed(cwd: Path, base: str) -> bool:
    """Whether HEAD in `cwd` holds commits on top of `base` (a rebase that replayed nothing
    leaves HEAD at upstream's own commit, which is never amended)."""
    return git_out(["rev-list", "--count", f"{base}..HEAD"], cwd) not in ("", "0")


def stage(cwd: Path, paths: Sequence[str]) -> None:
    """`git add` these paths: a stop's resolution, or what an amend is to carry."""
    if paths:
        run_git(["add", "--", *paths], cwd)


def amend(cwd: Path, *, env: Mapping[str, str] | None = None, verify: bool = True) -> None:
    """HEAD's commit again, with what is staged and its message as it is (`verify`: with
    the repository's commit hooks, as in a person's own checkout)."""
    hooks = [] if verify else ["--no-verify"]
    run_git(["commit", "--amend", "--no-edit", "--quiet", *hooks], cwd, env=env)
