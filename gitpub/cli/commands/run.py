"""`git blogpub run`, `relay` and `reconcile`: the worker loop and its one-shot parts."""

from __future__ import annotations

import contextlib
from pathlib import Path

from gitpub.cli.commands.output import say, warn
from gitpub.context import open_context
from gitpub.core.errors import InputError
from gitpub.core.states import State
from gitpub.ops import runner, worker
from gitpub.ops.reconcile import repair_repository
from gitpub.store import jobs
from gitpub.store.db import now as store_now
from gitpub.store.jobs import Job


def _summary(touched: list[Job]) -> None:
    for job in touched:
        extra = f" {job.failure_code}" if job.failure_code else ""
        say(f"{job.job_id} {job.state.value}{extra}")


def main(
    path: Path,
    *,
    until_idle: bool,
    interval: float,
    concurrency: int = runner.CONCURRENCY,
    quiet: bool = False,
    metrics: tuple[str, int] | None = None,
) -> None:
    """The worker: every state change it makes is one line on stdout unless `quiet`; with
    `metrics`, `/metrics` is served on that address while it runs; up to `concurrency` jobs
    are prepared at once."""
    with contextlib.ExitStack() as stack:
        if metrics is not None:
            from gitpub.ui import metrics as exposition

            with open_context(path) as ctx:
                handle = exposition.serve(ctx, f"{metrics[0]}:{metrics[1]}")
            stack.callback(handle.close)
        runner.run(
            path,
            until_idle=until_idle,
            interval=interval,
            concurrency=concurrency,
            tell=(lambda line: None) if quiet else say,
            warn=warn,
        )


def _waits_for_a_person(job: Job) -> str | None:
    """What a person does next with a job relay cannot move, or None when relay can."""
    short = job.job_id[:8]
    if job.state is State.FAILED and job.next_retry_at:
        return None  # delivery exhausted: relay probes it now
    if job.state is State.CONFLICT:
        return (
            f"job {short} is CONFLICT: relay cannot deliver it; see `git blogpub show {short}`, "
            f"then `git blogpub resolve {short} --continue` once the article is fixed on "
            f"branch blogpub/job/{job.job_id}, or `git blogpub retry {short}` / "
            f"`resolve {short} --abandon`"
        )
    if job.state in (State.REVIEW, State.FAILED):
        return (
            f"job {short} is {job.state.value}: relay cannot deliver it; see "
            f"`git blogpub show {short}`, fix the cause, then `git blogpub retry {short}` "
            f"(or `git blogpub resolve {short} --abandon`)"
        )
    return None


def relay(path: Path, *, job_ids: tuple[str, ...]) -> None:
    with open_context(path) as ctx:
        named = [jobs.require(ctx.store, j) for j in job_ids]
        stuck = [why for why in map(_waits_for_a_person, named) if why]
        for job in named:
            if job.state in (State.RETRY_WAIT, State.FAILED) and job.next_retry_at:
                # Named by a person: deliver (or probe) now instead of at its time. The
                # retry budget is untouched.
                jobs.record(ctx.store, job, "relay:now", next_retry_at=store_now())
            elif job.state in (State.PUBLISHED, State.SKIPPED):
                say(f"{job.job_id} {job.state.value} (nothing to deliver)")
        _summary(worker.run_until_idle(ctx, only=tuple(j.job_id for j in named)))
        if stuck:
            raise InputError("; ".join(stuck))


def reconcile(path: Path, *, rebuild: bool = False) -> None:
    if rebuild:
        _rebuild(path)
    with open_context(path) as ctx:
        repair_repository(ctx)
        advanced = {j.job_id: j for j in runner.recover(ctx, runner.interrupted(ctx))}
        advanced.update((j.job_id, j) for j in worker.run_until_idle(ctx))
        _summary(list(advanced.values()))
        say(f"reconciled: {len(advanced)} job(s) advanced")


def _rebuild(path: Path) -> None:
    from gitpub.ops import rebuild

    done = rebuild.rebuild(path)
    for name in done.moved_aside:
        say(f"kept the lost database as {name}")
    say(done.remote)
    for job_id, state in done.states.items():
        say(f"{job_id} rebuilt {state}")
    for line in done.left:
        say(line)
    say(f"rebuilt: {len(done.states)} job(s) from their folders")
