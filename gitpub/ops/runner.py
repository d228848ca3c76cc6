"""The worker's pass, the one `git blogpub run`, `Publisher.run_until_idle()` and
`mcp --worker` all make: start-up repair and recovery, then pass after pass of hand-edit
hints, the review watch, the due jobs, hand-edit delivery, takedowns and the config reread.

Everything the pass changes is told as it happens, one line each, through `Runner.tell`:
a job's move from one state to another with its reason, a takedown noticed, a person's hand
edit pushed. The command line prints those lines (unless `--quiet`), so a service's journal
holds them too; the Python API returns the jobs instead."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gitpub import config, trust
from gitpub.context import Context, open_context, open_store, sibling
from gitpub.core.errors import ConfigError, GitCommandError, GitpubError
from gitpub.core.states import State
from gitpub.deliver import batch, review, withdrawn
from gitpub.ops import worker
from gitpub.ops.reconcile import repair_repository, settle_interrupted_commits
from gitpub.store import jobs, reads
from gitpub.store.db import now
from gitpub.store.jobs import Event, Job
from gitpub.sync import edits

INTERRUPTED = tuple(s for s in worker.ACTIVE if s is not State.RECEIVED)

CONCURRENCY = 4
"""Jobs a worker prepares at once unless told (`run --concurrency`): a model-backed draft
waits on its API, not on this machine, so a few overlap on any machine."""

Tell = Callable[[str], None]


def _silent(line: str) -> None:
    del line


def interrupted(ctx: Context) -> tuple[str, ...]:
    """Jobs a dead worker left mid-way (anything active but not yet started)."""
    return reads.ids_in(ctx.store, INTERRUPTED)


def recover(ctx: Context, ids: tuple[str, ...], concurrency: int = 1) -> list[Job]:
    """Start-up reconcile: register hand edits no hint announced, and finish every job that
    a dead worker left mid-way. Nothing here trusts memory: the store and git decide."""
    edits.scan(ctx)
    if not ids:
        return []
    settle_interrupted_commits(ctx, worker.owner_name())
    return worker.run_until_idle(ctx, only=ids, concurrency=concurrency)


def moves_since(ctx: Context, touched: Iterable[Job], since: str) -> list[str]:
    """One line per state change (and takedown) the store recorded for these jobs since the
    instant `since`, in the order they happened."""
    lines: list[tuple[str, int, str]] = []
    recorded = jobs.events_since(ctx.store, list(dict.fromkeys(j.job_id for j in touched)), since)
    for job_id, history in recorded.items():
        for event in history:
            line = _event_line(job_id, event)
            if line is not None:
                lines.append((event["at"], event["seq"], line))
    return [line for _, _, line in sorted(lines)]


def _event_line(job_id: str, event: Event) -> str | None:
    detail = event["detail"] if isinstance(event["detail"], dict) else {}
    if event["step"] == "withdrawn":
        return f"job {job_id}: withdrawn (its article left the published branch)"
    src, dst = event["from_state"], event["to_state"]
    if src == dst or dst is None:
        return None
    why = detail.get("reason") or detail.get("how") or detail.get("code") or event["step"]
    return f"job {job_id}: {src or 'new'} -> {dst} ({why})"


@dataclass
class Runner:
    """One worker on one repository. `tell` hears every line of what it changed."""

    path: Path
    tell: Tell = _silent
    warn: Tell = _silent
    said: set[str] = field(default_factory=set)
    fetched_at: float = 0.0
    concurrency: int = CONCURRENCY  # jobs prepared at once

    def run(self, *, until_idle: bool, interval: float) -> list[Job]:
        """Work until nothing is due (`until_idle`) or forever, a pass every `interval`
        seconds; the jobs touched, each in its last state."""
        touched: dict[str, Job] = {}
        with open_context(self.path) as ctx:
            repair_repository(ctx)
            self._warn_untrusted(ctx)
            errors: list[str] = []
            ids = interrupted(ctx)
            recovery, recovered = self._background_recovery(ctx, ids, errors)
            while True:
                # The recovering jobs are the recovery thread's while it runs; new work is ours.
                skip = frozenset(ids) if recovery.is_alive() else frozenset()
                touched.update((j.job_id, j) for j in self.one_pass(ctx, skip=skip))
                if until_idle:
                    recovery.join()
                    self._told(ctx, recovered, since="")
                    # Whatever recovery freed up (or registered) gets its pass before we leave.
                    touched.update((j.job_id, j) for j in self.one_pass(ctx))
                    for message in errors:
                        self.warn(f"git blogpub: recovery: {message}")
                    return list(touched.values())
                # On the shared store a submission (or a job come ready) ends the wait at
                # once; `interval` is the longest a pass waits, for what comes due in time.
                ctx.store.wait(interval)
                self._between_passes(ctx)

    def one_pass(self, ctx: Context, skip: frozenset[str] = frozenset()) -> list[Job]:
        """Hints → outbox, the review watch, the due jobs, hand edits, takedowns."""
        since = now()
        edits.register_hints(ctx)
        # Merges people made of review branches first: a job they settle is never pushed again.
        touched = review.watch(ctx)
        touched += worker.run_until_idle(ctx, skip=skip, concurrency=self.concurrency)
        sent = edits.deliver(ctx)
        for line in sent.pushed:
            self.tell(line)
        self._fetch_when_idle(ctx, touched)
        touched += withdrawn.notice(ctx)
        self._told(ctx, touched, since)
        return touched

    def _told(self, ctx: Context, touched: list[Job], since: str) -> None:
        for line in moves_since(ctx, touched, since):
            self.tell(line)

    def _fetch_when_idle(self, ctx: Context, touched: list[Job]) -> None:
        """A takedown (a deletion commit, a force-push) is noticed even when no job needs the
        remote: the branch is fetched every `[sync] fetch_interval` seconds of an idle worker,
        counted from the last fetch of any kind (a delivery's too)."""
        period = ctx.config.sync.fetch_interval
        last = max(self.fetched_at, ctx.repo.fetched_at)
        if touched or period <= 0 or time.monotonic() - last < period:
            return
        self.fetched_at = time.monotonic()
        if not reads.published_not_withdrawn(ctx.store):
            return
        try:
            with ctx.locks.hold("delivery"):
                batch.fetch_repairing(ctx)
        except GitCommandError as exc:
            self.warn(f"git blogpub: fetch for takedowns failed: {exc.message}")

    def _background_recovery(
        self, main: Context, ids: tuple[str, ...], errors: list[str]
    ) -> tuple[threading.Thread, list[Job]]:
        """Recovery on its own connection and thread, so a long one (a slow external step
        being adopted, a big repository scan) never delays the jobs submitted meanwhile. It
        shares the worker's throttle: `[steps] concurrency` counts its steps too."""
        recovered: list[Job] = []
        main.throttle  # noqa: B018 - made here, before two threads could each make one

        def work() -> None:
            try:
                with sibling(main) as ctx:
                    recovered.extend(recover(ctx, ids, self.concurrency))
            except GitpubError as exc:
                errors.append(exc.message)
            except Exception as exc:  # noqa: BLE001 - a thread's error must not print a traceback
                errors.append(f"{type(exc).__name__}: {exc}")

        thread = threading.Thread(target=work, name="gitpub-recovery", daemon=True)
        thread.start()
        return thread, recovered

    def _between_passes(self, ctx: Context) -> None:
        self._reopen_if_replaced(ctx)
        self._reread_config(ctx)
        self._warn_untrusted(ctx)

    def _warn_untrusted(self, ctx: Context) -> None:
        """Said once per command set: jobs that need these commands wait in REVIEW until
        `trust`."""
        here = trust.standing(ctx.config, ctx.repo.common_dir)
        if not here.ok and here.current.sha256 not in self.said:
            self.said.add(here.current.sha256)
            extra = f" ({here.problem})" if here.problem else ""
            self.warn(f"git blogpub: {trust.not_allowed_message(ctx.config.node)}{extra}")

    def _reopen_if_replaced(self, ctx: Context) -> None:
        """The state dir removed under a running worker (`rm -rf .git/blogpub`): work on the
        database new submits write to, not on the deleted one still open. Where job folders
        outlived a removed database, opening stops the worker with the one fix (it was lost)."""
        if not ctx.store.replaced():
            return
        ctx.store.close()
        ctx.store = open_store(ctx.state_dir)
        self.warn(f"git blogpub: {ctx.store.path} was removed or replaced; reopened")

    def _reread_config(self, ctx: Context) -> None:
        """A long-running worker follows the live checkout's `.blogpub.toml` pass by pass, as a
        new worker process would: after a fast-forward brought a changed file, the next pass
        works (and checks trust) with it. A file that no longer loads leaves the one in use."""
        try:
            ctx.config = config.load(ctx.repo.root)
        except ConfigError as exc:
            if exc.message not in self.said:
                self.said.add(exc.message)
                self.warn(f"git blogpub: keeping the config in use: {exc.message}")


def run(
    path: Path,
    *,
    until_idle: bool = True,
    interval: float = 30.0,
    tell: Tell = _silent,
    warn: Tell = _silent,
    concurrency: int = CONCURRENCY,
) -> list[Job]:
    """The worker, as every door runs it; up to `concurrency` jobs are prepared at once."""
    runner = Runner(path, tell=tell, warn=warn, concurrency=concurrency)
    return runner.run(until_idle=until_idle, interval=interval)
