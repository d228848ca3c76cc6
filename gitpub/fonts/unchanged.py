"""The no-op gate: whether the font outputs of a checkout are certainly current, answered
from what the last full check saw, without loading the font.

A full check reads every article, the source font's coverage and every output's stamp. When
it finds everything current it records the identity — path, size, mtime, ctime, inode, as
git's index does — of the source font, of every article file and of every output. The next
check lists the article files (one `git ls-files`) and stats them: the same identities mean
the same characters, the same font and the same outputs, so the answer is "current" with no
font opened, no article read and no font library imported. Anything else falls back to the
full check, which is always right.

A file written within the last two seconds is not recorded: its mtime can still be shared
by a later write of the same size (git calls such entries "racily clean"), and the record
would then hide that write."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

from gitpub.config import Config, slices
from gitpub.core import userdirs

RACY_SECONDS = 2.0
VERSION = 1


def _key(cfg: Config, root: Path) -> Path:
    assert cfg.fonts is not None
    what = json.dumps(
        [
            VERSION,
            str(root.resolve()),
            list(dataclasses.astuple(cfg.fonts)),
            slices.SLICING,
            cfg.publish.content,
            cfg.publish.suffixes,
        ],
        default=str,
    )
    name = hashlib.sha256(what.encode("utf-8")).hexdigest()[:32]
    return userdirs.cache_dir() / "fonts" / f"current-{name}.json"


def _identity(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _signature(root: Path, source: Path, articles: list[str], outputs: list[str]) -> str | None:
    """A digest of every file's identity; None when a file is too fresh to be trusted."""
    h = hashlib.sha256()
    fresh = time.time_ns() - int(RACY_SECONDS * 1e9)
    for kind, paths in (("s", [source]), ("a", [root / a for a in articles])):
        for path in paths:
            ident = _identity(path)
            if ident is None or ident[1] > fresh or ident[2] > fresh:
                return None
            h.update(f"{kind}\0{path}\0{ident}\n".encode("utf-8", "surrogateescape"))
    for output in outputs:
        ident = _identity(root / output)
        if ident is None or ident[1] > fresh or ident[2] > fresh:
            return None
        h.update(f"o\0{output}\0{ident}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _source(cfg: Config, root: Path) -> Path:
    from gitpub.fonts.source import resolve

    assert cfg.fonts is not None
    return resolve(cfg.fonts, root).resolve()  # a link's target: that is the font read


def current(cfg: Config, root: Path) -> bool:
    """True only when the last full check found every output current and no file it read
    has changed since."""
    from gitpub.fonts.charset import article_paths

    try:
        data = json.loads(_key(cfg, root).read_text("utf-8"))
        outputs = [str(o) for o in data["outputs"]]
        want = str(data["signature"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    try:
        source = _source(cfg, root)
    except Exception:  # a missing font is the full check's to report
        return False
    return _signature(root, source, article_paths(cfg, root), outputs) == want


def remember(
    cfg: Config, root: Path, source: Path, articles: list[str], outputs: list[str]
) -> None:
    """Record a full check that found every output current."""
    signature = _signature(root, source.resolve(), articles, outputs)
    path = _key(cfg, root)
    if signature is None:
        with contextlib.suppress(OSError):
            path.unlink()  # an older record must not outlive what it described
        return
    record: dict[str, object] = {"signature": signature, "outputs": outputs}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record), "utf-8")
        os.replace(tmp, path)
