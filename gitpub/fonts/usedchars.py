"""The characters a commit's articles use, kept by tree in the user cache and brought up to
date from the tree delta — so a job's font gate reads the articles that changed since the
last job, not the blog.

What is kept is a count per code point: how many article files use it. An edit that drops
the last use of a character takes it out (a subset holds exactly the characters the articles
use), which a plain union could not tell. The articles are the committed blobs the font
pathspecs match, as a fresh checkout of the commit holds them."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from gitpub.config import Config
from gitpub.core import userdirs
from gitpub.core.files import write_atomic
from gitpub.fonts.charset import pathspecs, text_chars
from gitpub.git.process import run_git
from gitpub.git.repo import Repo

VERSION = 1
_FILES = ("100644", "100755")  # regular files; a link or a submodule is no article text


class Counts:
    """Code point → number of article files using it, at one tree."""

    def __init__(self, tree: str, counts: Counter[int]) -> None:
        self.tree = tree
        self.counts = counts

    @property
    def chars(self) -> frozenset[int]:
        return frozenset(cp for cp, n in self.counts.items() if n > 0)

    def with_files(self, changes: Iterable[tuple[bytes | None, bytes | None]]) -> frozenset[int]:
        """The characters once each (old bytes, new bytes) change is made: None on the
        left is a new file, on the right a removed one."""
        counts = Counter(self.counts)
        for old, new in changes:
            if old is not None:
                counts.subtract(text_chars(old))
            if new is not None:
                counts.update(text_chars(new))
        return frozenset(cp for cp, n in counts.items() if n > 0)


def at(cfg: Config, repo: Repo, commit: str) -> Counts:
    """The article characters of `commit`, from what this clone last counted and the delta."""
    tree = str(repo.commit(commit).tree.id)
    place = _place(cfg, repo)
    kept = _read(place)
    if kept is not None and kept.tree == tree:
        return kept
    counts: Counter[int] = Counter() if kept is None else kept.counts
    old = kept.tree if kept is not None and _has(repo, kept.tree) else None
    if old is None:
        counts = Counter()
    changes = _delta(cfg, repo, old, tree)
    blobs = repo.blobs({oid for pair in changes for oid in pair if oid is not None})
    for before, after in changes:
        if before is not None:
            counts.subtract(text_chars(blobs[before]))
        if after is not None:
            counts.update(text_chars(blobs[after]))
    found = Counts(tree, +counts)  # `+` drops what no article uses any more
    _write(place, found)
    return found


def _has(repo: Repo, oid: str) -> bool:
    try:
        repo.pg[oid]
    except (KeyError, ValueError):
        return False
    return True


def _delta(
    cfg: Config, repo: Repo, old: str | None, new: str
) -> list[tuple[str | None, str | None]]:
    """(old blob, new blob) of each article file that differs between two trees (None: the
    file is absent on that side); from no tree at all when `old` is None."""
    empty = run_git(["hash-object", "-t", "tree", "--stdin"], repo.root, input=b"")
    base = old or empty.stdout.decode().strip()
    out = run_git(
        ["diff-tree", "-r", "-z", "--no-renames", base, new, "--", *pathspecs(cfg)], repo.root
    ).stdout.split(b"\0")
    changes: list[tuple[str | None, str | None]] = []
    for meta, _path in zip(out[::2], out[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_oid, new_oid, _ = meta[1:].decode().split(" ")
        before = old_oid if old_mode in _FILES else None
        after = new_oid if new_mode in _FILES else None
        if before != after:
            changes.append((before, after))
    return changes


def matches(cfg: Config, paths: Iterable[str]) -> list[str]:
    """The paths among `paths` that the font pathspecs name (git's glob pathspecs)."""
    patterns = [_pattern(spec.removeprefix(":(glob)")) for spec in pathspecs(cfg)]
    return [p for p in paths if any(pat.fullmatch(p) for pat in patterns)]


@lru_cache(maxsize=64)
def _pattern(glob: str) -> re.Pattern[str]:
    """A glob pathspec as git's wildmatch reads it: `**/` any folders (none included), `/**`
    everything below, `*` and `?` within one name, `[…]` a set."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)
            inner = glob[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            inner = re.escape(inner[1:] if negate else inner).replace("\\-", "-")
            out.append(f"[{'^' if negate else ''}{inner}]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


# ----------------------------------------------------------------------------- cache


def _place(cfg: Config, repo: Repo) -> str:
    view = json.dumps([VERSION, str(repo.common_dir), pathspecs(cfg)])
    name = hashlib.sha256(view.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return str(userdirs.cache_dir() / "fonts" / "chars" / f"{name}.json")


def _read(place: str) -> Counts | None:
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        with open(place, encoding="utf-8") as fh:
            data = json.load(fh)
        counts = Counter({int(cp): int(n) for cp, n in data["counts"]})
        return Counts(str(data["tree"]), counts)
    return None


def _write(place: str, counts: Counts) -> None:
    data = {"tree": counts.tree, "counts": sorted(counts.counts.items())}
    with contextlib.suppress(OSError):  # a cache: a read-only home only costs the time
        write_atomic(Path(place), json.dumps(data).encode("utf-8"), sync=False)
