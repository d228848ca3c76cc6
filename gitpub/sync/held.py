"""Hand edits that hold a secret are held back: never committed, never pushed.

Under `hand_edits = "all"` gitpub commits a person's uncommitted content changes for them, so
a file dropped into the article folder with an AWS key pair in it would reach the remote
within one pass. A hand edit passes the same scanner as a submitted source (`gitpub.scan`,
with the `[scan] allow` fingerprints): a file with a finding stays out of the sync commit and
out of the event that announces it, until a person removes the secret (or the file) or allows
its fingerprint. The other edits of the same pass are delivered as usual.

What was held back is written to `held-edits.json` in the state dir — paths, kinds, lines
and fingerprints, never the secret — so `status` names it without scanning; `doctor` scans
the checkout itself."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from gitpub.core.files import write_atomic

if TYPE_CHECKING:
    from gitpub.scan import Finding

HELD_FILE = "held-edits.json"

Held: TypeAlias = "dict[str, list[Finding]]"
"""Repository-relative path → the findings that hold it back."""


def split(
    root: Path, changes: Sequence[tuple[str, str | None]], allow: Iterable[str]
) -> tuple[list[tuple[str, str | None]], Held]:
    """(the changes that may be delivered, the held-back paths with their findings).
    A deletion holds no secret; a binary file (an image) is not scanned, as with assets."""
    allowed = frozenset(allow)
    ok: list[tuple[str, str | None]] = []
    held: Held = {}
    for path, digest in changes:
        found = findings(root / path, path, allowed) if digest is not None else []
        if found:
            held[path] = found
        else:
            ok.append((path, digest))
    return ok, held


def findings(file: Path, path: str, allow: frozenset[str]) -> list[Finding]:
    from gitpub.scan import as_text, markers, scan  # `status` reads the record, never scans

    try:
        text = as_text(file.read_bytes())
    except OSError:
        return []  # gone (or unreadable) since git listed it: nothing of it can be committed
    if text is None:
        return []
    # A redaction marker counts, as at the door: it says something was cut out upstream.
    return sorted(scan(text, path=path, allow=allow) + markers(text), key=lambda f: f.line)


def record(state_dir: Path, held: Held) -> None:
    """Remember what this pass held back, for `status`; nothing held: no file."""
    target = state_dir / HELD_FILE
    if not held:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        return
    data = {path: [f.public() for f in found] for path, found in sorted(held.items())}
    write_atomic(target, json.dumps(data, sort_keys=True, indent=1).encode("utf-8"), sync=False)


def recorded(state_dir: Path, root: Path) -> dict[str, list[dict[str, object]]]:
    """What the last pass held back, limited to files that are still there."""
    try:
        data = json.loads((state_dir / HELD_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(path): [f for f in found if isinstance(f, dict)]
        for path, found in data.items()
        if isinstance(found, list) and (root / str(path)).is_file()
    }


def describe(path: str, found: Sequence[Finding | dict[str, object]]) -> str:
    """One line for a person: the path and each finding's kind, line and fingerprint."""
    parts = []
    for f in found:
        item = f if isinstance(f, dict) else f.public()
        parts.append(f"{item.get('kind')} line {item.get('line')} ({item.get('fingerprint')})")
    return f"{path}: " + ", ".join(parts)


FIX = (
    "remove the secret from the file (or the file), or allow its fingerprint in "
    "[scan] allow of .blogpub.toml when it is no secret"
)
