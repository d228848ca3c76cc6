"""The commands a repository's `.blogpub.toml` would make this node run, as one set.

The set is what a node allows with `git blogpub trust`. It holds every external step the
shared config names (and that the node's own user config does not replace), each with its
role, plus the code those commands can reach: every file the checkout's HEAD tracks outside
the articles, the font subsets and the config itself, by blob id (`trust.code`), and the bytes
of a file an argv names that git does not track. A trusted `["python3", "tools/review.py"]`
must not keep its allowance once a push rewrites `tools/review.py`, the module it imports,
the theme a build gate renders or the `package.json` whose scripts it runs, the same way
direnv re-asks when `.envrc` changes. Articles and font subsets never count: publishing must
not need a new allowance.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from gitpub.config import STEP_ROLES, Config
from gitpub.trust.code import tracked_code

Command = tuple[str, tuple[str, ...]]
"""(role, argv): the role is the [steps] key ("review" for each review gate)."""


@dataclass(frozen=True)
class CommandSet:
    commands: tuple[Command, ...] = ()  # sorted, without repeats
    # (repository-relative path, "blob <id>" | "commit <id>" | "sha256 <hex>"), sorted
    files: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.commands

    @property
    def sha256(self) -> str:
        """The allowance key: a hash of the canonical form of the whole set."""
        canonical = {
            "commands": [[role, list(argv)] for role, argv in self.commands],
            "files": [list(f) for f in self.files],
        }
        data = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()

    def lines(self) -> list[str]:
        """One line per command and per file, as `trust` shows them and diffs them."""
        out = [f"{role}: {shlex.join(argv)}" for role, argv in self.commands]
        out += [f"file {path} {identity}" for path, identity in self.files]
        return out


def role_of(kind: str) -> str:
    """The [steps] key behind a step name ("review0" is the first review gate)."""
    return "review" if kind.startswith("review") else kind


def shared_commands(cfg: Config) -> CommandSet:
    """The external commands `cfg` takes from the repository's `.blogpub.toml`."""
    found: set[Command] = set()
    for role in STEP_ROLES:
        if role not in cfg.shared_steps:
            continue  # built-in default, or replaced by this node's user config
        if role == "review":
            found.update(("review", tuple(argv)) for argv in cfg.steps.review)
            continue
        spec = getattr(cfg.steps, role)
        if not isinstance(spec, str):
            found.add((role, tuple(spec)))
    files: dict[str, str] = {}
    if found:
        skip = (*cfg.publish.content, *cfg.font_outputs)
        files.update(tracked_code(cfg.root, skip))
    for _, argv in found:
        for word in argv:
            named = repository_file(cfg.root, word)
            # A named file git does not track (the node's own script) counts by its bytes.
            if named is not None and named[0] not in files:
                files[named[0]] = f"sha256 {named[1]}"
    return CommandSet(tuple(sorted(found)), tuple(sorted(files.items())))


def repository_file(root: Path, arg: str) -> tuple[str, str] | None:
    """(path, sha256) when `arg`, read as a path from the repository root (where steps run),
    names a file inside the repository; None for everything else (words, options, folders,
    paths outside). The path is judged as written, the bytes are read through any symlink:
    a link the history retargets changes the hash like a rewritten file does."""
    if not arg or arg.startswith("-") or "\x00" in arg:
        return None
    base = os.path.abspath(root)
    candidate = os.path.normpath(os.path.join(base, arg))
    if os.path.commonpath([base, candidate]) != base or candidate == base:
        return None
    try:
        if not os.path.isfile(candidate):
            return None
        digest = hashlib.sha256(Path(candidate).read_bytes()).hexdigest()
    except (OSError, ValueError):
        return None
    return Path(os.path.relpath(candidate, base)).as_posix(), digest
