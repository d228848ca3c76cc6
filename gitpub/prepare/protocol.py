"""The step protocol: one JSON object in on stdin, one JSON object out on stdout, in time.

Anything else — a non-zero exit, a timeout, output that is not JSON, a field outside the
contract — is a failed step, and a failed step is REVIEW: gitpub fails closed."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gitpub.errors import GitpubError
from gitpub.sanitize import sanitize


class StepFailed(GitpubError):
    """A step did not produce an answer inside its contract; the job goes to REVIEW."""


def run_external(
    name: str,
    argv: Sequence[str],
    request: Mapping[str, Any],
    *,
    cwd: Path,
    timeout: float,
    heartbeat: Callable[[], None] | None = None,
    beat_every: float = 30.0,
) -> dict[str, Any]:
    """Run one external step and return its JSON object answer, or raise StepFailed."""
    payload = json.dumps(request, ensure_ascii=False).encode("utf-8")
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise StepFailed(f"{name} step {argv[0]!r} could not start: {exc.strerror}") from None
    deadline = time.monotonic() + timeout
    data: bytes | None = payload
    while True:
        wait = max(0.0, min(beat_every, deadline - time.monotonic()))
        try:
            out, err = proc.communicate(input=data, timeout=wait)
            break
        except subprocess.TimeoutExpired:
            data = None  # already sent; communicate keeps the pipe state
            if time.monotonic() >= deadline:
                proc.kill()
                proc.communicate()
                raise StepFailed(f"{name} step timed out after {timeout:g}s") from None
            if heartbeat is not None:
                heartbeat()
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no stderr"]
        raise StepFailed(f"{name} step exited {proc.returncode}: {sanitize(tail[0])[:300]}")
    try:
        answer = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise StepFailed(f"{name} step answered something that is not JSON") from None
    if not isinstance(answer, dict):
        raise StepFailed(f"{name} step answered JSON that is not an object")
    return answer


def expect_fields(
    name: str,
    answer: Mapping[str, Any],
    allowed: Mapping[str, type | tuple[type, ...]],
    required: Sequence[str],
) -> None:
    """Enforce the answer contract: no unknown fields, required present, types right."""
    for key in answer:
        if key not in allowed:
            raise StepFailed(f"{name} step answered unknown field {key!r}")
    for key in required:
        if key not in answer:
            raise StepFailed(f"{name} step answer lacks {key!r}")
    for key, value in answer.items():
        if value is not None and not isinstance(value, allowed[key]):
            raise StepFailed(f"{name} step field {key!r} has the wrong type")
