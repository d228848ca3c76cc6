"""The wrapper's lander: `python -m gitpub.store.lander SPOOL`, run by the wrapper of an
external step on the shared store once the command ended, lands the step's answer there —
sanitized, with the fingerprints of what was redacted — whether or not its worker still lives.

A process of its own for every step of a fleet, so it imports what landing needs and nothing
of the worker's (no git, no prepare): the worker's imports would cost it several times the
landing itself."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from gitpub import scan
from gitpub.scan.sanitize import sanitize, sanitize_obj
from gitpub.store import spools

ENV = "GITPUB_LANDING"
"""What the lander needs, for the wrapper only: the command itself never sees it."""


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
        body["leaks"] = scan.leaks(raw, allowed)
    else:
        body["unreadable"] = True
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


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
