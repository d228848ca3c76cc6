"""A step's answer landed in the shared store, so a worker's death (and its clone's) never
makes anyone pay for the step again.

`Landing` is the worker's side: before it starts a step it adopts an answer already landed,
or waits out a run another worker started; its wrapper then runs this module (`python -m
gitpub.prepare.landing SPOOL`) once the command ended, which lands the answer — sanitized,
with the fingerprints of what was redacted — whether or not the worker still lives."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from gitpub.core import clock
from gitpub.core.jsonvalue import JSON, JSONObject
from gitpub.prepare import secrets
from gitpub.scan.sanitize import sanitize, sanitize_obj
from gitpub.store import spools
from gitpub.store.db import Store, parse_time

ENV = "GITPUB_LANDING"
"""What the lander needs, for the wrapper only: the command itself never sees it."""


class Landed(dict[str, JSON]):
    """An adopted answer: already sanitized, with what the step's own output leaked."""

    leaks: list[JSON]


def record(status: str, out: bytes, err: str, allow: Iterable[str]) -> bytes:
    """The landed record of a run: its exit status, and its answer as gitpub keeps it."""
    allowed = frozenset(allow)
    try:
        raw = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raw = None
    body: dict[str, object] = {"status": status, "stderr": sanitize(err)[-2000:]}
    if isinstance(raw, dict):
        body["answer"] = sanitize_obj(raw, allowed)
        body["leaks"] = secrets.leaks(raw, allowed)
    else:
        body["unreadable"] = True
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


class Landing:
    """One step of one job, on the shared store."""

    def __init__(
        self, store: Store, url: str, job_id: str, name: str, allow: Iterable[str]
    ) -> None:
        self.store = store
        self.url = url
        self.job_id = job_id
        self.name = name
        self.allow = sorted(allow)

    def adopt(
        self, timeout: float, heartbeat: Callable[[], None] | None, beat_every: float
    ) -> JSONObject | None:
        """A landed record (as `record` wrote it) of an earlier run, waiting while another
        worker's run may still end in time; None: start the step."""
        last_beat = time.monotonic()
        while True:
            run = spools.get(self.store, self.job_id, self.name)
            if run is None:
                return None
            if run.landed is not None:
                landed: JSONObject = json.loads(run.landed)
                return landed
            if parse_time(run.started_at) + timeout < clock.time():
                return None  # it would have timed out by now: run it again
            time.sleep(0.2)
            if heartbeat is not None and time.monotonic() - last_beat >= beat_every:
                heartbeat()
                last_beat = time.monotonic()

    def begin(self, owner: str) -> dict[str, str]:
        """Record the run; the environment its wrapper needs to land the answer."""
        started = spools.begin(self.store, self.job_id, self.name, owner)
        blog = getattr(self.store, "blog", ("", ""))  # the shared store's: where it lands
        spec = {
            "url": self.url,
            "blog": list(blog),
            "job": self.job_id,
            "name": self.name,
            "started": started,
        }
        return {ENV: json.dumps({**spec, "allow": self.allow}), "GITPUB_LANDING_PY": sys.executable}

    def clear(self) -> None:
        spools.clear(self.store, self.job_id, self.name)


def _land(spool: Path) -> None:
    from gitpub.store.blogs import Blog
    from gitpub.store.pg import PgStore

    spec = json.loads(os.environ[ENV])
    status = (spool / "status").read_text().strip()
    out = (spool / "stdout").read_bytes()
    err = (spool / "stderr").read_text("utf-8", "replace")
    body = record(status, out, err, spec["allow"])
    with PgStore(spec["url"], spool, Blog(*spec["blog"])) as store:
        spools.land(store, spec["job"], spec["name"], spec["started"], status, body)


if __name__ == "__main__":
    try:
        _land(Path(sys.argv[1]))
    except Exception as exc:  # the worker, or its successor, runs the step again
        print(f"gitpub: could not land the step's answer: {sanitize(str(exc))}", file=sys.stderr)
        sys.exit(1)
