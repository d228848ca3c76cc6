"""The threads of one worker that prepare jobs at once (`run --concurrency N`).

A prepare spends its time waiting on external steps (a model-backed draft takes 10–60 s), so
threads that wait on those processes overlap them. Each thread drives a job exactly as the
worker does alone (`worker.advance`: its own lease, claimed and renewed; a lost lease stops
only that job) on a Context of its own (`context.sibling`: a store connection is never shared
between threads), and hands the job back to the round, which commits and delivers the ready
ones together on the worker's own thread, under the delivery lock, as before.

The order of a round is kept where it decides something: the judge of a job waits for its
turn (`turn`), once every job handed out before it is prepared, so it is judged against
their articles as when jobs are prepared one by one; the round takes the jobs back in the
order it handed them out."""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future

from gitpub.context import Context, sibling
from gitpub.store.jobs import Job

Drive = Callable[[Context, Job, Callable[[Callable[[], None]], None]], "Job | None"]
"""What a thread does with a job the worker claimed: `worker.advance` with the job's turn."""


class Crew:
    """Up to `size` threads, started as jobs come, each on its own Context until `close`."""

    def __init__(self, ctx: Context, size: int, drive: Drive) -> None:
        self.ctx, self.size, self.drive = ctx, size, drive
        ctx.throttle  # noqa: B018 - made here, before two threads could each make one
        self._tasks: queue.SimpleQueue[tuple[Job, Future[Job | None]] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._handed: list[str] = []  # job ids in the order they were handed out
        self._where: dict[str, int] = {}
        self._settled: set[str] = set()  # prepared (or given up): no longer ahead of anyone
        self._cond = threading.Condition()
        self._futures: list[tuple[Job, Future[Job | None]]] = []

    def hand(self, job: Job) -> Future[Job | None]:
        """Prepare the job on one of the threads; its future holds what `drive` returned."""
        job_id = job.job_id
        future: Future[Job | None] = Future()
        with self._cond:
            self._where[job_id] = len(self._handed)
            self._handed.append(job_id)
        self._futures.append((job, future))
        self._tasks.put((job, future))
        if len(self._threads) < self.size:
            thread = threading.Thread(
                target=self._work, name=f"gitpub-prepare-{len(self._threads)}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        return future

    def turn(self, job_id: str, beat: Callable[[], None]) -> None:
        """Return once every job handed out before this one is prepared; `beat` keeps the
        job's lease meanwhile."""
        every = self.ctx.config.retry.lease_seconds / 8
        while True:
            with self._cond:
                ahead = self._handed[: self._where[job_id]]
                if self._settled.issuperset(ahead):
                    return
                self._cond.wait(timeout=every)
                if self._settled.issuperset(self._handed[: self._where[job_id]]):
                    return
            beat()  # outside the lock: it writes the store

    def _done(self, job_id: str) -> None:
        with self._cond:
            self._settled.add(job_id)
            self._cond.notify_all()

    def _work(self) -> None:
        try:
            ctx = sibling(self.ctx)
        except BaseException as exc:  # noqa: BLE001 - every job this thread takes fails with it
            self._refuse(exc)
            return
        with ctx:
            while (task := self._tasks.get()) is not None:
                job, future = task
                job_id = job.job_id
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(self.drive(ctx, job, functools.partial(self.turn, job_id)))
                except BaseException as exc:  # noqa: BLE001 - the round reports it, on its thread
                    future.set_exception(exc)
                finally:
                    self._done(job_id)

    def _refuse(self, exc: BaseException) -> None:
        """A thread that could not open its store fails the jobs it takes with the reason."""
        while (task := self._tasks.get()) is not None:
            job, future = task
            if future.set_running_or_notify_cancel():
                future.set_exception(exc)
            self._done(job.job_id)

    def close(self, *, wait: bool = True) -> list[Job]:
        """Stop the threads once their jobs are done; `wait=False` (the worker is failing)
        drops the jobs not yet started and leaves the running ones to end on their own.
        Returns the jobs dropped: their leases are the caller's to give up."""
        dropped: list[Job] = []
        if not wait:
            dropped = [job for job, future in self._futures if future.cancel()]
            with self._cond:
                self._settled.update(self._handed)
                self._cond.notify_all()
        for _ in self._threads:
            self._tasks.put(None)
        if wait:
            for thread in self._threads:
                thread.join()
        return dropped
