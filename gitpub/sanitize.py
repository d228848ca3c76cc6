"""Secret detectors and redaction: every text gitpub persists passes through `sanitize`."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    kind: str
    line: int


# Each detector is (kind, pattern). A pattern's group "secret", when present, is the part
# replaced; otherwise the whole match is. Ordered from most to least specific so that a
# private key block is not half-eaten by a generic assignment rule.
_DETECTORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "github-token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b"),
    ),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}\b")),
    ("api-key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    (
        "bearer-token",
        re.compile(r"(?i)\b(?:bearer|token)\s+(?P<secret>[A-Za-z0-9_\-\.=+/]{16,})"),
    ),
    ("url-credentials", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:(?P<secret>[^@\s/]+)@")),
    (
        "assignment",
        re.compile(
            r"(?i)\b(?:password|passwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|"
            r"client[_-]?secret|private[_-]?token)\b\s*[:=]\s*[\"']?(?P<secret>[^\s\"']{8,})"
        ),
    ),
)


def _replacement(kind: str, match: re.Match[str]) -> str:
    marker = f"[REDACTED:{kind}]"
    if "secret" in match.re.groupindex and match.group("secret") is not None:
        start, end = match.span("secret")
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + marker + text[end - whole_start :]
    return marker


def sanitize(text: str) -> str:
    """Return text with every detected secret replaced by `[REDACTED:<kind>]`."""
    for kind, pattern in _DETECTORS:
        text = pattern.sub(functools.partial(_replacement, kind), text)
    return text


def sanitize_obj(value: Any) -> Any:
    """`sanitize` applied to every string inside a JSON-like value (keys included)."""
    if isinstance(value, str):
        return sanitize(value)
    if isinstance(value, dict):
        return {sanitize(str(k)): sanitize_obj(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitize_obj(v) for v in value]
    return value


REDACTION_MARK = "[REDACTED:"


def scan(text: str) -> list[Finding]:
    """Every detected secret with its 1-based line number, in text order."""
    found: list[Finding] = []
    for kind, pattern in _DETECTORS:
        for m in pattern.finditer(text):
            found.append(Finding(kind, text.count("\n", 0, m.start()) + 1))
    # A secret redacted upstream (in the submitted source) leaves its marker: publishing
    # the marker would hide that the writer leaked something, so it counts as a finding.
    start = text.find(REDACTION_MARK)
    while start != -1:
        kind = text[start + len(REDACTION_MARK) :].split("]", 1)[0]
        found.append(Finding(f"redacted {kind}", text.count("\n", 0, start) + 1))
        start = text.find(REDACTION_MARK, start + 1)
    found.sort(key=lambda f: f.line)
    return found
