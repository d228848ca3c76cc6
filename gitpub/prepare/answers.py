"""A step's request and answer as prepare reads them. The step protocol speaks JSON objects
(`protocol`); an answer whose contract `steps.check_*` checked is read as one of these types.

A field a step may leave out may also be null: JSON's way of saying it is absent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

Request = Mapping[str, object]
"""A step's request: a JSON object, on the command's stdin or to a built-in."""

RawAnswer = Mapping[str, object]
"""A step's answer as the step gave it, before its contract is checked."""

Leaks = Sequence[Mapping[str, object]]
"""What a step's raw answer leaked, as the ruleset names it: field, kind, line, fingerprint
(`scan.leaks`); the recorded answer holds them sanitized away."""


class ArticleText(TypedDict):
    """One article in a judge's request."""

    path: str
    text: str


class DraftRequest(TypedDict):
    job_id: str
    source: str
    topic: str | None
    target: str | None  # `--target`


class _JudgeRequest(TypedDict):
    mode: str  # "prepare", or "recheck" at delivery
    candidate: ArticleText


class JudgeRequest(_JudgeRequest, total=False):
    existing: list[ArticleText]  # prepare's: the blog's articles the judge needs to see
    delta: list[ArticleText]  # the recheck's: what the remote changed since


class GateRequest(TypedDict):
    path: str
    text: str
    worktree: str  # where the job's files are written, for a gate that builds the site


class _DraftAnswer(TypedDict):
    text: str


class DraftAnswer(_DraftAnswer, total=False):
    path: str | None
    leaks: Leaks


class _JudgeAnswer(TypedDict):
    decision: str  # NEW, UPDATE or SKIP; at delivery SKIP or KEEP


class JudgeAnswer(_JudgeAnswer, total=False):
    target: str | None
    reason: str | None
    similar: str | None  # the most similar other article, for a person to see
    score: float | None
    leaks: Leaks


class _GateAnswer(TypedDict):
    ok: bool


class GateAnswer(_GateAnswer, total=False):
    reason: str | None
    line: int | None
    leaks: Leaks
