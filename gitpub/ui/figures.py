"""The fleet's figures, made from the store's event history: how long publications and their
steps take, how pushes and rechecks went, how many publications were taken down.

Every node records its work as events in the one store, so any node (a worker, the web page,
`git blogpub metrics`) reads the same figures from it; nothing is counted in a process's
memory that another node would miss, and a restart loses nothing. The events are read per
job and kept: a long-lived reader rereads only the jobs whose row changed since its last
look (a job's transition is one change of its row), so a scrape costs one index read of the
job table plus the events of the jobs that moved."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from gitpub.store import views
from gitpub.store.db import Store, parse_time

PUBLISH_BUCKETS = (
    1.0,
    5.0,
    15.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    1800.0,
    3600.0,
    14400.0,
    86400.0,
)
STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

STEPS = {
    # the event that ends a step → the step's label (a fixed set: low cardinality)
    "step:draft": "draft",
    "step:judge": "judge",
    "step:review": "review",
    "step:scan": "scan",
    "step:validate": "validate",
    "step:fonts": "fonts",
    "step:manifest": "manifest",
    "commit": "commit",
    "push": "push",
    "review:pushed": "push",
    "published": "confirm",
    "recheck:keep": "recheck",
    "recheck:skip": "recheck",
    "recheck:undecided": "recheck",
}
"""A step lasts from the event before it to the event that records its result."""

PUSHES = {"push": "accepted", "review:pushed": "accepted", "push:rejected": "rejected"}
RECHECKS = {"recheck:keep": "keep", "recheck:skip": "skip", "recheck:undecided": "undecided"}
STARTS = ("submit", "schedule:due", "operator:retry", "operator:continue")
"""Where a publication's clock starts: its submission, the time it was scheduled for, or a
person's restart of it (a scheduled post did not take three days to publish)."""


class Part(NamedTuple):
    """What one job adds to the figures."""

    publish: tuple[float, ...] = ()  # seconds from its start to PUBLISHED, per publication
    steps: tuple[tuple[str, float], ...] = ()  # (step, seconds)
    pushes: tuple[tuple[str, int], ...] = ()  # (result, how many)
    rechecks: tuple[tuple[str, int], ...] = ()
    withdrawals: int = 0


def part_of(events: Sequence[views.Event]) -> Part:
    """A job's contribution, from its events in order."""
    publish: list[float] = []
    steps: list[tuple[str, float]] = []
    pushes: Counter[str] = Counter()
    rechecks: Counter[str] = Counter()
    withdrawals = 0
    start: float | None = None
    before: float | None = None
    for ev in events:
        when = parse_time(ev.at)
        if ev.step in STARTS and ev.to_state in (None, "RECEIVED"):
            start = when
        if ev.step in STEPS and before is not None:
            steps.append((STEPS[ev.step], max(0.0, when - before)))
        if ev.to_state == "PUBLISHED" and start is not None:
            publish.append(max(0.0, when - start))
        if ev.to_state == "CONFLICT":
            pushes["conflict"] += 1
        elif ev.step in PUSHES:
            pushes[PUSHES[ev.step]] += 1
        elif ev.step == "retry:wait":
            pushes["error"] += 1
        rechecks.update([RECHECKS[ev.step]] if ev.step in RECHECKS else [])
        withdrawals += ev.step == "withdrawn"
        before = when
    return Part(
        tuple(publish),
        tuple(steps),
        tuple(sorted(pushes.items())),
        tuple(sorted(rechecks.items())),
        withdrawals,
    )


class Histogram:
    """Bucket counts (not yet cumulative), sum and count; observations can be taken back."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(bounds) + 1)  # the last one: above every bound
        self.sum = 0.0
        self.count = 0

    def add(self, value: float, sign: int = 1) -> None:
        index = next((i for i, b in enumerate(self.bounds) if value <= b), len(self.bounds))
        self.counts[index] += sign
        self.sum += sign * value
        self.count += sign

    def cumulative(self) -> list[tuple[str, int]]:
        """Prometheus's buckets: (le, how many at most that), ending with +Inf."""
        out, total = [], 0
        for bound, n in zip((*map(_le, self.bounds), "+Inf"), self.counts, strict=True):
            total += n
            out.append((bound, total))
        return out


def _le(bound: float) -> str:
    return repr(float(bound))


class Figures:
    """The running totals of every job's Part, refreshed from the store on each look."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # one look at a time: the totals are shared
        self.seen: dict[str, str] = {}  # job id → its row's updated_at when last read
        self.parts: dict[str, Part] = {}
        self.publish = Histogram(PUBLISH_BUCKETS)
        self.steps: dict[str, Histogram] = {}
        self.pushes: Counter[str] = Counter()
        self.rechecks: Counter[str] = Counter()
        self.withdrawals = 0

    def refresh(self, store: Store) -> None:
        with self.lock:
            now = views.changed_jobs(store)
            gone = [j for j in self.seen if j not in now]
            moved = [j for j, stamp in now.items() if self.seen.get(j) != stamp]
            for job_id in gone:
                self._apply(self.parts.pop(job_id, Part()), -1)
                del self.seen[job_id]
            for job_id, events in _grouped(views.events_of(store, sorted(moved))):
                self._apply(self.parts.get(job_id, Part()), -1)
                self.parts[job_id] = part_of(events)
                self._apply(self.parts[job_id], 1)
            self.seen.update({j: now[j] for j in moved})

    def _apply(self, part: Part, sign: int) -> None:
        for seconds in part.publish:
            self.publish.add(seconds, sign)
        for step, seconds in part.steps:
            self.steps.setdefault(step, Histogram(STEP_BUCKETS)).add(seconds, sign)
        for result, n in part.pushes:
            self.pushes[result] += sign * n
        for decision, n in part.rechecks:
            self.rechecks[decision] += sign * n
        self.withdrawals += sign * part.withdrawals


def _grouped(events: Iterable[views.Event]) -> Iterable[tuple[str, list[views.Event]]]:
    """(job id, its events) from events ordered by job."""
    job_id: str | None = None
    batch: list[views.Event] = []
    for ev in events:
        if ev.job_id != job_id:
            if job_id is not None:
                yield job_id, batch
            job_id, batch = ev.job_id, []
        batch.append(ev)
    if job_id is not None:
        yield job_id, batch
