"""Printing for commands: JSON for machines, short lines for people; all of it sanitized."""

from __future__ import annotations

import json
import sys
from typing import Any

from gitpub.sanitize import sanitize


def emit_json(obj: Any) -> None:
    sys.stdout.write(sanitize(json.dumps(obj, ensure_ascii=False, sort_keys=True)) + "\n")


def say(line: str = "") -> None:
    sys.stdout.write(sanitize(line) + "\n")


def warn(line: str) -> None:
    sys.stderr.write(sanitize(line) + "\n")
