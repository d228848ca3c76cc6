"""`git blogpub run`, `relay` and `reconcile`: the worker loop and its one-shot parts."""

from __future__ import annotations

import time
from pathlib import Path

from gitpub import external, jobs, worker
from gitpub.commands.output import say
from gitpub.context import Context, open_context
from gitpub.jobs import Job


def _summary(touched: list[Job]) -> None:
    for job in touched:
        extra = f" {job.failure_code}" if job.failure_code else ""
        say(f"{job.job_id} {job.state.value}{extra}")


def run_once(ctx: Context) -> list[Job]:
    """One pass of the worker: hints → outbox, jobs, then external_sync delivery."""
    external.register_hints(ctx)
    touched = worker.run_until_idle(ctx)
    external.sweep(ctx)
    return touched


def main(path: Path, *, until_idle: bool, interval: float) -> None:
    with open_context(path) as ctx:
        external.scan(ctx)  # start-up reconcile: losing every hint loses nothing
        while True:
            _summary(run_once(ctx))
            if until_idle:
                return
            time.sleep(interval)


def relay(path: Path, *, job_ids: tuple[str, ...]) -> None:
    with open_context(path) as ctx:
        ids = tuple(jobs.require(ctx.store, j).job_id for j in job_ids)
        _summary(worker.run_until_idle(ctx, only=ids))


def reconcile(path: Path) -> None:
    with open_context(path) as ctx:
        found = external.scan(ctx)
        touched = worker.run_until_idle(ctx)
        _summary(touched)
        say(f"reconciled: {len(touched)} job(s) advanced, {found} external change(s) registered")
