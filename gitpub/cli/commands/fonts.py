"""`git blogpub fonts [--check]` and `git blogpub rebase [UPSTREAM]`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from gitpub import config, fonts
from gitpub.cli.commands.output import say, warn
from gitpub.context import open_context
from gitpub.core.errors import GitpubError
from gitpub.fonts import unchanged
from gitpub.git.repo import Repo


class _Bar:
    """A one-line progress bar on a terminal's stderr; silent when stderr is not a terminal,
    so CI logs and pipes get only the result lines."""

    WIDTH = 24

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False

    def __call__(self, label: str, done: int, total: int) -> None:
        filled = self.WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r[{bar}] {done}/{total} {label}\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _progress() -> _Bar | None:
    return _Bar(sys.stderr) if sys.stderr.isatty() else None


def main(path: Path, *, check: bool) -> None:
    root = Repo.discover(path).root
    if config.load(root).fonts is None:
        # Said before the store is opened: a refusal leaves no trace, not even a job database.
        raise GitpubError(f"{root / config.CONFIG_NAME}: no [fonts] table; nothing to build")
    with open_context(path, need_remote=False) as ctx:
        cfg, root = ctx.config, ctx.repo.root
        if check:
            stale = fonts.stale(cfg, root)
            for output, why in sorted(stale.items()):
                warn(f"{output}: stale ({why})")
            if stale:
                raise GitpubError(
                    f"fonts: {len(stale)} subset(s) stale; run `git blogpub fonts` and commit"
                )
            say("fonts: up to date")
            return
        if unchanged.current(cfg, root):
            # Nothing changed since a check found the outputs current: no lock, no font.
            say("fonts: up to date")
            return
        bar = _progress()
        try:
            with ctx.locks.hold("checkout"):
                changed = fonts.regenerate(cfg, root, progress=bar, prune=True)
        finally:
            if bar:
                bar.close()
        for output in changed:
            say(f"rebuilt {output}" if (root / output).exists() else f"removed {output}")
        if not changed:
            say("fonts: up to date")


def rebase(path: Path, *, upstream: str | None) -> None:
    from gitpub.deliver import fontmerge  # the delivery machinery: only a rebase needs it

    with open_context(path, need_remote=upstream is None) as ctx:
        bar = _progress()
        try:
            result = fontmerge.rebase_live(ctx, upstream, progress=bar)
        finally:
            if bar:
                bar.close()
        if result.regenerated:
            say(f"rebased; fonts rebuilt in {result.regenerated} replayed commit(s)")
        else:
            say("rebased")
        for output, why in sorted(result.stale.items()):
            warn(f"{output}: stale ({why}); run `git blogpub fonts` and commit")
