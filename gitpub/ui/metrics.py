"""The Prometheus exposition of the store: `git blogpub metrics`, `/metrics` of the web page,
and `serve` for a worker that shows its own.

Everything comes from the store's rows and events (see `gitpub.ui.figures`), so every node
reports the fleet's figures, and labels are few and fixed (a state, a step, a result): never a
job id, a path or a host. Names follow Prometheus's conventions: `gitpub_` first, the unit
last (`_seconds`), counters ending in `_total` (the client library adds it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gitpub.context import Context
from gitpub.core.states import State
from gitpub.ops.worker import ACTIVE
from gitpub.store import outbox, views
from gitpub.store.db import now, parse_time
from gitpub.ui.figures import Figures

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from gitpub.ui.server import Handle


def families(ctx: Context, figures: Figures, *, worker: bool) -> Iterator[Metric]:
    """Every metric family, read from the store now."""
    figures.refresh(ctx.store)
    yield from _gauges(ctx, worker=worker)
    yield from _history(figures)


def _gauges(ctx: Context, *, worker: bool) -> Iterator[Metric]:
    """What the store's rows say now."""
    from prometheus_client.core import GaugeMetricFamily

    store = ctx.store
    stamp = now()
    counts = views.by_state(store)
    jobs = GaugeMetricFamily("gitpub_jobs", "Jobs in each state.", labels=["state"])
    for state in State:
        jobs.add_metric([state.value], counts.get(state, 0))
    yield jobs
    yield GaugeMetricFamily(
        "gitpub_jobs_withdrawn",
        "Publications taken off the remote branch since (a takedown, a force-push).",
        value=views.withdrawn_count(store),
    )
    oldest = views.oldest_due(store, ACTIVE, stamp)
    yield GaugeMetricFamily(
        "gitpub_oldest_due_job_age_seconds",
        "How long the job that has waited longest for a worker has been due (0: none is).",
        value=max(0.0, parse_time(stamp) - parse_time(oldest)) if oldest else 0.0,
    )
    leases = views.live_leases(store, stamp)
    yield GaugeMetricFamily(
        "gitpub_leases", "Jobs a worker holds a live lease on right now.", value=len(leases)
    )
    yield GaugeMetricFamily(
        "gitpub_lease_holders",
        "Worker processes holding a live lease right now, on any node.",
        value=len({lease.owner for lease in leases}),
    )
    yield GaugeMetricFamily(
        "gitpub_hand_edits_waiting",
        "Hand edits of this checkout registered and not yet delivered.",
        value=len(outbox.external_events(store, outbox.PENDING)),
    )
    yield GaugeMetricFamily(
        "gitpub_worker_up",
        "1 when this exposition comes from a running worker (`run --metrics`), else 0.",
        value=1 if worker else 0,
    )


def _history(figures: Figures) -> Iterator[Metric]:
    """What the events add up to."""
    from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

    with figures.lock:
        publish = HistogramMetricFamily(
            "gitpub_publish_duration_seconds",
            "From submission (or its scheduled time, or a person's retry) to PUBLISHED.",
        )
        publish.add_metric([], figures.publish.cumulative(), figures.publish.sum)
        yield publish
        steps = HistogramMetricFamily(
            "gitpub_step_duration_seconds", "How long each step of a job took.", labels=["step"]
        )
        for step, hist in sorted(figures.steps.items()):
            steps.add_metric([step], hist.cumulative(), hist.sum)
        yield steps
        pushes = CounterMetricFamily(
            "gitpub_pushes",
            "Each job's push results: accepted, rejected (the remote moved on), conflict,"
            " error (the remote could not be reached).",
            labels=["result"],
        )
        for result in ("accepted", "rejected", "conflict", "error"):
            pushes.add_metric([result], figures.pushes[result])
        yield pushes
        rechecks = CounterMetricFamily(
            "gitpub_rechecks", "Delivery-time rechecks by decision.", labels=["decision"]
        )
        for decision in ("keep", "skip", "undecided"):
            rechecks.add_metric([decision], figures.rechecks[decision])
        yield rechecks
        yield CounterMetricFamily(
            "gitpub_withdrawals",
            "Times a publication was found taken off the remote branch.",
            value=figures.withdrawals,
        )


def exposition(ctx: Context, figures: Figures | None = None, *, worker: bool = False) -> bytes:
    """The text exposition format, as Prometheus scrapes it."""
    from prometheus_client import CollectorRegistry, generate_latest

    made = list(families(ctx, figures or Figures(), worker=worker))

    class _Once:
        def collect(self) -> Iterator[Metric]:
            return iter(made)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Once())
    return bytes(generate_latest(registry))


def serve(ctx: Context, addr: str, *, token: str | None = None, worker: bool = True) -> Handle:
    """Serve `/metrics` on `addr` ("127.0.0.1:9464") in a background thread until the
    handle's `close()`. The server reads the store through a connection of its own (the
    caller's stays the caller's); any address but loopback needs `token`, sent by the
    scraper as `Authorization: Bearer TOKEN`."""
    from gitpub.ui import server

    host, port = server.parse_listen(addr)
    reader = server.Reader(ctx.repo.root)
    figures = Figures()
    app = server.metrics_app(reader, figures, worker=worker, token=token)
    return server.start(app, host, port, token=token, reader=reader)
