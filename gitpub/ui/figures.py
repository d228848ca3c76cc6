"""The fleet's figures, made from the store's event history: how long publications and their
steps take, how pushes and rechecks went, how many publications were taken down.

Every node records its work as events in the one store, so any node (a worker, the web page,
`git blogpub metrics`) reads the same figures from it; nothing is counted in a process's
memory that another node would miss, and a restart loses nothing. The events are read per
job and kept: a long-lived reader rereads only the jobs whose row changed since its last
look (a job's transition is one change of its row), so a scrape costs one index read of the
job table plus the events of the jobs that moved."""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from gitpub.store import views
from gitpub.store.db import Store, at, parse_time

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
MARGIN_SECONDS = 60.0
"""How far before the newest change seen a later look reads again (see Figures._changes)."""


class Part(NamedTuple):
    """What one job adds to the figures."""

    publish: tuple[float, ...] = ()  # seconds from its start to PUBLISHED, per publication
    steps: tuple[tuple[str, float], ...] = ()  # (step, seconds)
    pushes: tuple[tuple[str, int], ...] = ()  # (result, how many)
    rechecks: tuple[tuple[str, int], ...] = ()
    withdrawals: int = 0


def _epoch(stamp: str) -> float:
    """Seconds since the epoch of a store stamp (`…T…Z`): the C parser, as a first scrape
    reads every event of the store."""
    return datetime.fromisoformat(stamp[:-1] + "+00:00").timestamp()


def part_of(events: Sequence[views.Event]) -> Part:
    """A job's contribution, from its events in order."""
    publish: list[float] = []
    steps: list[tuple[str, float]] = []
    pushes: Counter[str] = Counter()
    rechecks: Counter[str] = Counter()
    withdrawals = 0
    start = before = ""  # stamps, read as times only where a figure needs them
    for ev in events:
        step = ev.step
        if step in STARTS and ev.to_state in (None, "RECEIVED"):
            start = ev.at
        if step in STEPS and before:
            steps.append((STEPS[step], max(0.0, _epoch(ev.at) - _epoch(before))))
        if ev.to_state == "PUBLISHED" and start:
            publish.append(max(0.0, _epoch(ev.at) - _epoch(start)))
        if ev.to_state == "CONFLICT":
            pushes["conflict"] += 1
        elif step in PUSHES:
            pushes[PUSHES[step]] += 1
        elif step == "retry:wait":
            pushes["error"] += 1
        elif step in RECHECKS:
            rechecks[RECHECKS[step]] += 1
        elif step == "withdrawn":
            withdrawals += 1
        before = ev.at
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
        self.counts[bisect.bisect_left(self.bounds, value)] += sign  # the first bound >= it
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
            moved, gone = self._changes(store)
            for job_id in gone:
                self._apply(self.parts.pop(job_id, Part()), -1)
                del self.seen[job_id]
            first = not self.seen
            read = views.every_event(store) if first else views.events_of(store, sorted(moved))
            for job_id, events in _grouped(read):
                if job_id not in moved:
                    continue  # submitted since the look at the rows: the next look reads it
                self._apply(self.parts.get(job_id, Part()), -1)
                self.parts[job_id] = part_of(events)
                self._apply(self.parts[job_id], 1)
            self.seen.update(moved)

    def _changes(self, store: Store) -> tuple[dict[str, str], list[str]]:
        """(job id → stamp of the jobs changed since the last look, the jobs gone). After
        the first look, only rows changed within a margin before the newest change seen
        (one range of the updated_at index): a transaction that stamped its change a little
        earlier than another but committed after it is still found."""
        if self.seen:
            newest = max(self.seen.values())
            recent = views.changed_since(store, at(parse_time(newest) - MARGIN_SECONDS))
            if views.count(store, views.Filters()) == len(self.seen.keys() | recent.keys()):
                return {j: s for j, s in recent.items() if self.seen.get(j) != s}, []
        now = views.changed_jobs(store)  # the first look, or jobs were removed (a rebuild)
        moved = {j: s for j, s in now.items() if self.seen.get(j) != s}
        return moved, [j for j in self.seen if j not in now]

    def _apply(self, part: Part, sign: int) -> None:
        for seconds in part.publish:
            self.publish.add(seconds, sign)
        steps = self.steps
        for step, seconds in part.steps:
            hist = steps.get(step) or steps.setdefault(step, Histogram(STEP_BUCKETS))
            hist.add(seconds, sign)
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
