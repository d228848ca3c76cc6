"""The commands a repository's `.blogpub.toml` would make this node run, as one set.

The set is what a node allows with `git blogpub trust`. It holds every external step the
shared config names (and that the node's own user config does not replace), each with its
role, plus the bytes of every repository file those argv lists name: a trusted
`["python3", "tools/review.py"]` must not keep its allowance once a push rewrites
`tools/review.py`, the same way direnv re-asks when `.envrc` changes. A script seldom stands
alone, so the files git tracks beside it (its folder and below: the module it imports, its
package.json) count too, and so do the paths inside a shell string (`sh -c "python3 x.py"`).
Articles and font subsets never count: publishing must not need a new allowance."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from gitpub.config import STEP_ROLES, Config

Command = tuple[str, tuple[str, ...]]
"""(role, argv): the role is the [steps] key ("review" for each review gate)."""


@dataclass(frozen=True)
class CommandSet:
    commands: tuple[Command, ...] = ()  # sorted, without repeats
    files: tuple[tuple[str, str], ...] = ()  # (repository-relative path, sha256), sorted

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
        out += [f"file {path} sha256 {digest}" for path, digest in self.files]
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
    inner: dict[str, str] = {}
    for _, argv in found:
        files.update(n for n in (repository_file(cfg.root, w) for w in argv) if n)
        inner.update(n for n in (repository_file(cfg.root, w) for w in _inner_words(argv)) if n)
    # One `git ls-files` for the words of every shell string, one for every script's folder:
    # trust is asked before each external step runs.
    files.update((path, inner[path]) for path in _tracked(cfg, list(inner)) if path in inner)
    folders = {folder for path in files if (folder := _code_folder(cfg, path))}
    for path in _tracked(cfg, sorted(folders)):
        if path not in files and (near := repository_file(cfg.root, path)) is not None:
            files[near[0]] = near[1]
    return CommandSet(tuple(sorted(found)), tuple(sorted(files.items())))


def _inner_words(argv: tuple[str, ...]) -> list[str]:
    """The words of each argument that is itself a command line (`sh -c "…"`). Only those
    git tracks will count: a file the command itself writes is no code anyone pushed."""
    out: list[str] = []
    for arg in argv:
        if any(c.isspace() for c in arg):
            try:
                out += shlex.split(arg)
            except ValueError:
                continue  # an unbalanced quote: no words to find
    return out


def _tracked(cfg: Config, paths: list[str]) -> list[str]:
    """Those of `paths` (or below them) that git tracks, repository-relative."""
    from gitpub.git.process import run_git  # trust is asked before each step, not at start-up

    wanted = [p for p in paths if p and not p.startswith("-") and "\x00" not in p]
    if not wanted:
        return []
    # Literal: a word of a command line is a path, never a pattern or pathspec magic.
    proc = run_git(["--literal-pathspecs", "ls-files", "-z", "--", *wanted], cfg.root, check=False)
    if proc.returncode != 0:
        return []
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _code_folder(cfg: Config, path: str) -> str | None:
    """The named file's folder, whose tracked files count with it; None for a file at the
    repository root (that folder is the whole blog) or among the articles and subsets."""
    folder = os.path.dirname(path)
    if not folder:
        return None
    derived = tuple(f.rstrip("/") + "/" for f in (*cfg.publish.content, *cfg.font_outputs))
    if (folder + "/").startswith(derived) or any(d.startswith(folder + "/") for d in derived):
        return None  # the articles are in it: every publication would ask for trust again
    return folder


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
