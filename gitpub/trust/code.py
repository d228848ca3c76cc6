"""The code an allowed command can reach: every file the live checkout's HEAD tracks outside
the articles, the font subsets and `.blogpub.toml` itself, named by its git blob id.

A step runs with the repository root as its working directory, so it can reach any file of
the blog: `sh -c "cd tools && sh gate.sh"` names no file at all, `python3 tools` runs a
folder's `__main__.py`, a tracked symlink `tools -> scripts` leads elsewhere, and a site build
gate runs the site's own `astro.config.mjs`, Hexo `scripts/` and npm scripts. No reading of an
argv can follow all that, so the allowance binds the whole tracked tree instead, minus what
publishing itself writes (a new article never asks for trust again). It runs before every
external step: one walk of HEAD's tree, pruned at the article folders, hashing nothing (git
already did: a blob id changes with the bytes, a symlink's blob with its target)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

CONFIG_FILE = ".blogpub.toml"
"""Its commands are part of the set already; its other keys are data (a retry count, a new
article folder) that must not ask for trust again."""


def tracked_code(root: Path, skip: Iterable[str]) -> dict[str, str]:
    """{repository-relative path: blob id} of the files HEAD tracks at `root`, except those
    at or under a path of `skip` and the shared config. Empty for a repository without a
    commit or one pygit2 cannot open (then nothing of it can be trusted by id either)."""
    import pygit2  # trust is asked before each external step, never at start-up

    skipped = {s.strip("/") for s in skip if s.strip("/")} | {CONFIG_FILE}
    try:
        repo = pygit2.Repository(str(root))
        head = repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError):
        return {}
    found: dict[str, str] = {}
    _walk(head.tree, "", skipped, found)
    return found


def _walk(tree: pygit2.Tree, prefix: str, skip: set[str], out: dict[str, str]) -> None:
    import pygit2

    for entry in tree:
        path = prefix + str(entry.name)
        if path in skip:
            continue  # an article folder, a font output, the config: never code to trust
        if isinstance(entry, pygit2.Tree):
            _walk(entry, path + "/", skip, out)
        else:
            # Files, executables, symlinks (their blob is the target) and submodules (their
            # pinned commit) alike: the id changes when what the entry points at changes.
            out[path] = f"{entry.type_str} {entry.id}"
