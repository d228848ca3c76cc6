"""The manifest: every file a job writes, with its SHA-256, as canonical JSON."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gitpub.core.files import write_atomic
from gitpub.core.ids import Sha256


def sha256_bytes(data: bytes) -> Sha256:
    return Sha256(hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class Entry:
    path: str
    sha256: Sha256
    size: int


def entries_for(root: Path, paths: Iterable[str]) -> list[Entry]:
    out = []
    for rel in sorted(set(paths)):
        data = (root / rel).read_bytes()
        out.append(Entry(rel, sha256_bytes(data), len(data)))
    return out


def canonical(entries: Iterable[Entry]) -> bytes:
    rows = [
        {"path": e.path, "sha256": e.sha256, "size": e.size}
        for e in sorted(entries, key=lambda e: e.path)
    ]
    return json.dumps(rows, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def digest(entries: Iterable[Entry]) -> Sha256:
    return sha256_bytes(canonical(entries))


def load(path: Path) -> list[Entry]:
    return [
        Entry(r["path"], Sha256(r["sha256"]), int(r["size"])) for r in json.loads(path.read_bytes())
    ]


def verify(root: Path, entries: Iterable[Entry]) -> list[str]:
    """Paths under root whose bytes do not match the manifest (missing ones included)."""
    bad = []
    for e in entries:
        f = root / e.path
        if not f.is_file() or sha256_bytes(f.read_bytes()) != e.sha256:
            bad.append(e.path)
    return bad


def save(
    source: Path, entries: Iterable[Entry], folder: Path, manifest_path: Path, sync: bool = True
) -> None:
    """Copy each entry's file from `source` into a fresh `folder` and write the manifest:
    the immutable artifact set a lost job commit can always be remade from. A `source`
    that is `folder` itself (the files were written where they are sealed) is kept. `sync`:
    whether the manifest is what survives a crash (`Store.folders_durable`)."""
    entries = list(entries)
    if source != folder:
        if folder.exists():
            shutil.rmtree(folder)
        for e in entries:
            dest = folder / e.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / e.path, dest)
    write_atomic(manifest_path, canonical(entries), sync=sync)
