"""A step's answer landed in the shared store, so a worker's death (and its clone's) never
makes anyone pay for the step again.

`Landing` is the worker's side: before it starts a step it adopts an answer already landed,
or waits out a run another worker started; its wrapper then runs `gitpub.store.lander` once
the command ended, which lands the answer — sanitized, with the fingerprints of what was
redacted — whether or not the worker still lives."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable

from gitpub.core import clock
from gitpub.core.jsonvalue import JSON, JSONObject
from gitpub.store import spools
from gitpub.store.db import Store, parse_time
from gitpub.store.lander import ENV


class Landed(dict[str, JSON]):
    """An adopted answer: already sanitized, with what the step's own output leaked."""

    leaks: list[JSON]


class Landing:
    """One step of one job, on the shared store."""

    def __init__(
        self,
        store: Store,
        url: str,
        job_id: str,
        name: str,
        allow: Iterable[str],
        token: str | None,
    ) -> None:
        self.store = store
        self.url = url
        self.job_id = job_id
        self.name = name
        self.allow = sorted(allow)
        self.token = token  # the lease the run is begun under (`spools.begin` checks it)

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
        """Record the run, provided the lease is still ours (LeaseLost otherwise); the
        environment its wrapper needs to land the answer."""
        started = spools.begin(self.store, self.job_id, self.name, owner, self.token)
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
