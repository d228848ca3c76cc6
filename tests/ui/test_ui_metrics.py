"""The Prometheus exposition: read by the client library's own parser, with the families and
types a dashboard expects, figures that match the store, labels of low cardinality; served by
the web page and by a worker's background thread; scraped once by a real Prometheus where one
is installed."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from testing.fixtures import Blog, article, wait_for
from testing.uiworld import World, request

from gitpub.context import open_context
from gitpub.ui import metrics
from gitpub.ui.app import serve_page
from gitpub.ui.figures import Figures

TYPES = {
    "gitpub_jobs": "gauge",
    "gitpub_jobs_withdrawn": "gauge",
    "gitpub_oldest_due_job_age_seconds": "gauge",
    "gitpub_leases": "gauge",
    "gitpub_lease_holders": "gauge",
    "gitpub_hand_edits_waiting": "gauge",
    "gitpub_worker_up": "gauge",
    "gitpub_publish_duration_seconds": "histogram",
    "gitpub_step_duration_seconds": "histogram",
    "gitpub_pushes": "counter",
    "gitpub_rechecks": "counter",
    "gitpub_withdrawals": "counter",
}


def _families(text: str) -> dict[str, Any]:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _value(family: Any, suffix: str = "", **labels: str) -> float:
    for s in family.samples:
        if s.name == family.name + suffix and all(s.labels.get(k) == v for k, v in labels.items()):
            return float(s.value)
    raise AssertionError(f"no sample {family.name}{suffix} {labels}")


def test_the_command_prints_every_family_with_its_type(world: World) -> None:
    text = world.blog.ok("metrics").stdout
    got = _families(text)
    assert {name: got[name].type for name in TYPES} == TYPES
    states = {j["state"] for j in world.blog.read("status", "--all", "--json").json()["jobs"]}
    for state in states | {"PREPARING"}:
        expected = sum(
            1
            for j in world.blog.read("status", "--all", "--json").json()["jobs"]
            if j["state"] == state
        )
        assert _value(got["gitpub_jobs"], state=state) == expected, state
    assert _value(got["gitpub_jobs_withdrawn"]) == 1
    assert _value(got["gitpub_withdrawals"], "_total") == 1
    publish = got["gitpub_publish_duration_seconds"]
    assert _value(publish, "_count") == 2  # the published post and the one taken down
    assert _value(publish, "_bucket", le="+Inf") == 2
    steps = {s.labels["step"] for s in got["gitpub_step_duration_seconds"].samples}
    assert {"draft", "judge", "manifest", "commit", "push", "confirm"} <= steps
    pushes = got["gitpub_pushes"]
    assert _value(pushes, "_total", result="accepted") >= 3  # two posts, one review branch
    assert _value(pushes, "_total", result="conflict") == 1
    assert _value(pushes, "_total", result="error") >= 4  # the unreachable remote
    assert _value(got["gitpub_worker_up"]) == 0
    assert _value(got["gitpub_oldest_due_job_age_seconds"]) > 0  # the job just submitted


def test_no_label_carries_a_job_id_a_path_or_a_host(world: World) -> None:
    text = world.blog.ok("metrics").stdout
    values = {v for f in _families(text).values() for s in f.samples for v in s.labels.values()}
    assert len(values) < 60
    for value in values:
        assert not re.search(r"[0-9a-f]{8}-|/|:", value), value
    for job_id in world.ids.values():
        assert job_id[:8] not in text


def test_figures_follow_the_store_and_reread_only_what_moved(blog: Blog) -> None:
    job_id = blog.submit("one", article("One", "The first of two."))
    figures = Figures()
    with open_context(blog.root) as ctx:
        before = _families(metrics.exposition(ctx, figures).decode())
        assert _value(before["gitpub_publish_duration_seconds"], "_count") == 0
        assert set(figures.seen) == {job_id}
        blog.ok("run", "--until-idle")
        after = _families(metrics.exposition(ctx, figures).decode())
        fresh = _families(metrics.exposition(ctx).decode())
    for family in ("gitpub_publish_duration_seconds", "gitpub_step_duration_seconds"):
        assert after[family].samples == fresh[family].samples  # kept totals = a full reread
    assert _value(after["gitpub_publish_duration_seconds"], "_count") == 1
    assert _value(after["gitpub_jobs"], state="PUBLISHED") == 1


def test_the_page_and_a_worker_serve_metrics(world: World) -> None:
    page = serve_page(world.blog.root)
    try:
        scraped = request(page.url + "metrics")
    finally:
        page.close()
    assert scraped.status == 200 and scraped.headers["content-type"].startswith("text/plain")
    assert _value(_families(scraped.body)["gitpub_worker_up"]) == 0

    with open_context(world.blog.root) as ctx:
        handle = metrics.serve(ctx, "127.0.0.1:0")
        try:
            served = request(f"http://127.0.0.1:{handle.port}/metrics")
            missing = request(f"http://127.0.0.1:{handle.port}/")
        finally:
            handle.close()
    assert _value(_families(served.body)["gitpub_worker_up"]) == 1
    assert missing.status == 404
    with socket.socket() as probe:  # closed: the port is free again
        probe.bind(("127.0.0.1", handle.port))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="no Prometheus server installed")
def test_a_real_prometheus_scrapes_it_once(world: World, tmp_path: Path) -> None:
    with open_context(world.blog.root) as ctx:
        handle = metrics.serve(ctx, "127.0.0.1:0")
    port = _free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: gitpub\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{handle.port}']}}]\n"
    )
    server = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def scraped() -> list[dict[str, Any]]:
        try:
            answer = request(f"http://127.0.0.1:{port}/api/v1/query?query=gitpub_jobs")
        except OSError:
            return []  # not listening yet
        return list(json.loads(answer.body)["data"]["result"]) if answer.status == 200 else []

    try:
        found = wait_for(scraped, "Prometheus to scrape gitpub_jobs")
    finally:
        server.terminate()
        server.wait(30)
        handle.close()
    by_state = {r["metric"]["state"]: float(r["value"][1]) for r in found}
    assert by_state["CONFLICT"] == 1 and by_state["IN_REVIEW"] == 1
