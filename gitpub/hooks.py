"""gitpub's git hooks: install them next to the hooks a person already has, and take them out.

A hook already in place is moved aside as `<hook>.legacy` and keeps running (ours calls it
first); `uninstall` moves it back, byte for byte. Our hooks carry an id line, so an older
version of them is recognised and replaced instead of being chained to itself.

The hooks are shell and never start Python: they find the state dir from `.git`, read the
published branch from a one-line file gitpub keeps there (`hook-branch`, rewritten whenever it
differs from the config) and append hints to `hints`, which the worker turns into events."""

from __future__ import annotations

import contextlib
import importlib.resources
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import gitpub
from gitpub.errors import GitpubError
from gitpub.files import write_atomic
from gitpub.gitrepo import Repo, config_value, git_out

HOOK_NAMES = ("post-commit", "reference-transaction")
HOOK_ID = "gitpub-hook-id: 5c2e9a41"
"""On the second line of every hook gitpub writes, whatever its version."""
EARLIER_IDS: tuple[str, ...] = ()
"""Id lines of hook generations that used another id: still ours, replaced on install."""
LEGACY = ".legacy"
MARKER = "@GITPUB_MARKER@"
BRANCH_FILE = "hook-branch"
HINTS_FILE = "hints"


def hooks_dir(repo: Repo) -> Path:
    """Where git looks for hooks: `core.hooksPath` when set (a relative one is relative to the
    worktree root, where git runs hooks), else `hooks/` in the common git dir."""
    configured = config_value(repo, "core.hooksPath", path=True)
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else repo.root / path
    common = Path(git_out(["rev-parse", "--git-common-dir"], repo.root))
    return (common if common.is_absolute() else repo.root / common) / "hooks"


def default_marker() -> Path:
    """The file whose absence tells an installed hook that its gitpub was uninstalled."""
    return Path(gitpub.__file__).resolve()


def render(name: str, marker: Path) -> bytes:
    text = importlib.resources.files("gitpub.hooktemplates").joinpath(name).read_text("utf-8")
    quoted = str(marker).replace("'", "'\\''")  # the template puts it in single quotes
    return text.replace(MARKER, quoted).encode("utf-8")


def is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(512).decode("utf-8", "replace")
    except OSError:
        return False
    return any(mark in head for mark in (HOOK_ID, *EARLIER_IDS))


def write_branch_file(state_dir: Path, branch: str) -> None:
    """Tell the hooks which branch is published; a no-op when the file already says so."""
    path = state_dir / BRANCH_FILE
    wanted = branch + "\n"
    with contextlib.suppress(OSError):
        if path.read_text("utf-8") == wanted:
            return
    state_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(path, wanted.encode("utf-8"), 0o644)


# ------------------------------------------------------------------ install / uninstall


@dataclass
class _Plan:
    """File operations, each with its undo, so a failure halfway leaves the folder as found."""

    done: list[Callable[[], None]]

    def run(self, action: Callable[[], None], undo: Callable[[], None]) -> None:
        action()
        self.done.append(undo)

    def rollback(self) -> None:
        for undo in reversed(self.done):
            with contextlib.suppress(OSError):
                undo()


@contextlib.contextmanager
def _transaction(folder: Path, verb: str) -> Iterator[_Plan]:
    plan = _Plan([])
    try:
        yield plan
    except OSError as exc:
        plan.rollback()
        reason = exc.strerror or str(exc)
        raise GitpubError(f"{verb}: cannot write in {folder}: {reason}; nothing changed") from None
    except BaseException:
        plan.rollback()
        raise


def install(repo: Repo, branch: str, marker: Path | None = None) -> list[str]:
    """Write gitpub's hooks into the hooks folder; returns one line per hook saying what it did.

    Idempotent: a second install writes the same bytes. A foreign hook is kept as
    `<hook>.legacy` and chained; a foreign hook next to an existing `.legacy` is an error,
    raised before anything is written."""
    folder = hooks_dir(repo)
    marker = marker or default_marker()
    if folder.exists() and not folder.is_dir():
        raise GitpubError(f"install: the hooks folder {folder} is not a folder")
    for name in HOOK_NAMES:
        hook, legacy = folder / name, folder / (name + LEGACY)
        if hook.is_dir():
            raise GitpubError(f"install: {hook} is a folder, not a hook")
        if _exists(hook) and not is_ours(hook) and _exists(legacy):
            raise GitpubError(
                f"install: {hook} is not gitpub's and {legacy.name} already exists next to it; "
                f"move one of them away first"
            )
    try:
        write_branch_file(repo.state_dir, branch)
    except OSError as exc:
        raise GitpubError(f"install: cannot write in {repo.state_dir}: {exc.strerror}") from None
    said: list[str] = []
    with _transaction(folder, "install") as plan:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise GitpubError(f"install: the hooks folder {folder} is not writable")
        for name in HOOK_NAMES:
            said.append(_install_one(plan, folder, name, render(name, marker)))
    return said


def _install_one(plan: _Plan, folder: Path, name: str, content: bytes) -> str:
    hook, legacy = folder / name, folder / (name + LEGACY)
    if _exists(hook) and is_ours(hook):
        old = hook.read_bytes()
        if old == content and os.access(hook, os.X_OK):
            return f"{name}: already installed in {folder}"
        plan.run(lambda: write_atomic(hook, content, 0o755), lambda: write_atomic(hook, old, 0o755))
        return f"{name}: updated in {folder}"
    if _exists(hook):
        plan.run(lambda: os.rename(hook, legacy), lambda: os.rename(legacy, hook))
        plan.run(lambda: write_atomic(hook, content, 0o755), lambda: hook.unlink())
        return f"{name}: installed in {folder}; the hook that was there runs first as {legacy.name}"
    plan.run(lambda: write_atomic(hook, content, 0o755), lambda: hook.unlink())
    return f"{name}: installed in {folder}"


def uninstall(repo: Repo) -> list[str]:
    """Take gitpub's hooks out and put back exactly what was there before `install`."""
    folder = hooks_dir(repo)
    said: list[str] = []
    with _transaction(folder, "uninstall") as plan:
        for name in HOOK_NAMES:
            said.append(_uninstall_one(plan, folder, name))
    return said


def _uninstall_one(plan: _Plan, folder: Path, name: str) -> str:
    hook, legacy = folder / name, folder / (name + LEGACY)
    if _exists(hook) and not is_ours(hook):
        return f"{name}: not gitpub's, left alone"
    if _exists(hook):
        old = hook.read_bytes()
        if _exists(legacy):
            # rename keeps the legacy hook's bytes and mode exactly as they were
            plan.run(lambda: os.replace(legacy, hook), lambda: _restore(hook, legacy, old))
            return f"{name}: removed; the hook that was there before is back"
        plan.run(lambda: hook.unlink(), lambda: write_atomic(hook, old, 0o755))
        return f"{name}: removed"
    if _exists(legacy):
        # Our hook was deleted by hand (as its "gitpub is gone" message suggests): finish the job.
        plan.run(lambda: os.rename(legacy, hook), lambda: os.rename(hook, legacy))
        return f"{name}: the hook that was there before is back"
    return f"{name}: not installed"


def _restore(hook: Path, legacy: Path, ours: bytes) -> None:
    os.rename(hook, legacy)
    write_atomic(hook, ours, 0o755)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)  # a dangling symlink is still somebody's hook
