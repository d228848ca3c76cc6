"""`install` / `uninstall`: gitpub's hooks next to the hooks a person and their tools have.

- A hook already in place is parked as `<hook>.before-gitpub` and runs first; `uninstall` puts
  it back, byte for byte. Never `.legacy`: that name is pre-commit's, which runs it.
- Where pre-commit's hook is in place, gitpub joins its chain instead, as `<hook>.legacy`
  (pre-commit's migration mode runs it first); what sat there moves to `.before-gitpub`.
  gitpub installed first and pre-commit after ends in the same place, so in both orders each
  tool's uninstall leaves the other running.
- gitpub's hook is recognised by its id line wherever it runs from; a hook of version 1 (which
  parked as `.legacy`) has its parked hook moved to the new name on install.
- A tracked hooks folder is never written: see `gitpub.sync.hooks.tracked`."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from gitpub.core.errors import GitpubError
from gitpub.core.files import write_atomic
from gitpub.git.repo import Repo
from gitpub.sync.hooks import (
    HOOK_NAMES,
    INSTALLED_FILE,
    PARK,
    Slot,
    default_marker,
    exists,
    hooks_dir,
    identify,
    is_ours,
    render,
    write_branch_file,
)
from gitpub.sync.hooks import tracked as tracked_mod


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
    """Write gitpub's hooks into the hooks folder; returns what it did, one line per hook.

    Idempotent: a second install writes the same bytes. Every refusal is raised before anything
    is written."""
    folder = hooks_dir(repo)
    marker = marker or default_marker()
    if folder.exists() and not folder.is_dir():
        raise GitpubError(f"install: the hooks folder {folder} is not a folder")
    tracked = tracked_mod.is_tracked(repo, folder)
    if not tracked:
        for name in HOOK_NAMES:
            _refusal(Slot(folder, name))
    try:
        write_branch_file(repo.state_dir, branch)
    except OSError as exc:
        raise GitpubError(f"install: cannot write in {repo.state_dir}: {exc.strerror}") from None
    if tracked:
        return _install_tracked(repo, folder, marker)
    said: list[str] = []
    with _transaction(folder, "install") as plan:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise GitpubError(f"install: the hooks folder {folder} is not writable")
        for name in HOOK_NAMES:
            said.append(_install_one(plan, Slot(folder, name), render(name, marker)))
    with contextlib.suppress(OSError):  # only a hint for doctor's wording
        write_atomic(repo.state_dir / INSTALLED_FILE, f"{folder}\n".encode(), 0o644)
    return said


def installed_in(repo: Repo) -> Path | None:
    """The hooks folder gitpub's hooks were last installed into, if they still should be."""
    try:
        return Path((repo.state_dir / INSTALLED_FILE).read_text("utf-8").strip())
    except OSError:
        return None


def _refusal(slot: Slot) -> None:
    """Raise when installing would need a parking place that is taken."""
    if slot.hook.is_dir():
        raise GitpubError(f"install: {slot.hook} is a folder, not a hook")
    if slot.ours() is not None or not exists(slot.parked):
        return
    tool = identify(slot.hook) if exists(slot.hook) else None
    to_park = None
    if tool is not None and tool.runs_legacy:
        to_park = slot.legacy if exists(slot.legacy) and not is_ours(slot.legacy) else None
    elif exists(slot.hook):
        to_park = slot.hook
    if to_park is not None:
        whose = f"{tool.name}'s hook" if tool is not None and to_park == slot.hook else "a hook"
        raise GitpubError(
            f"install: {to_park} is {whose} that would wait in {slot.parked.name}, which "
            f"already holds the hook gitpub found there before; keep one of them and move "
            f"the other away first"
        )


def _install_one(plan: _Plan, slot: Slot, content: bytes) -> str:
    name, folder = slot.name, slot.folder
    ours = slot.ours()
    if ours is not None:
        park = slot.park_of(ours)
        if park != slot.parked and exists(park) and not exists(slot.parked):
            # A version-1 hook parked as .legacy, which pre-commit would take for its own.
            target = slot.parked
            plan.run(lambda: os.rename(park, target), lambda: os.rename(target, park))
        old = ours.read_bytes()
        where = "" if ours == slot.hook else f" as {ours.name}, run by {_tool_of(slot)}'s hook"
        if old == content and os.access(ours, os.X_OK):
            return f"{name}: already installed in {folder}{where}"
        plan.run(lambda: write_atomic(ours, content, 0o755), lambda: write_atomic(ours, old, 0o755))
        return f"{name}: updated in {folder}{where}"
    if exists(slot.legacy) and is_ours(slot.legacy):
        # A copy of ours left under a hook that does not run it (pre-commit's hook deleted
        # by hand, say): it would never run, and is in the way of what follows.
        stale, stale_bytes = slot.legacy, slot.legacy.read_bytes()
        plan.run(lambda: stale.unlink(), lambda: write_atomic(stale, stale_bytes, 0o755))
    tool = identify(slot.hook) if exists(slot.hook) else None
    if tool is not None and tool.runs_legacy:
        legacy, parked = slot.legacy, slot.parked
        said = f"{name}: installed in {folder} as {legacy.name}, run first by {tool.name}'s hook"
        if exists(legacy):
            plan.run(lambda: os.rename(legacy, parked), lambda: os.rename(parked, legacy))
            said += f"; the {legacy.name} that was there runs before it, as {parked.name}"
        plan.run(lambda: write_atomic(legacy, content, 0o755), lambda: legacy.unlink())
        return said
    hook, parked = slot.hook, slot.parked
    if exists(hook):
        plan.run(lambda: os.rename(hook, parked), lambda: os.rename(parked, hook))
        plan.run(lambda: write_atomic(hook, content, 0o755), lambda: hook.unlink())
        whose = f"{tool.name}'s hook" if tool is not None else "the hook that was there"
        return f"{name}: installed in {folder}; {whose} runs first as {parked.name}"
    plan.run(lambda: write_atomic(hook, content, 0o755), lambda: hook.unlink())
    if exists(parked):
        return f"{name}: installed in {folder}; {parked.name} runs first again"
    return f"{name}: installed in {folder}"


def _tool_of(slot: Slot) -> str:
    tool = identify(slot.hook)
    return tool.name if tool is not None else "another tool"


def uninstall(repo: Repo) -> list[str]:
    """Take gitpub's hooks out, wherever they run from, and put back what they had parked."""
    folder = hooks_dir(repo)
    if tracked_mod.is_tracked(repo, folder):
        return _uninstall_tracked(repo, folder)
    said: list[str] = []
    with _transaction(folder, "uninstall") as plan:
        for name in HOOK_NAMES:
            said.append(_uninstall_one(plan, Slot(folder, name)))
    with contextlib.suppress(OSError):
        (repo.state_dir / INSTALLED_FILE).unlink()
    return said


def _uninstall_one(plan: _Plan, slot: Slot) -> str:
    name = slot.name
    ours = slot.ours()
    if ours is not None:
        park, old = slot.park_of(ours), ours.read_bytes()
        where = "" if ours == slot.hook else f" ({ours.name}, run by {_tool_of(slot)}'s hook)"
        if exists(park):
            # rename keeps the parked hook's bytes and mode exactly as they were
            plan.run(lambda: os.replace(park, ours), lambda: _restore(ours, park, old))
            return f"{name}: removed{where}; the hook that was there before is back"
        plan.run(lambda: ours.unlink(), lambda: write_atomic(ours, old, 0o755))
        return f"{name}: removed{where}"
    hook, parked = slot.hook, slot.parked
    if exists(slot.legacy) and is_ours(slot.legacy) and not exists(hook):
        stale, stale_bytes = slot.legacy, slot.legacy.read_bytes()
        plan.run(lambda: stale.unlink(), lambda: write_atomic(stale, stale_bytes, 0o755))
    if not exists(hook) and exists(parked):
        # Our hook was deleted by hand (as its "gitpub is gone" message suggests): finish the job.
        plan.run(lambda: os.rename(parked, hook), lambda: os.rename(hook, parked))
        return f"{name}: the hook that was there before is back"
    if exists(hook):
        tool = identify(hook)
        whose = f"{tool.name}'s hook" if tool is not None else "not gitpub's"
        extra = f"; {parked.name} is left in place" if exists(parked) else ""
        return f"{name}: {whose}, left alone{extra}"
    return f"{name}: not installed"


def _put_back(path: Path, old: bytes | None) -> None:
    if old is None:
        path.unlink()
    else:
        write_atomic(path, old, 0o755)


def _restore(hook: Path, park: Path, ours: bytes) -> None:
    os.rename(hook, park)
    write_atomic(hook, ours, 0o755)


# ------------------------------------------------------------------ a tracked hooks folder


def _install_tracked(repo: Repo, folder: Path, marker: Path) -> list[str]:
    private = tracked_mod.private_dir(repo)
    said: list[str] = []
    with _transaction(private, "install") as plan:
        private.mkdir(parents=True, exist_ok=True)
        for name in HOOK_NAMES:
            path, content = private / name, render(name, marker)
            if exists(path) and path.read_bytes() == content and os.access(path, os.X_OK):
                continue
            old = path.read_bytes() if exists(path) else None
            plan.run(partial(write_atomic, path, content, 0o755), partial(_put_back, path, old))
    shown = tracked_mod.shown(repo, folder)
    said.append(
        f"{shown} (core.hooksPath) is inside the worktree, the repository's own: gitpub writes "
        f"nothing there; its hooks are in {private}"
    )
    for name in HOOK_NAMES:
        script = tracked_mod.script_for(folder, name)
        where = tracked_mod.shown(repo, script)
        if tracked_mod.has_line(script, name):
            said.append(f"{name}: {where} already runs gitpub's hook")
        else:
            if exists(script):
                said.append(f"{name}: add this line to {where}:")
            else:
                said.append(f"{name}: create {where} (#!/bin/sh, executable) with this line:")
            said.append(f"    {tracked_mod.line(name)}")
    return said


def _uninstall_tracked(repo: Repo, folder: Path) -> list[str]:
    private = tracked_mod.private_dir(repo)
    said: list[str] = []
    with _transaction(private, "uninstall") as plan:
        for name in HOOK_NAMES:
            path = private / name
            if exists(path) and is_ours(path):
                old = path.read_bytes()
                plan.run(path.unlink, partial(_put_back, path, old))
                said.append(f"{name}: removed from {private}")
            script = tracked_mod.script_for(folder, name)
            if tracked_mod.has_line(script, name):
                said.append(
                    f"{name}: {tracked_mod.shown(repo, script)} still has gitpub's line, which "
                    f"now does nothing; remove it when you like"
                )
    return said or [f"gitpub's hooks are not installed in {private}"]


__all__ = ["PARK", "install", "uninstall"]
