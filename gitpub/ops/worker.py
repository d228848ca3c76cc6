"""The worker: claim due jobs and drive each through its states until it waits or ends."""

from __future__ import annotations

import os
import socket
import sys
from collections import deque
from collections.abc import Callable, Collection
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


def dead_held(ctx: Context) -> list[str]:
    """Jobs with work whose lease is held by a dead local process (a crash kept it): taken
    at once, not after their lease runs out."""
    held = reads.leased(ctx.store, ACTIVE, now())
    return [job_id for job_id, owner in held if leases.lease_holder_dead(owner)]


def claim_due(
    ctx: Context,
    owner: str,
    limit: int,
    only: Collection[str] = (),
    skip: Collection[str] = (),
    since: str | None = None,
) -> list[Job]:
    """Up to `limit` jobs with work to do now that nobody holds, oldest first, now leased to
    `owner` (one statement on the shared store: several jobs per round trip); among `only`
    when given, never `skip`, and (`since`) none submitted after that instant."""
    stamp = now()
    where, params = reads.due_clause(ACTIVE, stamp, only, skip)
    if since is not None:
        where, params = f"{where} AND created_at <= ?", [*params, since]
    return leases.claim_due(
        ctx.store, (where, params), owner, ctx.config.retry.lease_seconds, limit
    )


COMMITTABLE = (State.READY_TO_COMMIT, State.LOCAL_COMMITTING)


def advance(ctx: Context, job: Job, turn: prepare.Turn | None = None) -> Job | None:
    """Move a job this worker claimed as far as it goes on its own: prepared (or rechecked),
    not yet committed. None when its lease was taken meanwhile. The caller holds the lease of
    the job returned: it releases it, or hands the job on to the round's commit and delivery
    (`_Round`). `turn`: see `prepare.prepare`."""
    lease = ctx.config.retry.lease_seconds
    try:
        return _drive(ctx, job, lambda j: leases.checkpoint(ctx.store, j, lease), turn)
    except LeaseLost:
        return None  # our lease was taken: stop here, without side effects
    except BaseException:
        leases.release(ctx.store, job)
        raise


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


COMMITTED_ELSEWHERE: tuple[str, list[object]] = ("WHERE state = 'LOCAL_COMMITTED'", [])
"""The claim of `_Round._sweep`: committed jobs, left by workers that found the delivery
lock taken (a job some worker still holds is never claimed)."""
SWEEPS, SWEPT = 8, 100
"""At most so many batches of at most so many jobs per sweep: a sweep ends."""


class _Round:
    """One pass over the due jobs: each is prepared in turn (with a crew, up to its size at
    once), then those ready are committed together and delivered together, as one batch."""

    def __init__(self, ctx: Context, owner: str, deliver: bool, crew: Crew | None = None) -> None:
        self.ctx, self.owner, self.deliver, self.crew = ctx, owner, deliver, crew
        self.touched: dict[str, Job] = {}
        self.unmoved: set[str] = set()
        self.ready: dict[str, Job] = {}  # job id → job, in delivery order
        self.targets: set[str] = set()  # the articles the ready jobs write
        self.handed: deque[tuple[Job, Future[Job | None]]] = deque()  # with the crew, in order

    def take(self, job: Job) -> None:
        """Drive a job this worker claimed (with a crew, hand it to a thread)."""
        if job.state is State.RECEIVED and job.requested_target:
            self.settle()  # a job prepared meanwhile may write that very article
            if job.requested_target in self.targets:
                # A revision of an article still on its way (`--target` names it): deliver
                # that one first, so this job's snapshot holds it and the revision is an UPDATE.
                self.flush()
        if self.crew is not None and job.state in PREPARED:
            self.handed.append((job, self.crew.hand(job)))
            return
        self.settle()  # the jobs handed out before this one are taken back first
        self._taken(job.job_id, self._guarded(job, lambda: advance(self.ctx, job)))

    def room(self) -> int:
        """How many jobs to claim next: as many as the crew has threads free (waiting for the
        oldest handed out to come back when none is), one at a time without a crew. A job
        claimed only once a thread can start on it stays free for the other workers. The
        ones already back are taken too, so that one claim fills every free thread."""
        if self.crew is None:
            return 1
        while self.handed and (len(self.handed) >= self.crew.size or self.handed[0][1].done()):
            job, future = self.handed.popleft()
            self._taken(job.job_id, self._guarded(job, future.result))
        return self.crew.size - len(self.handed)

    def settle(self) -> None:
        """Take back every job handed to the crew, in the order they were handed out."""
        while self.handed:
            job, future = self.handed.popleft()
            self._taken(job.job_id, self._guarded(job, future.result))

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
        leases.release(self.ctx.store, job)
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
        # Releases name each lease by its token: one another worker took meanwhile stays its.
        if not self.deliver:
            leases.release_many(ctx.store, held)
            return
        if held and ctx.store.delivering_elsewhere():
            # Another node holds the delivery lock: rather than wait for it, leave the
            # committed jobs to it (it delivers every committed job it can claim before it
            # lets go) and go on preparing. Whoever next finds the lock free delivers
            # whatever is still left.
            leases.release_many(ctx.store, held)
            self.unmoved.update(j.job_id for j in held)
            return
        self._deliver(held)
        self._sweep()

    def _deliver(self, held: list[Job]) -> None:
        """Deliver the held jobs together, then give up their leases."""
        ctx = self.ctx
        try:
            delivered = relay.deliver_all(ctx, held)
        except LeaseLost:
            delivered = None  # a lease was taken mid-batch: its new holder goes on
        except Exception as exc:
            leases.release_many(ctx.store, held)
            for job in held:
                self._failed(job.job_id, faults.classify(exc))
            return
        leases.release_many(ctx.store, held)
        if delivered is None:
            return
        self.touched.update(delivered.jobs)
        for job_id, error in delivered.faults.items():
            self._failed(job_id, faults.classify(error))

    def _sweep(self) -> None:
        """On the shared store, after a delivery: the jobs other workers committed and left
        for the delivery lock's holder (`flush`), claimed and delivered in batches, until
        none is left. Each is leased as any claim is, so a job is pushed by one worker, and
        its commit is made again here from the artifacts its folder holds."""
        ctx = self.ctx
        if not ctx.store.shared:
            return
        lease = ctx.config.retry.lease_seconds
        for _ in range(SWEEPS):
            left = leases.claim_due(ctx.store, COMMITTED_ELSEWHERE, self.owner, lease, SWEPT)
            if not left:
                return
            self._deliver(left)

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
            leases.release_many(ctx.store, batch)  # the rest: its new holder's
        except Exception as exc:
            leases.release_many(ctx.store, batch)
            for job in batch:
                self._failed(job.job_id, faults.classify(exc))
        for job in committed.damaged:
            fresh = jobs.get(ctx.store, job.job_id)
            assert fresh is not None
            settled = reconcile.recover_local_commit(ctx, fresh)  # → REVIEW, with the reason
            self.touched[job.job_id] = settled
            leases.release(ctx.store, settled)
        self.touched.update(committed.jobs)
        return [
            committed.jobs.get(j.job_id, j)
            for j in held
            if j.job_id in committed.jobs or j.state not in COMMITTABLE
        ]

    def _guarded(self, claimed: Job, step: Callable[[], Job | None]) -> Job | None:
        job_id = claimed.job_id
        try:
            job = step()
        except Exception as exc:
            # One job's trouble (a git command that failed, or a bug) must not stop the
            # others. The job keeps its state and is tried again — at once when the
            # failure is deterministic, else on the next pass — until it has failed
            # max_attempts times; then it ends in an explicit state naming the failure.
            # Its lease goes first (`advance` gave it up already unless its thread never
            # started: a token names one claim, so giving it up twice is harmless).
            leases.release(self.ctx.store, claimed)
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

    crew = Crew(ctx, concurrency, advance)
    try:
        touched = _passes(ctx, owner, only, skip, deliver, crew)
    except BaseException:
        # The jobs claimed for threads that never started on them: free for other workers.
        leases.release_many(ctx.store, crew.close(wait=False))
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
        round_ = _Round(ctx, owner, deliver, crew)
        taken = _claim_round(ctx, round_, only, unmoved | skip)
        if not taken:
            return list(touched.values())
        round_.flush()
        touched.update(round_.touched)
        unmoved |= round_.unmoved
        if not deliver:
            unmoved |= {i for i, j in round_.touched.items() if j.state in ACTIVE}


def _claim_round(
    ctx: Context, round_: _Round, only: tuple[str, ...], skip: set[str] | frozenset[str]
) -> set[str]:
    """Claim the round's jobs as it can take them and hand each to it: first those a dead
    local process held, then the due ones, as many at a time as the round has room for.
    Only jobs submitted before the round began: a steady stream of submissions must not
    keep a round from delivering. Returns the ids taken."""
    since = now()
    dead = [i for i in dead_held(ctx) if (not only or i in only) and i not in skip]
    taken: set[str] = set()
    batch = leases.claim_many(ctx.store, dead, round_.owner, ctx.config.retry.lease_seconds)
    while True:
        for job in batch:
            taken.add(job.job_id)
            round_.take(job)
        batch = claim_due(ctx, round_.owner, round_.room(), only, skip | taken, since)
        if not batch:
            return taken


def _note_error(ctx: Context, job_id: str, fault: faults.Fault) -> tuple[Job | None, bool]:
    sys.stderr.write(sanitize(f"git blogpub: job {job_id}: {fault.message}") + "\n")
    try:
        return faults.note(ctx, job_id, fault)
    except StoreError:
        raise  # the store itself refuses (a full disk): the worker cannot work; its one line
    except OSError as exc:
        raise GitpubError(f"job database: {exc}") from None
