"""Printing for commands: JSON for machines, short lines for people; all of it sanitized."""

from __future__ import annotations

import json
import re
import sys

from gitpub.scan.sanitize import sanitize, sanitize_name, sanitize_obj


def emit_json(obj: object) -> None:
    # Value by value, keys included: a field name of ours ("idempotency_key") is no context
    # that turns the request id beside it into a finding.
    plain = json.loads(json.dumps(obj, default=str))
    sys.stdout.write(json.dumps(sanitize_obj(plain), ensure_ascii=False, sort_keys=True) + "\n")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Control characters but newline and tab: a name holding an escape sequence must not move
the cursor, recolour or clear a person's terminal, or forge a status line."""


def printable(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def say(line: str = "") -> None:
    sys.stdout.write(printable(sanitize(line)) + "\n")


def usage_said(message: str) -> str:
    """A usage error's message, which quotes the offending argument (click's words): on one
    line, printable, and sanitized as a name is, so a token or a `password=…` typed in the
    wrong place is never repeated."""
    return printable(sanitize_name(message).replace("\n", " "))


def warn(line: str) -> None:
    sys.stderr.write(printable(sanitize(line)) + "\n")
