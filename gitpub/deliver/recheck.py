"""Delivery-time dedup recheck of what others published since the job's snapshot.

Only the NEW part of the remote's article delta is judged: `last_recheck_head` remembers how
far the job has already looked, so k rebases cost k judge calls, not k² (re-judging the whole
accumulated delta on every rebase is the quadratic blow-up the write-up warns about)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from gitpub.context import Context
from gitpub.core.ids import Oid, Sha256
from gitpub.prepare import manifest, steps
from gitpub.prepare.answers import JudgeAnswer
from gitpub.prepare.protocol import StepFailed
from gitpub.store import leases
from gitpub.store.jobs import Job
from gitpub.trust import Gate, NotAllowed


@dataclass(frozen=True)
class Delta:
    tip: Oid
    fingerprint: Sha256
    texts: dict[str, str]  # the new part: path → text at tip (deleted articles have none)


def article_changes(ctx: Context, old: str, new: str) -> dict[str, bytes | None]:
    """Articles (content folders, article suffixes) that differ between two commits."""
    pub = ctx.config.publish
    folders = tuple(c.rstrip("/") + "/" for c in pub.content)
    return {
        p: ctx.repo.blob_at(new, p)
        for p in ctx.repo.changed_paths(old, new)
        if p.startswith(folders) and p.endswith(pub.suffixes)
    }


def fingerprint(changes: dict[str, bytes | None]) -> Sha256:
    rows = [
        [p, manifest.sha256_bytes(b) if b is not None else None] for p, b in sorted(changes.items())
    ]
    return manifest.sha256_bytes(json.dumps(rows, separators=(",", ":")).encode("utf-8"))


def pending(ctx: Context, job: Job, tip: Oid) -> Delta | None:
    """The part of `base_commit..tip` that still needs a recheck, or None when nothing does."""
    assert job.base_commit
    changes = article_changes(ctx, job.base_commit, tip)
    if not changes:
        return None  # only fonts, config or other files moved: rebase and push, no judge
    fp = fingerprint(changes)
    if fp == job.last_recheck_delta_sha:
        return None  # exactly this delta was already judged KEEP
    seen = job.last_recheck_head
    if seen and seen != job.base_commit and ctx.repo.is_ancestor(seen, tip):
        changes = article_changes(ctx, seen, tip)
    texts = {p: b.decode("utf-8", "replace") for p, b in changes.items() if b is not None}
    if not texts:
        return None  # deletions only: nothing the candidate could duplicate
    return Delta(tip, fp, texts)


def spool_dir(ctx: Context, job: Job, delta: Delta) -> Path:
    """Where the judge's answer for this remote tip is spooled: a worker that dies while the
    judge runs leaves it to be adopted, like a prepare step, instead of asked again."""
    return ctx.job_dir(job.job_id) / "steps" / f"recheck-{delta.tip[:16]}.run"


def judge(ctx: Context, job: Job, delta: Delta, candidate: str) -> JudgeAnswer:
    """Ask the recheck judge; strictly SKIP or KEEP, anything else raises StepFailed."""
    request = {
        "mode": "recheck",
        "candidate": {"path": job.target_path, "text": candidate},
        "delta": [{"path": p, "text": t} for p, t in sorted(delta.texts.items())],
    }
    lease = ctx.config.retry.lease_seconds
    holder = [job]

    def beat() -> None:
        holder[0] = leases.renew(ctx.store, holder[0], lease)

    answer = steps.call(
        "recheck",
        ctx.config.steps.recheck,
        request,
        ctx.config.steps,
        gate=Gate(ctx.config, ctx.repo.common_dir),
        cwd=ctx.repo.root,
        heartbeat=beat,
        beat_every=lease / 8,
        spool=spool_dir(ctx, job, delta),
        memos=ctx.memos,
        throttle=ctx.throttle,
    )
    return steps.check_judge(answer, "recheck")


__all__ = ["Delta", "NotAllowed", "StepFailed", "judge", "pending"]
