"""The worker: claim due jobs and drive each through its states until it waits or ends."""

from __future__ import annotations

import os
import socket
import sys
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from gitpub import prepare
from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import GitpubError
from gitpub.core.states import State
from gitpub.deliver import commit, faults, relay
from gitpub.ops import reconcile
from gitpub.scan.sanitize import sanitize
from gitpub.store import jobs, leases, reads
from gitpub.store.db import now
from gitpub.store.errors import StoreError
from gitpub.store.jobs import Job, LeaseLost

if TYPE_CHECKING:
    from concurrent.futures import Future

    from gitpub.ops.crew import Crew

ACTIVE = (
    State.RECEIVED,
    State.PREPARING,
    State.READY_TO_COMMIT,
    State.LOCAL_COMMITTING,
    State.LOCAL_COMMITTED,
    State.PUSHING,
    State.RECHECK_CANDIDATES,
    State.RECOVERING,
)


def owner_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def due_job_ids(ctx: Context, only: tuple[str, ...] = ()) -> list[str]:
    """Jobs with work to do now and no live lease: active ones, retries whose time has come,
    and exhausted ones whose delivery probe is due."""
    stamp = now()
    ids = reads.due(ctx.store, ACTIVE, stamp)
    # Plus jobs whose lease is held by a dead local process (a crash kept it).
    held = reads.leased(ctx.store, ACTIVE, stamp)
    ids += [job_id for job_id, owner in held if leases.lease_holder_dead(owner)]
    return [i for i in ids if not only or i in only]


COMMITTABLE = (State.READY_TO_COMMIT, State.LOCAL_COMMITTING)


def advance(ctx: Context, job_id: str, owner: str, turn: prepare.Turn | None = None) -> Job | None:
    """Claim the job and move it as far as it goes on its own: prepared (or rechecked), not
    yet committed. None when another worker has it. The caller holds the lease of the job
    returned: it releases it, or hands the job on to the round's commit and delivery
    (`_Round`). `turn`: see `prepare.prepare`."""
    lease = ctx.config.retry.lease_seconds
    job = leases.claim(ctx.store, job_id, owner, lease)
    if job is None:
        return None  # lost the claim race: normal concurrency, not an error
    try:
        return _drive(ctx, job, lambda j: leases.checkpoint(ctx.store, j, lease), turn)
    except LeaseLost:
        return None  # our lease was taken: stop here, without side effects
    except BaseException:
        _release(ctx, job)
        raise


def _release(ctx: Context, job: Job) -> None:
    current = jobs.get(ctx.store, job.job_id)
    if current is not None and current.lease_token == job.lease_token:
        leases.release(ctx.store, current)


def _drive(
    ctx: Context, job: Job, renew: Callable[[Job], Job], turn: prepare.Turn | None = None
) -> Job:
    """Prepare and recheck: everything up to the commit and delivery, which the jobs of a
    round share (`_Round.flush`)."""
    if job.state in (State.LOCAL_COMMITTING, State.RECOVERING):
        # Found mid-commit with no live lease: the process that was committing died.
        job = reconcile.recover_local_commit(ctx, job)
    while True:
        job = renew(job)  # a checkpoint: a stolen lease stops us here
        state = job.state
        if state is State.SCHEDULED:
            # Only claimed once due (store.reads.due); from here on it is any received job.
            job = jobs.transition(ctx.store, job, State.RECEIVED, "schedule:due", {"at": now()})
            crash.point("after_schedule_due")
        elif state in (State.RECEIVED, State.PREPARING):
            job = prepare.prepare(ctx, job, renew, turn)
        elif state is State.RECHECK_CANDIDATES:
            job = relay.resume_recheck(ctx, job)
        else:
            return job


PREPARED = (State.SCHEDULED, State.RECEIVED, State.PREPARING)
"""The states a crew's thread takes a job in: its prepare is what overlaps (`crew`)."""


class _Round:
    """One pass over the due jobs: each is prepared in turn (with a crew, up to its size at
    once), then those ready are committed together and delivered together, as one batch."""

    def __init__(self, ctx: Context, owner: str, deliver: bool, crew: Crew | None = None) -> None:
        self.ctx, self.owner, self.deliver, self.crew = ctx, owner, deliver, crew
        self.touched: dict[str, Job] = {}
        self.unmoved: set[str] = set()
        self.ready: dict[str, Job] = {}  # job id → job, in delivery order
        self.targets: set[str] = set()  # the articles the ready jobs write
        self.handed: deque[tuple[str, Future[Job | None]]] = deque()  # with the crew, in order

    def take(self, job_id: str) -> None:
        current = jobs.get(self.ctx.store, job_id)
        if current is not None and current.state is State.RECEIVED and current.requested_target:
            self.settle()  # a job prepared meanwhile may write that very article
            if current.requested_target in self.targets:
                # A revision of an article still on its way (`--target` names it): deliver
                # that one first, so this job's snapshot holds it and the revision is an UPDATE.
                self.flush()
        if self.crew is not None and current is not None and current.state in PREPARED:
            self.handed.append((job_id, self.crew.hand(job_id)))
            return
        self.settle()  # the jobs handed out before this one are taken back first
        self._taken(job_id, self._guarded(job_id, lambda: advance(self.ctx, job_id, self.owner)))

    def settle(self) -> None:
        """Take back every job handed to the crew, in the order they were handed out."""
        while self.handed:
            job_id, future = self.handed.popleft()
            self._taken(job_id, self._guarded(job_id, future.result))

    def _taken(self, job_id: str, job: Job | None) -> None:
        if job is None:
            return
        wanted = set(COMMITTABLE) | (relay.DELIVERABLE if self.deliver else set())
        if job.state in wanted and job.target_path not in self.targets:
            self.ready[job_id] = job  # its lease goes with it to the batch
            self.targets.add(job.target_path or "")
            return
        # Not taken on in this round: ended, waiting, or its article is already in this
        # batch (the next round takes it).
        _release(self.ctx, job)
        if job.state in ACTIVE and job.state not in wanted:
            self.unmoved.add(job_id)  # stuck active (e.g. recovering elsewhere): don't spin

    def flush(self) -> None:
        """Commit the ready jobs together, then deliver them together."""
        self.settle()
        ready, self.ready, self.targets = list(self.ready.values()), {}, set()
        if not ready:
            return
        ctx = self.ctx
        # Still ours? A job whose lease was taken meanwhile is its new holder's to drive.
        held = leases.renew_many(ctx.store, ready, ctx.config.retry.lease_seconds)
        self.unmoved.update({j.job_id for j in ready} - {j.job_id for j in held})
        held = self._commit(held)
        if not self.deliver:
            leases.release_many(ctx.store, _still_held(ctx, held))
            return
        try:
            delivered = relay.deliver_all(ctx, held)
        except LeaseLost:
            delivered = None  # a lease was taken mid-batch: its new holder goes on
        except Exception as exc:
            leases.release_many(ctx.store, _still_held(ctx, held))
            for job in held:
                self._failed(job.job_id, faults.classify(exc))
            return
        leases.release_many(ctx.store, _still_held(ctx, held))
        if delivered is None:
            return
        self.touched.update(delivered.jobs)
        for job_id, error in delivered.faults.items():
            self._failed(job_id, faults.classify(error))

    def _commit(self, held: list[Job]) -> list[Job]:
        """The held jobs with the committable ones committed; those that could not be are
        left out (settled, failed, or another worker's)."""
        ctx = self.ctx
        batch = [j for j in held if j.state in COMMITTABLE]
        if not batch:
            return held
        committed = commit.Committed({}, [])
        try:
            committed = commit.commit_all(ctx, batch)
        except LeaseLost:
            leases.release_many(ctx.store, _still_held(ctx, batch))  # the rest: its new holder's
        except Exception as exc:
            leases.release_many(ctx.store, _still_held(ctx, batch))
            for job in batch:
                self._failed(job.job_id, faults.classify(exc))
        for job in committed.damaged:
            fresh = jobs.get(ctx.store, job.job_id)
            assert fresh is not None
            settled = reconcile.recover_local_commit(ctx, fresh)  # → REVIEW, with the reason
            self.touched[job.job_id] = settled
            _release(ctx, settled)
        self.touched.update(committed.jobs)
        return [
            committed.jobs.get(j.job_id, j)
            for j in held
            if j.job_id in committed.jobs or j.state not in COMMITTABLE
        ]

    def _guarded(self, job_id: str, step: Callable[[], Job | None]) -> Job | None:
        try:
            job = step()
        except Exception as exc:
            # One job's trouble (a git command that failed, or a bug) must not stop the
            # others. The job keeps its state and is tried again — at once when the
            # failure is deterministic, else on the next pass — until it has failed
            # max_attempts times; then it ends in an explicit state naming the failure.
            self._failed(job_id, faults.classify(exc))
            return None
        if job is None:
            self.unmoved.add(job_id)  # claimed elsewhere
        else:
            self.touched[job_id] = job
        return job

    def _failed(self, job_id: str, fault: faults.Fault) -> None:
        ended, again = _note_error(self.ctx, job_id, fault)
        if ended is not None:
            self.touched[job_id] = ended
        if not again:
            self.unmoved.add(job_id)


def _still_held(ctx: Context, held: list[Job]) -> list[Job]:
    rows = [jobs.get(ctx.store, j.job_id) for j in held]
    return [
        r
        for r, j in zip(rows, held, strict=True)
        if r is not None and r.lease_token == j.lease_token
    ]


def run_until_idle(
    ctx: Context,
    owner: str | None = None,
    only: tuple[str, ...] = (),
    skip: frozenset[str] = frozenset(),
    deliver: bool = True,
    concurrency: int = 1,
) -> list[Job]:
    """Advance every due job until nothing is due; returns the jobs touched, last state each.
    With deliver=False jobs stop once committed locally (the demo stages races with it).
    `concurrency`: how many jobs are prepared at once (1: one after another, on this thread)."""
    owner = owner or owner_name()
    if concurrency <= 1:
        return _passes(ctx, owner, only, skip, deliver, None)
    from gitpub.ops.crew import Crew  # threads only for a worker that overlaps prepares

    crew = Crew(ctx, concurrency, lambda c, job_id, turn: advance(c, job_id, owner, turn))
    try:
        touched = _passes(ctx, owner, only, skip, deliver, crew)
    except BaseException:
        crew.close(wait=False)
        raise
    crew.close()
    return touched


def _passes(
    ctx: Context,
    owner: str,
    only: tuple[str, ...],
    skip: frozenset[str],
    deliver: bool,
    crew: Crew | None,
) -> list[Job]:
    touched: dict[str, Job] = {}
    unmoved: set[str] = set()
    while True:
        ids = [i for i in due_job_ids(ctx, only) if i not in unmoved and i not in skip]
        if not ids:
            return list(touched.values())
        round_ = _Round(ctx, owner, deliver, crew)
        for job_id in ids:
            round_.take(job_id)
        round_.flush()
        touched.update(round_.touched)
        unmoved |= round_.unmoved
        if not deliver:
            unmoved |= {i for i, j in round_.touched.items() if j.state in ACTIVE}


def _note_error(ctx: Context, job_id: str, fault: faults.Fault) -> tuple[Job | None, bool]:
    sys.stderr.write(sanitize(f"git blogpub: job {job_id}: {fault.message}") + "\n")
    try:
        return faults.note(ctx, job_id, fault)
    except StoreError:
        raise  # the store itself refuses (a full disk): the worker cannot work; its one line
    except OSError as exc:
        raise GitpubError(f"job database: {exc}") from None
