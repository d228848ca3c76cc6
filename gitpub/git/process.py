"""The git executable as gitpub runs it: one environment for every call (see `git_env`), a
failure raised with git's own words."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gitpub.core.errors import GitCommandError

if TYPE_CHECKING:
    import subprocess

WRITER_ENV = "GITPUB_WRITER"
"""Set on every git command gitpub runs: our hooks use it to tell our ref updates from others'."""

# Variables that pin git to one repository or index. A hook inherits them from the git that
# runs it; passed on to a git command aimed at another worktree they would redirect it.
_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
    "GIT_REFLOG_ACTION",
    "GIT_CEILING_DIRECTORIES",
)


# git's messages are read by gitpub (failure codes, the wedge detector, `error:` lines), so
# git speaks one language to it whatever the user's: with LANGUAGE=de git says
# "Schwerwiegend:" where the checks look for "fatal:". C is the one locale every system has;
# paths are unaffected (git quotes them by core.quotePath, not by locale). Under LC_ALL=C,
# gettext ignores LANGUAGE too.


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git command gitpub runs: no variable that pins git to
    another repository, the C locale, no terminal prompt, and the writer mark."""
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARS}
    env["LC_ALL"] = "C"
    env[WRITER_ENV] = "1"
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    if extra:
        env.update(extra)
    return env


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    check: bool = True,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    import subprocess  # here: `submit` finds the repository without running git

    argv = ["git", *args]
    proc = subprocess.run(
        argv, cwd=cwd, input=input, capture_output=True, env=git_env(env), check=False
    )
    if check and proc.returncode != 0:
        raise GitCommandError(argv, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc


def git_out(args: Sequence[str], cwd: Path, **kw: object) -> str:
    return run_git(args, cwd, **kw).stdout.decode("utf-8", "replace").strip()  # type: ignore[arg-type]
