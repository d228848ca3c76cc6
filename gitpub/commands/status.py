"""`git blogpub status` and `git blogpub show`."""

from __future__ import annotations

from pathlib import Path

from gitpub import jobs
from gitpub.commands.output import emit_json, say
from gitpub.context import open_context
from gitpub.errors import InputError
from gitpub.states import NEEDS_PERSON, TERMINAL, State


def _state(value: str | None) -> State | None:
    if value is None:
        return None
    try:
        return State(value.upper())
    except ValueError:
        raise InputError(
            f"--state {value}: not a state ({', '.join(s.value for s in State)})"
        ) from None


def main(path: Path, *, as_json: bool, state: str | None) -> None:
    with open_context(path, need_remote=False) as ctx:
        rows = jobs.all_jobs(ctx.store, _state(state))
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
        for title, members in groups:
            if not members:
                continue
            say(f"{title}:")
            for j in members:
                code = f" ({j.failure_code})" if j.failure_code else ""
                say(f"  {j.job_id[:8]}  {j.state.value:<18} {j.target_path or '-'}{code}")


def show(path: Path, *, job_id: str, as_json: bool) -> None:
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
