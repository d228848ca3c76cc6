"""The throttle of external steps: `[steps] rate` spaces starts on the throttle's clock (a
test's own here: no sleeping), `[steps] concurrency` caps the steps holding a place."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gitpub import config
from gitpub.config import StepsConfig
from gitpub.core.errors import ConfigError
from gitpub.core.throttle import Throttle


class Clock:
    """A clock that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


def test_a_rate_spaces_starts_evenly_from_the_first() -> None:
    clock = Clock()
    throttle = Throttle(clock.now, clock.sleep)
    spacing = StepsConfig(rate="60/min").start_spacing
    starts = [throttle.start(spacing) for _ in range(4)]
    assert starts == [1000.0, 1001.0, 1002.0, 1003.0]
    assert clock.t == 1003.0


def test_time_that_passed_between_steps_counts_toward_the_spacing() -> None:
    clock = Clock()
    throttle = Throttle(clock.now, clock.sleep)
    throttle.start(5.0)
    clock.t += 3.0  # a step ran for 3 s
    assert throttle.start(5.0) == 1005.0
    clock.t += 60.0  # idle for a minute: the next one starts at once
    assert throttle.start(5.0) == 1065.0
    assert clock.slept == [2.0]


def test_a_long_wait_for_the_rate_keeps_the_lease() -> None:
    clock = Clock()
    throttle = Throttle(clock.now, clock.sleep)
    beats: list[float] = []
    throttle.start(10.0)
    throttle.start(10.0, beat=lambda: beats.append(clock.t), every=3.0)
    assert clock.slept == [3.0, 3.0, 3.0, 1.0]
    assert beats == [1003.0, 1006.0, 1009.0]  # none once the start has come


def test_no_rate_never_waits() -> None:
    clock = Clock()
    throttle = Throttle(clock.now, clock.sleep)
    assert [throttle.start(StepsConfig().start_spacing) for _ in range(3)] == [1000.0] * 3
    assert clock.slept == []


def test_threads_asking_together_start_one_spacing_apart() -> None:
    clock = Clock()
    lock = threading.Lock()

    def sleep(seconds: float) -> None:
        with lock:
            clock.t += seconds

    throttle = Throttle(clock.now, sleep)
    starts: list[float] = []
    threads = [
        threading.Thread(target=lambda: starts.append(throttle.start(2.0))) for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ordered = sorted(starts)
    assert len(ordered) == 6
    assert all(b - a >= 2.0 for a, b in zip(ordered, ordered[1:], strict=False))


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_places_are_capped_at_the_limit(limit: int) -> None:
    throttle = Throttle()
    inside = most = 0
    guard = threading.Lock()
    go = threading.Event()

    def step() -> None:
        nonlocal inside, most
        go.wait()
        with throttle.place(limit, every=0.05):
            with guard:
                inside += 1
                most = max(most, inside)
            for _ in range(200):  # give the others every chance to crowd in
                threading.Event().wait(0.0005)
            with guard:
                inside -= 1

    threads = [threading.Thread(target=step) for _ in range(8)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join()
    assert most <= limit
    assert throttle.running == 0


@pytest.mark.parametrize(
    ("rate", "spacing"), [("60/min", 1.0), ("5/s", 0.2), ("100/h", 36.0), ("1/s", 1.0)]
)
def test_rate_reads_as_seconds_between_starts(tmp_path: Path, rate: str, spacing: float) -> None:
    (tmp_path / config.CONFIG_NAME).write_text(f'[steps]\nrate = "{rate}"\nconcurrency = 2\n')
    steps = config.load(tmp_path).steps
    assert steps.start_spacing == pytest.approx(spacing)
    assert steps.concurrency == 2


def test_a_bad_rate_names_the_key_and_an_example(tmp_path: Path) -> None:
    (tmp_path / config.CONFIG_NAME).write_text('[steps]\nrate = "lots"\n')
    with pytest.raises(ConfigError) as err:
        config.load(tmp_path)
    assert "steps.rate" in err.value.message and '"60/min"' in err.value.message
    assert "\n" not in err.value.message
