"""`git blogpub run`, `relay` and `reconcile`: the worker loop and its one-shot parts."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from gitpub import config, trust
from gitpub.cli.commands.output import say, warn
from gitpub.context import Context, open_context, open_store
from gitpub.core.errors import ConfigError, GitpubError, InputError
from gitpub.core.states import State
from gitpub.deliver import review, withdrawn
from gitpub.ops import worker
from gitpub.ops.reconcile import repair_repository, settle_interrupted_commits
from gitpub.store import jobs, reads
from gitpub.store.db import now as store_now
from gitpub.store.jobs import Job
from gitpub.sync import edits as external

INTERRUPTED = tuple(s for s in worker.ACTIVE if s is not State.RECEIVED)


def _summary(touched: list[Job]) -> None:
    for job in touched:
        extra = f" {job.failure_code}" if job.failure_code else ""
        say(f"{job.job_id} {job.state.value}{extra}")


def run_once(ctx: Context, skip: frozenset[str] = frozenset()) -> list[Job]:
    """One pass of the worker: hints → outbox, jobs, then external_sync delivery."""
    external.register_hints(ctx)
    # Merges people made of review branches first: a job they settle is never pushed again.
    touched = review.watch(ctx)
    touched += worker.run_until_idle(ctx, skip=skip)
    external.sweep(ctx)
    withdrawn.notice(ctx)
    return touched


def interrupted(ctx: Context) -> tuple[str, ...]:
    """Jobs a dead worker left mid-way (anything active but not yet started)."""
    return reads.ids_in(ctx.store, INTERRUPTED)


def recover(ctx: Context, ids: tuple[str, ...]) -> list[Job]:
    """Start-up reconcile: register hand edits no hint announced, and finish every job that
    a dead worker left mid-way. Nothing here trusts memory: the store and git decide."""
    external.scan(ctx)
    if not ids:
        return []
    settle_interrupted_commits(ctx, worker.owner_name())
    return worker.run_until_idle(ctx, only=ids)


def _background_recovery(path: Path, ids: tuple[str, ...], errors: list[str]) -> threading.Thread:
    """Recovery on its own connection and thread, so a long one (a slow external step being
    adopted, a big repository scan) never delays the jobs submitted meanwhile."""

    def work() -> None:
        try:
            with open_context(path) as ctx:
                recover(ctx, ids)
        except GitpubError as exc:
            errors.append(exc.message)
        except Exception as exc:  # noqa: BLE001 - a thread's error must not print a traceback
            errors.append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=work, name="gitpub-recovery", daemon=True)
    thread.start()
    return thread


def _warn_untrusted(ctx: Context, said: set[str]) -> None:
    """Said once per command set: jobs that need these commands wait in REVIEW until `trust`."""
    here = trust.standing(ctx.config, ctx.repo.common_dir)
    if not here.ok and here.current.sha256 not in said:
        said.add(here.current.sha256)
        extra = f" ({here.problem})" if here.problem else ""
        warn(f"git blogpub: {trust.not_allowed_message(ctx.config.node)}{extra}")


def _reopen_if_replaced(ctx: Context) -> None:
    """The state dir removed under a running worker (`rm -rf .git/blogpub`): work on the
    database new submits write to, not on the deleted one still open. Where job folders
    outlived a removed database, opening stops the worker with the one fix (it was lost)."""
    if not ctx.store.replaced():
        return
    ctx.store.close()
    ctx.store = open_store(ctx.state_dir)
    warn(f"git blogpub: {ctx.store.path} was removed or replaced; reopened")


def _reread_config(ctx: Context, said: set[str]) -> None:
    """A long-running worker follows the live checkout's `.blogpub.toml` pass by pass, as a
    new worker process would: after a fast-forward brought a changed file, the next pass
    works (and checks trust) with it. A file that no longer loads leaves the one in use."""
    try:
        ctx.config = config.load(ctx.repo.root)
    except ConfigError as exc:
        if exc.message not in said:
            said.add(exc.message)
            warn(f"git blogpub: keeping the config in use: {exc.message}")


def main(path: Path, *, until_idle: bool, interval: float) -> None:
    with open_context(path) as ctx:
        repair_repository(ctx)
        said: set[str] = set()
        _warn_untrusted(ctx, said)
        errors: list[str] = []
        ids = interrupted(ctx)
        recovery = _background_recovery(path, ids, errors)
        while True:
            # The recovering jobs are the recovery thread's while it runs; new work is ours.
            _summary(run_once(ctx, skip=frozenset(ids) if recovery.is_alive() else frozenset()))
            if until_idle:
                recovery.join()
                # Whatever recovery freed up (or registered) gets its pass before we leave.
                _summary(run_once(ctx))
                for message in errors:
                    warn(f"git blogpub: recovery: {message}")
                return
            time.sleep(interval)
            _reopen_if_replaced(ctx)
            _reread_config(ctx, said)
            _warn_untrusted(ctx, said)


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
        advanced = {j.job_id: j for j in recover(ctx, interrupted(ctx))}
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
