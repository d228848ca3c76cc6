"""`git blogpub status` and `git blogpub show`."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from gitpub.cli.commands.output import emit_json, say
from gitpub.context import Context, no_store_yet, open_context
from gitpub.core.errors import InputError
from gitpub.core.states import NEEDS_PERSON, State
from gitpub.scan.sanitize import sanitize_name
from gitpub.store import jobs, outbox
from gitpub.store import listing as joblist
from gitpub.store.db import at, parse_time
from gitpub.store.jobs import Job
from gitpub.sync import held


def _age(stamp: str) -> str:
    seconds = max(0.0, time.time() - parse_time(stamp))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _width() -> int:
    """The terminal's width; piped output (a script, a log) is never cut, only flattened."""
    if "COLUMNS" not in os.environ and not sys.stdout.isatty():
        return 100_000
    import shutil  # here: a script reading `status` through a pipe never needs it

    return max(40, shutil.get_terminal_size((120, 24)).columns)


def _one_line(text: str, room: int) -> str:
    """A reason on one line: git's multi-line messages joined, cut to the room left."""
    flat = " ".join(text.split())
    return flat if len(flat) <= room else flat[: max(0, room - 1)] + "…"


def _hand_edits(ctx: Context) -> None:
    """One line on external_sync, when it has something open: edits that belong to no job."""
    waiting = len(outbox.external_events(ctx.store, outbox.PENDING))
    stuck = len(outbox.external_events(ctx.store, outbox.CONFLICT))
    if waiting or stuck:
        extra = f", {stuck} in conflict (`git blogpub sweep` names the paths)" if stuck else ""
        say(f"hand edits: {waiting} waiting for delivery{extra}")
    secret = held.recorded(ctx.state_dir, ctx.repo.root)
    if secret:
        say(f"hand edits held back, a secret was found ({len(secret)}; {held.FIX}):")
        for path, found in sorted(secret.items()):
            say(f"  {held.describe(path, found)}")


def _row(ctx: Context, job: Job, width: int) -> str:
    line = f"  {job.job_id[:8]}  {job.state.value:<18} {_age(job.created_at):>4}  "
    line += job.target_path or "-"
    if job.state is State.SCHEDULED and job.scheduled_at:
        line += f"  scheduled for {job.scheduled_at[:19].replace('T', ' ')} UTC"
    if job.state is State.IN_REVIEW and job.review_branch:
        line += f"  waiting for a merge of {job.review_branch}"
    if job.withdrawn_at is not None:
        line += "  withdrawn: taken off the remote branch; `git blogpub retry` publishes it again"
    if job.state in NEEDS_PERSON or job.state is State.RETRY_WAIT:
        code = f"{job.failure_code}: " if job.failure_code else ""
        why = code + joblist.reason(ctx.store, job.job_id)
        if why.strip():
            line += "  " + _one_line(why, width - len(line) - 2)
    return line


def main(
    path: Path,
    *,
    as_json: bool,
    state: str | None = None,
    since: float | None = None,
    limit: int | None = None,
    everything: bool = False,
) -> None:
    wanted = State(state.upper()) if state else None
    if no_store_yet(path):
        if as_json:
            emit_json({"jobs": [], "finished": {}, "unlisted": 0})
        else:
            say("no jobs")
        return
    with open_context(path, need_remote=False) as ctx:
        listing = joblist.select(
            ctx.store,
            state=wanted,
            since=at(since) if since is not None else None,
            limit=limit,
            everything=everything,
        )
        if as_json:
            emit_json(
                {
                    "jobs": [j.public() for j in listing.jobs],
                    "finished": listing.finished,
                    "unlisted": listing.unlisted,
                }
            )
            return
        _print(ctx, listing, filtered=wanted is not None or since is not None or everything)


def _print(ctx: Context, listing: joblist.Listing, *, filtered: bool) -> None:
    rows, width = listing.jobs, _width()
    if not rows and (filtered or not listing.finished):
        say("no jobs" if not filtered else "no jobs match")
    _hand_edits(ctx)
    finished = [j for j in rows if j.state in joblist.FINISHED]
    groups = (
        ("needs a person", [j for j in rows if j.state in NEEDS_PERSON]),
        ("in flight", [j for j in rows if j.state not in NEEDS_PERSON | set(joblist.FINISHED)]),
    )
    for title, members in groups:
        if members:
            say(f"{title} ({len(members)}):")
            for j in members:
                say(_row(ctx, j, width))
    total = sum(listing.finished.values())
    if filtered:
        if finished:
            say(f"done ({len(finished)}):")
    elif total:
        counts = ", ".join(f"{n:,} {s}" for s, n in sorted(listing.finished.items()))
        newest = f", the newest {len(finished)}" if listing.unlisted and finished else ""
        say(f"done ({counts}){newest}" + (":" if finished else ""))
    for j in finished:
        say(_row(ctx, j, width))
    if listing.unlisted and not filtered:
        say(f"  … {listing.unlisted:,} more (`git blogpub status --all` lists every job)")


def _find(ctx: Context, job_id: str | None, key: str | None) -> Job:
    if key is not None:
        from gitpub import intake  # the door: `status` itself never looks a key up

        job = intake.by_key(ctx.store, key)
        if job is None:
            raise InputError(f"--key {sanitize_name(key)}: no job was submitted with this key")
        return job
    assert job_id is not None
    return jobs.require(ctx.store, job_id)


def show(path: Path, *, job_id: str | None, as_json: bool, key: str | None = None) -> None:
    if no_store_yet(path):
        shown = f"--key {sanitize_name(key)}" if key is not None else f"job {job_id}"
        raise InputError(f"{shown}: no such job")
    with open_context(path, need_remote=False) as ctx:
        job = _find(ctx, job_id, key)
        history = jobs.events(ctx.store, job.job_id)
        if as_json:
            emit_json({"job": job.public(), "events": history})
            return
        width = _width()
        for name, value in job.public().items():
            if value is not None:
                say(_wrapped(f"{name + ':':<16} ", str(value), width))
        why = joblist.reason(ctx.store, job.job_id)
        if why and (job.state in NEEDS_PERSON or job.state is State.RETRY_WAIT):
            say(_wrapped(f"{'reason:':<16} ", why, width))
        if job.state is State.CONFLICT:
            say(f"{'worktree:':<16} {ctx.worktree_dir(job.job_id)}")
        for warning in dict.fromkeys(
            e["detail"]["warning"] for e in history if "warning" in e["detail"]
        ):
            say(_wrapped(f"{'warning:':<16} ", str(warning), width))
        say("events:")
        for ev in history:
            move = f"{ev['from_state'] or '-'} → {ev['to_state']}" if ev["to_state"] else ""
            say(f"  {ev['seq']:>3} {ev['at']} {ev['step']:<20} {move}".rstrip())
            for name, value in ev["detail"].items():
                say(_wrapped(f"        {name}=", _text(value), width, indent=10))
        if job.state is State.CONFLICT:
            # Last, where the eye ends up: what settles it, ready to paste.
            from gitpub.ops import actions  # `status` never loads the operator's rooms

            say("to settle it:")
            for step in actions.conflict_steps(ctx, job):
                say(f"  {step}")  # never wrapped: each line is one command


def _text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def _wrapped(head: str, text: str, width: int, indent: int | None = None) -> str:
    """The whole text, wrapped at the terminal width under its label."""
    import textwrap  # `show` only: `status` prints one line per job

    pad = " " * (len(head) if indent is None else indent)
    lines = textwrap.wrap(
        " ".join(text.split()),
        width=width,
        initial_indent=head,
        subsequent_indent=pad,
        break_long_words=True,
        break_on_hyphens=False,
    )
    return "\n".join(lines) if lines else head.rstrip()
