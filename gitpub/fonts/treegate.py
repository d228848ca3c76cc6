"""The font gate of a job, from the commit it builds on and the files it writes: no checkout.

A checkout of a font blog writes its source font (a CJK collection is ~20 MB) and every
article, for the gate to read them back. Here the source face comes from the user cache by
the font's blob id (`faces`), the article characters from the commit's counts brought up to
date from the tree delta (`usedchars`) plus the job's own files, and the outputs' stamps from
the commit's blobs: the gate's work is what the job changes, and a job that brings no new
character rebuilds nothing. The answer is the one `gitpub.fonts.gate` gives in a checkout
of the same commit with the job's files written into it, output bytes included."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import posixpath
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gitpub.config import Config, FontsConfig
from gitpub.fonts import build, charset, compose, engine, stale_reason, usedchars
from gitpub.fonts.source import SourceFont, load, load_blob
from gitpub.git.repo import Repo

if TYPE_CHECKING:
    from gitpub.fonts import FontsAnswer

_FILE_MODES = (0o100644, 0o100755)
_LINK = 0o120000


def source_of(repo: Repo, commit: str, fc: FontsConfig) -> str | Path | None:
    """Where the source font of `commit` is read: its blob id when the config names a file
    of the tree (or a link to one), the file on disk for an absolute path (or a link to
    one, as a blog links a system font); None for anything else (a checkout reads it)."""
    named = Path(fc.source).expanduser()
    if named.is_absolute():
        return named
    tree = repo.commit(commit).tree
    where = fc.source
    for _ in range(8):  # a link to a link to …: as far as a checkout would follow
        try:
            entry = tree[where]
        except (KeyError, ValueError):
            return None
        if entry.filemode in _FILE_MODES:
            return str(entry.id)
        if entry.filemode != _LINK:
            return None
        target = repo.blobs([str(entry.id)])[str(entry.id)].decode("utf-8", "surrogateescape")
        if os.path.isabs(target):
            return Path(target)
        where = posixpath.normpath(posixpath.join(posixpath.dirname(where), target))
        if where.startswith("../") or where == "..":
            return None
    return None


def possible(cfg: Config, repo: Repo, commit: str) -> bool:
    """Whether the gate can run from the tree (see `source_of`)."""
    assert cfg.fonts is not None
    return source_of(repo, commit, cfg.fonts) is not None


def gate(
    cfg: Config,
    repo: Repo,
    base: str,
    folder: Path,
    written: Mapping[str, bytes],
    heartbeat: Callable[[], None] | None = None,
) -> FontsAnswer:
    """Write into `folder` the font outputs that the job's `written` files (path → bytes,
    already in `folder`) make differ from `base`, and answer as `gitpub.fonts.gate` does."""
    started = time.monotonic()
    fc = cfg.fonts
    assert fc is not None
    log: list[str] = []
    with engine.captured_log(log):  # reading the source can warn too
        source = _source(fc, repo, base)
    counts = usedchars.at(cfg, repo, base)
    changes = [(repo.blob_at(base, p), written[p]) for p in usedchars.matches(cfg, written)]
    used = counts.with_files(changes)
    p = compose(fc, folder, source, charset.Articles(folder), used)
    head = {o: repo.blob_at(base, o) for o in p.outputs()}
    for output in p.outputs():
        why = stale_reason(p, output, head[output])
        if why:
            p.reasons[output] = why
    written_outputs = build(p, heartbeat=heartbeat, log=log)
    outputs = {}
    for output in p.outputs():
        path = folder / output
        if path.is_file() and path.read_bytes() != head[output]:
            outputs[output] = hashlib.sha256(path.read_bytes()).hexdigest()
    missing = charset.visible(used - source.coverage)
    before = counts.chars
    new = [cp for cp in missing if cp not in before]
    review = None
    if new and fc.missing == "review":
        sample = "".join(chr(c) for c in new[:20])
        review = f"the source font lacks {len(new)} character(s) the change uses: {sample}"
    return {
        "outputs": outputs,
        "written": written_outputs,
        "engine": engine.choose(fc.engine) if written_outputs else None,
        "chars": len(p.keep),
        "charset_sha256": charset.digest(p.keep),
        "source_sha256": source.sha256,
        "missing": charset.summary(missing),
        "missing_new": charset.summary(new),
        "review": review,
        "seconds": round(time.monotonic() - started, 3),
        "log": log,
    }


def _source(fc: FontsConfig, repo: Repo, base: str) -> SourceFont:
    found = source_of(repo, base, fc)
    if isinstance(found, str):
        return load_blob(fc, repo, found)
    assert found is not None  # `possible` said so
    # A file on disk, the same for every checkout (its facts are kept by its identity).
    return load(dataclasses.replace(fc, source=str(found)), repo.root)
