"""`git blogpub metrics`: the Prometheus text exposition of the store, once."""

from __future__ import annotations

import sys
from pathlib import Path

from gitpub.context import open_context
from gitpub.scan.sanitize import sanitize


def main(path: Path) -> None:
    from gitpub.ui.metrics import exposition

    with open_context(path, need_remote=False) as ctx:
        text = exposition(ctx).decode("utf-8")
    sys.stdout.write(sanitize(text))
