"""How prepare records what it did: every finished step's answer stored in the job folder and
its hash in the event history, so that a step that finished is never run again for the same
job, and built-in steps' records wait to commit with the next durable one."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

from gitpub import intake, scan
from gitpub.config import StepSpec
from gitpub.context import Context
from gitpub.core import userdirs
from gitpub.core.files import write_atomic
from gitpub.core.jsonvalue import JSONObject
from gitpub.core.states import State
from gitpub.prepare import manifest, steps
from gitpub.prepare.answers import RawAnswer, Request
from gitpub.prepare.landing import Landing
from gitpub.prepare.protocol import StepFailed
from gitpub.scan.sanitize import sanitize_obj
from gitpub.store import jobs
from gitpub.store.jobs import Detail, Job, JobUpdate, Move
from gitpub.trust import Gate

A = TypeVar("A", bound=RawAnswer)
"""A step's answer, of the type its checked contract gives it (`answers`)."""


def answer_bytes(answer: RawAnswer) -> bytes:
    """A step answer as its file holds it: the bytes its recorded hash is taken of."""
    return json.dumps(answer, sort_keys=True, ensure_ascii=False).encode("utf-8")


class Recorder:
    """A job's prepare, as it is recorded: each step's answer checkpointed in the job folder
    with its hash in the event history, and the records of in-process steps held back until
    the next durable one. `Preparer` runs the steps on top of it."""

    def __init__(self, ctx: Context, job: Job, heartbeat: Callable[[Job], Job]) -> None:
        self.ctx = ctx
        self.job = job
        self._heartbeat = heartbeat
        # The job's events before this prepare: a person's answers (allowed findings, a
        # retry after a REVIEW) are among them, and its steps that already finished.
        self.history = jobs.events(ctx.store, job.job_id)
        self.done = jobs.steps_done(self.history)
        self.dir = ctx.job_dir(job.job_id)
        # Findings a person allowed by fingerprint: kept as written in the article and in
        # the job's own stored answers; everything else a step says is sanitized.
        self.allow = intake.allowed_in(ctx, self.history)
        # Records of in-process steps, waiting for the next durable one (see `note`).
        self.waiting: list[tuple[Move, Path | None, bytes]] = []

    def beat(self) -> None:
        self.job = self._heartbeat(self.job)
        for move, _, _ in self.waiting:  # the row does not hold them yet
            if move.values:
                self.job = self.job._replace(**move.values)

    def _step_file(self, name: str) -> Path:
        return self.dir / "steps" / f"{name}.json"

    def checkpoint(self, name: str, compute: Callable[[], A], durable: bool = True) -> A:
        """The step's answer: the recorded one when the step already finished, else computed
        now, stored, and recorded as an event carrying its hash (at once when `durable`,
        else with the next durable record: see `note`)."""
        path = self._step_file(name)
        if name in self.done and path.is_file():
            data = path.read_bytes()
            if manifest.sha256_bytes(data) == self.done[name].get("sha256"):
                stored: A = json.loads(data)
                return stored
        if durable:
            # An external command may run for minutes: the job is visibly PREPARING (and a
            # worker that dies meanwhile leaves it to recovery) before it starts.
            self.flush()
        try:
            computed = compute()
        except StepFailed:
            # Only successful answers are kept: a spooled answer that failed its contract
            # (an exit 3, a text that is not JSON, a field of the wrong type) must not answer
            # again once the operator has fixed the step and asked for a retry.
            self._forget_run(name)
            raise
        # Whatever a step said is persisted only after the sanitizer: a draft that leaked a
        # token becomes a redaction marker. What leaked is kept as kind, line and
        # fingerprint, so the REVIEW can name it and a person can allow it.
        raw = computed
        # Sanitizing keeps the answer's shape: it is still the step's own type.
        answer = cast(A, sanitize_obj(cast(JSONObject, raw), self.allow))
        # An answer adopted from the shared store was sanitized where it landed; what it
        # leaked came with it.
        leaks = scan.leaks(raw, self.allow) or list(getattr(raw, "leaks", []))
        if leaks:
            answer = cast(A, {**answer, "leaks": leaks})
        self.beat()
        data = answer_bytes(answer)
        digest = manifest.sha256_bytes(data)
        summary = {k: v for k, v in answer.items() if k not in ("text", "files")}
        self.note(f"step:{name}", {"sha256": digest, **summary}, durable=durable, file=(path, data))
        self.done[name] = {"sha256": digest}
        # Recorded: nothing to adopt. Only an external step's run is ever landed in the
        # store; a built-in one leaves nothing there to clear (a statement saved per step).
        self._forget_run(name, landed=durable)
        return answer

    def call(
        self, kind: str, spec: StepSpec, request: Request, spool: str | None = None
    ) -> RawAnswer:
        """Run step `kind`; `spool` names its spool when one step runs more than once (the
        scan step, once per text file)."""
        return steps.call(
            kind,
            spec,
            request,
            self.ctx.config.steps,
            gate=Gate(self.ctx.config, self.ctx.repo.common_dir),
            cwd=self.ctx.repo.root,
            heartbeat=self.beat,
            beat_every=self.ctx.config.retry.lease_seconds / 8,
            spool=self._spool(spool or kind),
            allow=self.allow,
            landing=self._landing(spool or kind),
            memos=self.ctx.memos,
            throttle=self.ctx.throttle,
        )

    def _spool(self, kind: str) -> Path:
        """Where a running step's files live. On the shared store, outside the clone: a
        worker's clone may be deleted under a step that runs on to land its answer."""
        if self.ctx.store.shared:
            return userdirs.cache_dir() / "spool" / self.job.job_id / f"{kind}.run"
        return self.dir / "steps" / f"{kind}.run"

    def _landing(self, kind: str) -> Landing | None:
        url = self.ctx.config.store_url
        if not self.ctx.store.shared or url is None:
            return None
        return Landing(self.ctx.store, url, self.job.job_id, kind, self.allow, self.job.lease_token)

    def _forget_run(self, kind: str, *, landed: bool = True) -> None:
        shutil.rmtree(self._spool(kind), ignore_errors=True)
        landing = self._landing(kind) if landed else None
        if landing is not None:
            landing.clear()

    def note(
        self,
        step: str,
        detail: Detail,
        values: JobUpdate | None = None,
        *,
        durable: bool,
        file: tuple[Path, bytes] | None = None,
        to: State | None = None,
    ) -> None:
        """Record a step of prepare, with its stored answer `file` when it has one.

        A durable record commits at once, together with every record waiting before it, in
        one transaction. The others wait: the built-in steps are in-process, cheap and
        deterministic, so a crash that loses them only runs them again, while one durable
        commit per step would be most of a small job's cost. An external step (the draft
        above all) is always durable: it is never paid for twice."""
        values = values or {}
        place, data = file if file else (None, b"")
        self.waiting.append((Move(self.job, to, step, detail or None, values), place, data))
        if values:
            self.job = self.job._replace(**values)
        if durable:
            self.flush()

    def flush(self) -> None:
        """Commit the waiting records (their answer files first) in one transaction."""
        if not self.waiting:
            return
        durable = self.ctx.store.folders_durable
        for move, place, data in self.waiting:
            if place is not None:
                # Only the durable ones are synced: a lost or torn answer of a built-in step
                # fails its hash check and the step runs again.
                write_atomic(place, data, sync=durable and move is self.waiting[-1][0])
        moves = [move._replace(job=self.job) for move, _, _ in self.waiting]
        self.waiting = []
        self.job = jobs.transition_all(self.ctx.store, moves)[self.job.job_id]


def stored_text(path: Path) -> str:
    """A stored text with its line endings, BOM and final newline as they were written."""
    return path.read_bytes().decode("utf-8")
