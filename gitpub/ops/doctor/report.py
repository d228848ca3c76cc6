"""doctor's findings and the report they make up."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from gitpub import scan
from gitpub.core import crash
from gitpub.core.errors import GitpubError

OK, WARNING, PROBLEM = "ok", "warning", "problem"
_LISTED = 10  # names shown per finding before "and N more"


class ProblemsFound(GitpubError):
    """doctor found something wrong; the report is already printed."""


class PublicFinding(TypedDict):
    check: str
    status: str
    message: str
    hint: str | None


class PublicReport(TypedDict):
    """What `doctor --json` prints."""

    ok: bool
    problems: int
    warnings: int
    findings: list[PublicFinding]
    crash_points: list[str]
    ruleset: dict[str, object]


@dataclass(frozen=True)
class Finding:
    check: str
    status: str
    message: str
    hint: str | None = None

    def public(self) -> PublicFinding:
        return {
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    def add(self, check: str, status: str, message: str, hint: str | None = None) -> None:
        self.findings.append(Finding(check, status, message, hint))

    def count(self, status: str) -> int:
        return sum(1 for f in self.findings if f.status == status)

    def public(self) -> PublicReport:
        return {
            "ok": self.count(PROBLEM) == 0,
            "problems": self.count(PROBLEM),
            "warnings": self.count(WARNING),
            "findings": [f.public() for f in self.findings],
            "crash_points": list(crash.POINTS),
            "ruleset": scan.ruleset(),
        }


def some(names: list[str]) -> str:
    more = len(names) - _LISTED
    return ", ".join(names[:_LISTED]) + (f" and {more} more" if more > 0 else "")
