"""`git blogpub status` and `git blogpub show`."""

from __future__ import annotations

import time
from pathlib import Path

from gitpub import jobs, lost, outbox
from gitpub.commands.output import emit_json, say
from gitpub.context import Context, open_context
from gitpub.errors import InputError
from gitpub.gitrepo import Repo
from gitpub.jobs import Job
from gitpub.states import NEEDS_PERSON, TERMINAL, State
from gitpub.store import parse_time


def _state(value: str | None) -> State | None:
    if value is None:
        return None
    try:
        return State(value.upper())
    except ValueError:
        raise InputError(
            f"--state {value}: not a state ({', '.join(s.value for s in State)})"
        ) from None


def _age(stamp: str) -> str:
    seconds = max(0.0, time.time() - parse_time(stamp))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _reason(ctx: Context, job: Job) -> str:
    """Why a job waits or stopped: the newest event that says so."""
    for ev in reversed(jobs.events(ctx.store, job.job_id)):
        reason = str(ev["detail"].get("reason") or "").strip()
        if reason:
            return reason.splitlines()[0]  # one row per job; `show` has the whole text
    return ""


def _no_store_yet(path: Path) -> bool:
    """Reading must not create: on a clone gitpub never ran in, there is simply no job. (A
    database missing beside job folders is not that: it was lost.)"""
    state = Repo.discover(path).state_dir
    lost.check_absent(state)
    return not (state / "state.sqlite3").exists()


def _hand_edits(ctx: Context) -> None:
    """One line on external_sync, when it has something open: edits that belong to no job."""
    waiting = len(outbox.external_events(ctx.store, outbox.PENDING))
    stuck = len(outbox.external_events(ctx.store, outbox.CONFLICT))
    if waiting or stuck:
        extra = f", {stuck} in conflict (`git blogpub sweep` names the paths)" if stuck else ""
        say(f"hand edits: {waiting} waiting for delivery{extra}")


def main(path: Path, *, as_json: bool, state: str | None) -> None:
    wanted = _state(state)
    if _no_store_yet(path):
        if as_json:
            emit_json({"jobs": []})
        else:
            say("no jobs")
        return
    with open_context(path, need_remote=False) as ctx:
        rows = jobs.all_jobs(ctx.store, wanted)
        if as_json:
            emit_json({"jobs": [j.public() for j in rows]})
            return
        groups = (
            ("needs a person", [j for j in rows if j.state in NEEDS_PERSON]),
            ("in flight", [j for j in rows if j.state not in TERMINAL]),
            ("done", [j for j in rows if j.state in TERMINAL - NEEDS_PERSON]),
        )
        if not rows:
            say("no jobs")
        _hand_edits(ctx)
        for title, members in groups:
            if not members:
                continue
            say(f"{title} ({len(members)}):")
            for j in members:
                why = ""
                if j.state in NEEDS_PERSON or j.state is State.RETRY_WAIT:
                    code = f"{j.failure_code}: " if j.failure_code else ""
                    why = f"  {code}{_reason(ctx, j)}"[:120]
                say(
                    f"  {j.job_id[:8]}  {j.state.value:<18} {_age(j.created_at):>4}  "
                    f"{j.target_path or '-'}{why}"
                )


def show(path: Path, *, job_id: str, as_json: bool) -> None:
    if _no_store_yet(path):
        raise InputError(f"job {job_id}: no such job")
    with open_context(path, need_remote=False) as ctx:
        job = jobs.require(ctx.store, job_id)
        history = jobs.events(ctx.store, job.job_id)
        if as_json:
            emit_json({"job": job.public(), "events": history})
            return
        for key, value in job.public().items():
            if value is not None:
                say(f"{key + ':':<16} {value}")
        say("events:")
        for ev in history:
            move = f"{ev['from_state'] or '-'} → {ev['to_state']}" if ev["to_state"] else ""
            detail = ", ".join(f"{k}={v}" for k, v in ev["detail"].items())
            say(f"  {ev['seq']:>3} {ev['at']} {ev['step']:<20} {move} {detail}".rstrip())
