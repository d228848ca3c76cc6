"""Dispatch a configured step to its built-in or external implementation, and check answers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

from gitpub.config import StepsConfig, StepSpec
from gitpub.context import memo
from gitpub.core.throttle import Throttle
from gitpub.prepare import builtins
from gitpub.prepare.answers import (
    DraftAnswer,
    DraftRequest,
    GateAnswer,
    GateRequest,
    JudgeAnswer,
    JudgeRequest,
    RawAnswer,
    Request,
)
from gitpub.prepare.landing import Landing
from gitpub.prepare.protocol import StepFailed, expect_fields, run_external
from gitpub.trust import Gate

_GATE_FIELDS: dict[str, type | tuple[type, ...]] = {"ok": bool, "reason": str, "line": int}
_DRAFT_FIELDS: dict[str, type | tuple[type, ...]] = {"text": str, "path": str}
_JUDGE_FIELDS: dict[str, type | tuple[type, ...]] = {
    "decision": str,
    "target": str,
    "reason": str,
    "similar": str,  # the most similar other article, recorded for a person to see
    "score": (int, float),
}


def _builtin(
    name: str, kind: str, cfg: StepsConfig, allow: Iterable[str], memos: dict[str, object]
) -> Callable[[Request], RawAnswer]:
    # Each built-in reads the request of the step kind it is made for; the config names it
    # for that kind (`builtin:similarity` judges, `builtin:mdx` validates).
    table: dict[str, Callable[[Request], RawAnswer]] = {
        "passthrough": lambda r: builtins.passthrough(cast(DraftRequest, r)),
        "similarity": lambda r: builtins.judge(
            cast(JudgeRequest, r),
            cfg.similarity_skip,
            cfg.similarity_update,
            cfg.similar,
            memo(memos, builtins.Grams),
        ),
        "secrets": lambda r: builtins.secrets(cast(GateRequest, r), allow),
        "mdx": lambda r: builtins.mdx(cast(GateRequest, r)),
    }
    fn = table.get(name)
    if fn is None:
        raise StepFailed(f"{kind} step: unknown built-in {name!r} (known: {', '.join(table)})")
    return fn


def call(
    kind: str,
    spec: StepSpec,
    request: Request,
    cfg: StepsConfig,
    *,
    gate: Gate,
    cwd: Path,
    heartbeat: Callable[[], None] | None = None,
    beat_every: float = 30.0,
    spool: Path | None = None,
    allow: Iterable[str] = (),
    landing: Landing | None = None,
    memos: dict[str, object] | None = None,
    throttle: Throttle | None = None,
) -> RawAnswer:
    """`allow` (fingerprints a person allowed) reaches the built-in secrets gate only: the
    step protocol of external commands stays `{"path", "text"}`. `memos`: the Context's, where
    built-in steps keep what outlives one job (the similarity judge's 3-grams). `throttle`:
    the worker's, holding external steps to `[steps] concurrency` and `rate`."""
    if isinstance(spec, str):
        name = spec.removeprefix("builtin:")
        return _builtin(name, kind, cfg, allow, {} if memos is None else memos)(request)
    # Before anything starts (no spool, no checkpoint): a refused step leaves nothing that
    # could answer for it once the node allows it and the job is retried.
    gate.require(kind, spec)
    throttle = throttle or Throttle()
    with throttle.place(cfg.concurrency, heartbeat, beat_every):
        return run_external(
            kind,
            spec,
            request,
            cwd=cwd,
            timeout=cfg.timeout,
            heartbeat=heartbeat,
            beat_every=beat_every,
            spool=spool,
            landing=landing,
            # Only a step that really starts waits for the rate: adopting the answer of one
            # a dead worker started costs the API nothing.
            starting=lambda: throttle.start(cfg.start_spacing, heartbeat, beat_every),
        )


def check_draft(answer: RawAnswer) -> DraftAnswer:
    expect_fields("draft", answer, _DRAFT_FIELDS, ["text"])
    if not str(answer["text"]).strip():
        raise StepFailed("draft step answered an empty text")
    return cast(DraftAnswer, answer)  # its fields and their types, checked


def check_judge(answer: RawAnswer, mode: str) -> JudgeAnswer:
    expect_fields("judge" if mode == "prepare" else "recheck", answer, _JUDGE_FIELDS, ["decision"])
    decision = answer["decision"]
    allowed = ("NEW", "UPDATE", "SKIP") if mode == "prepare" else ("SKIP", "KEEP")
    if decision not in allowed:
        # Anything outside the contract is "cannot decide": fail closed.
        raise StepFailed(
            f"{mode} judge answered {decision!r}, expected one of {', '.join(allowed)}"
        )
    if mode == "prepare" and decision == "UPDATE" and not answer.get("target"):
        raise StepFailed("judge answered UPDATE without a target")
    if mode == "recheck" and "target" in answer:
        raise StepFailed("recheck judge answered a target; it may only SKIP or KEEP")
    return cast(JudgeAnswer, answer)  # its fields and their types, checked


def check_gate(kind: str, answer: RawAnswer) -> GateAnswer:
    expect_fields(kind, answer, _GATE_FIELDS, ["ok"])
    return cast(GateAnswer, answer)  # its fields and their types, checked


def external(spec: StepSpec) -> bool:
    """A step that runs a command (not `builtin:…`): its answer is recorded durably at once."""
    return not (isinstance(spec, str) and spec.startswith("builtin:"))
