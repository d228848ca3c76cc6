"""Printing for commands: JSON for machines, short lines for people; all of it sanitized."""

from __future__ import annotations

import json
import sys
from typing import Any

from gitpub.scan.sanitize import sanitize, sanitize_obj


def emit_json(obj: Any) -> None:
    # Value by value, keys included: a field name of ours ("idempotency_key") is no context
    # that turns the request id beside it into a finding.
    plain = json.loads(json.dumps(obj, default=str))
    sys.stdout.write(json.dumps(sanitize_obj(plain), ensure_ascii=False, sort_keys=True) + "\n")


def say(line: str = "") -> None:
    sys.stdout.write(sanitize(line) + "\n")


def warn(line: str) -> None:
    sys.stderr.write(sanitize(line) + "\n")
