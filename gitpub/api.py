"""The Python API: hand a publication over durably and return at once.

    from gitpub import Publisher
    job = Publisher("path/to/blog").submit(text, key=request_id)

Once `submit` returns, the job is on disk: a crash of the caller can no longer lose it, and
the same key always returns the same job. Delivery is the worker's business (`git blogpub
run` as a service, or `Publisher.kick()` to start one in the background)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitpub import intake
from gitpub.context import Context, open_context
from gitpub.core.errors import InputError, SecretsFound
from gitpub.ops import runner
from gitpub.scan.sanitize import sanitize_name
from gitpub.store import jobs
from gitpub.store.jobs import PublicJob

__all__ = ["Publisher", "SecretsFound", "Submitted"]


@dataclass(frozen=True)
class Submitted:
    job_id: str
    state: str
    created: bool


class Publisher:
    """One blog repository. Cheap to create; every call opens and closes its own store
    connection, so one Publisher may be shared by threads and event loops."""

    def __init__(self, repo: str | os.PathLike[str] = ".") -> None:
        self.path = Path(repo)

    def _open(self) -> Context:
        return open_context(self.path)

    def submit(
        self,
        source: str,
        *,
        key: str,
        target: str | None = None,
        topic: str | None = None,
        allow: Sequence[str] = (),
        assets: Mapping[str, bytes] | None = None,
        at: str | None = None,
        review: bool = False,
    ) -> Submitted:
        """Register the publication; durable when this returns. Same key and source → same
        job; the same key with another source (or target) raises `KeyReused`.

        A source holding a secret raises `SecretsFound` (its `findings` carry kind, line and
        fingerprint) before anything is recorded; pass a fingerprint in `allow` to publish
        that finding as written. `assets` (path → bytes, the path relative to the article's
        folder: `a.png`, `images/a.png`) go beside the article, in the same commit; a text
        asset is held to the same rule. `at` (ISO 8601 with an offset, or `+N{s,m,h,d}`)
        schedules it: the job waits in SCHEDULED until then. `review` pushes it to a review
        branch; it is published once a person merges that branch."""
        files = dict(assets or {})
        shown = sanitize_name(key)  # a key may hold a credential; a refusal never repeats it
        labels = {rel: f"asset {rel!r} for key {shown!r}" for rel in files}
        request = intake.Request(
            key,
            source,
            target,
            topic,
            tuple(allow),
            files,
            f"source for key {shown!r}",
            labels,
            at,
            review,
        )
        job, created = intake.accept(self.path, request)
        return Submitted(job.job_id, job.state.value, created)

    async def asubmit(
        self,
        source: str,
        *,
        key: str,
        target: str | None = None,
        topic: str | None = None,
        allow: Sequence[str] = (),
        assets: Mapping[str, bytes] | None = None,
        at: str | None = None,
        review: bool = False,
    ) -> Submitted:
        """`submit` without blocking the event loop (a few milliseconds of SQLite and fsync)."""
        return await asyncio.to_thread(
            self.submit,
            source,
            key=key,
            target=target,
            topic=topic,
            allow=allow,
            assets=assets,
            at=at,
            review=review,
        )

    def status(self, job_id: str) -> PublicJob:
        with self._open() as ctx:
            return jobs.require(ctx.store, job_id).public()

    def run_until_idle(self, *, concurrency: int = runner.CONCURRENCY) -> list[PublicJob]:
        """Work in this process until nothing is due: the pass `git blogpub run --until-idle`
        makes (recovery, due jobs, the review watch, hand edits, takedowns); the jobs it
        touched, each in its last state. Up to `concurrency` jobs are prepared at once (`run
        --concurrency`); 1 prepares them one after another."""
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise InputError(f"concurrency must be a whole number from 1, got {concurrency!r}")
        return [j.public() for j in runner.run(self.path, until_idle=True, concurrency=concurrency)]

    def kick(self) -> None:
        """Start `git blogpub run --until-idle` as a detached process and return at once.

        For callers with no worker service: the process outlives the caller, and if it dies
        the next worker (or the next kick) recovers everything from disk."""
        subprocess.Popen(
            [sys.executable, "-m", "gitpub", "-C", str(self.path), "run", "--until-idle"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
