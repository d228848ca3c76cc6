"""CJK web-font subsets (the font gate). Placeholder until the font engine lands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitpub.config import Config
from gitpub.prepare.protocol import StepFailed


def gate(
    cfg: Config, worktree: Path, heartbeat: Callable[[], None] | None = None
) -> dict[str, Any]:
    raise StepFailed("the font gate is not available in this build")
