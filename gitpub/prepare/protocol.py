"""The step protocol: one JSON object in on stdin, one JSON object out on stdout, in time.

Anything else — a non-zero exit, a timeout, output that is not JSON, a field outside the
contract — is a failed step, and a failed step is REVIEW: gitpub fails closed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from gitpub.core.errors import GitpubError
from gitpub.core.jsonvalue import JSONObject, as_list, as_object
from gitpub.prepare.answers import Request
from gitpub.prepare.landing import Landed, Landing
from gitpub.scan.sanitize import sanitize, sanitize_obj


class StepFailed(GitpubError):
    """A step did not produce an answer inside its contract; the job goes to REVIEW."""


# The command runs under a tiny shell that records its own pid first and the command's exit
# status last, each with an atomic rename. The shell writes the pid itself, so even a worker
# killed the instant after starting it leaves a step the next worker can find and adopt.
# On the shared store it then lands the answer there (gitpub.store.lander), out of reach of
# the command, which never sees what the lander needs.
_WRAP = (
    's="$1"; p="$2"; shift 2; echo $$ > "$p.tmp" && mv "$p.tmp" "$p"; '
    'env -u GITPUB_LANDING -u GITPUB_LANDING_PY "$@"; rc=$?; '
    'echo "$rc" > "$s.tmp" && mv "$s.tmp" "$s"; '
    '[ -z "$GITPUB_LANDING" ] || "$GITPUB_LANDING_PY" -m gitpub.store.lander "${s%/*}" '
    '>/dev/null; exit "$rc"'
)
_WRAP_NAME = "gitpub-step"


def _running(pid: int, status: Path) -> bool:
    """True while `pid` is our wrapper for this spool. Where /proc shows command lines, a
    reused pid (another program) does not count; elsewhere a live pid is taken as ours."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    return _WRAP_NAME.encode() in cmdline and str(status).encode() in cmdline


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_external(
    name: str,
    argv: Sequence[str],
    request: Request,
    *,
    cwd: Path,
    timeout: float,
    heartbeat: Callable[[], None] | None = None,
    beat_every: float = 30.0,
    spool: Path | None = None,
    landing: Landing | None = None,
    starting: Callable[[], object] | None = None,
) -> JSONObject:
    """Run one external step and return its JSON object answer, or raise StepFailed.

    With `spool`, the request, answer and exit status live in files in that folder and the
    command runs in its own session: if this process dies mid-step, the command runs on to
    its end, and the next worker adopts its answer instead of paying for the step again.
    With `landing` (the shared store), the answer is also landed in the store, so a worker
    on another node adopts it too. `starting` is called right before a command starts (not
    when a running one is adopted): the throttle's rate."""
    run = _Run(name, argv, request, cwd, timeout, heartbeat, beat_every, landing, starting)
    if spool is None:
        with tempfile.TemporaryDirectory(prefix="gitpub-step-") as tmp:
            return _run_spooled(run, Path(tmp))
    return _run_spooled(run, spool)


class _Run(NamedTuple):
    name: str
    argv: Sequence[str]
    request: Request
    cwd: Path
    timeout: float
    heartbeat: Callable[[], None] | None
    beat_every: float
    landing: Landing | None
    starting: Callable[[], object] | None


def _run_spooled(run: _Run, spool: Path) -> JSONObject:
    """The answer of a run this spool's wrapper already started (`_adopt_running`), or of
    one landed in the shared store, else of the command started now."""
    spool.mkdir(parents=True, exist_ok=True)
    answer = _adopt_running(run, spool)
    if answer is not None:
        return answer
    landing = run.landing
    landed = None if landing is None else landing.adopt(run.timeout, run.heartbeat, run.beat_every)
    if landed is not None:
        return _adopted(run.name, landed)
    if run.heartbeat is not None:
        # A checkpoint before what a model call bills: a worker stopped since its last one
        # may have lost the job to one that is running this very step (LeaseLost here).
        run.heartbeat()
    if run.starting is not None:
        run.starting()
    return _wait(run, spool, _start(run, spool))


_FILES = ("pid", "stdout", "stderr", "status")
"""The spool's files: the wrapper's pid, the command's output, its exit status."""


def _adopt_running(run: _Run, spool: Path) -> JSONObject | None:
    """The answer of the run a dead worker's wrapper left in the spool, waited for while it
    runs (StepFailed when it runs out of time); None when there is none to adopt."""
    pid_file, out, err, status = (spool / n for n in _FILES)
    if (spool / "request.json").exists() and not pid_file.exists():
        # A step may have been started a moment ago by a worker that died at once: its
        # wrapper writes the pid first thing. Give it that moment before starting anew.
        grace = time.monotonic() + 2.0
        while not pid_file.exists() and time.monotonic() < grace:
            time.sleep(0.05)
    pid = _read_pid(pid_file)
    if pid is None:
        return None
    started_at = pid_file.stat().st_mtime
    deadline = time.monotonic() + max(0.0, started_at + run.timeout - time.time())
    last_beat = time.monotonic()
    while _running(pid, status) and time.monotonic() < deadline:
        time.sleep(0.05)
        if run.heartbeat is not None and time.monotonic() - last_beat >= run.beat_every:
            run.heartbeat()
            last_beat = time.monotonic()
    if _running(pid, status):
        _kill_group(pid)
        raise StepFailed(f"{run.name} step timed out after {run.timeout:g}s")
    if status.is_file():
        return _answer(run.name, status, out, err)
    return None  # it died without an exit status (killed with us, say): run it again


def _start(run: _Run, spool: Path) -> subprocess.Popen[bytes]:
    """The command started under its wrapper, in a session of its own, on a fresh spool."""
    pid_file, out, err, status = (spool / n for n in _FILES)
    env = None
    if run.landing is not None:
        env = {**os.environ, **run.landing.begin(f"{socket.gethostname()}:{os.getpid()}")}
    for stale in (pid_file, out, err, status):
        stale.unlink(missing_ok=True)
    (spool / "request.json").write_text(json.dumps(run.request, ensure_ascii=False), "utf-8")
    try:
        with (
            (spool / "request.json").open("rb") as fin,
            out.open("wb") as fout,
            err.open("wb") as ferr,
        ):
            return subprocess.Popen(
                ["/bin/sh", "-c", _WRAP, _WRAP_NAME, str(status), str(pid_file), *run.argv],
                cwd=run.cwd,
                stdin=fin,
                stdout=fout,
                stderr=ferr,
                start_new_session=True,
                env=env,
            )
    except OSError as exc:
        raise StepFailed(
            f"{run.name} step {run.argv[0]!r} could not start: {exc.strerror}"
        ) from None


def _wait(run: _Run, spool: Path, proc: subprocess.Popen[bytes]) -> JSONObject:
    """The started command's answer, as soon as its exit status is written."""
    _, out, err, status = (spool / n for n in _FILES)
    _await(proc, status, run)
    if not status.is_file():
        raise StepFailed(f"{run.name} step {run.argv[0]!r} was killed (exit {proc.returncode})")
    return _answer(run.name, status, out, err)


def _await(proc: subprocess.Popen[bytes], status: Path, run: _Run) -> None:
    """Until the command's exit status is written (or its wrapper ended without one). Not
    until the wrapper ends: on the shared store it goes on to land the answer, which this
    worker, alive, records itself; the lander runs on, in its own session, for the case
    this worker dies."""
    deadline = time.monotonic() + run.timeout
    last_beat = time.monotonic()
    while not status.is_file():
        try:
            proc.wait(timeout=_POLL)
            return
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            _kill_group(proc.pid)
            proc.wait()
            raise StepFailed(f"{run.name} step timed out after {run.timeout:g}s") from None
        if run.heartbeat is not None and time.monotonic() - last_beat >= run.beat_every:
            run.heartbeat()
            last_beat = time.monotonic()


_POLL = 0.02
"""Seconds between two looks for a running step's exit status."""


def _read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def _failed(name: str, code: str, err: str) -> StepFailed:
    tail = err.strip().splitlines()[-1:] or ["no stderr"]
    if code == "127":
        return StepFailed(f"{name} step: command not found: {sanitize(tail[0])[:300]}")
    return StepFailed(f"{name} step exited {code}: {sanitize(tail[0])[:300]}")


def _adopted(name: str, landed: JSONObject) -> JSONObject:
    """The answer a wrapper landed in the shared store, as `_answer` would have read it."""
    if landed["status"] != "0":
        raise _failed(name, str(landed["status"]), str(landed["stderr"]))
    if "answer" not in landed:
        raise StepFailed(f"{name} step answered something that is not a JSON object")
    answer = Landed(as_object(landed["answer"]))
    answer.leaks = as_list(landed.get("leaks"))
    return answer


def _answer(name: str, status: Path, out: Path, err: Path) -> JSONObject:
    code = status.read_text().strip()
    raw_out, raw_err = out.read_bytes(), err.read_text("utf-8", "replace")
    _scrub(out, err, raw_out, raw_err)
    if code != "0":
        raise _failed(name, code, raw_err)
    try:
        answer = json.loads(raw_out.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise StepFailed(f"{name} step answered something that is not JSON") from None
    if not isinstance(answer, dict):
        raise StepFailed(f"{name} step answered JSON that is not an object")
    return answer


def _scrub(out: Path, err: Path, raw_out: bytes, raw_err: str) -> None:
    """Once read, the spooled output stays on disk only sanitized (it is kept so a crash
    before the answer is recorded can still adopt it; the recorded answer is sanitized too)."""
    try:
        clean_out = json.dumps(sanitize_obj(json.loads(raw_out.decode("utf-8"))))
    except (UnicodeDecodeError, json.JSONDecodeError):
        clean_out = sanitize(raw_out.decode("utf-8", "replace"))
    for path, text in ((out, clean_out), (err, sanitize(raw_err))):
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)


def expect_fields(
    name: str,
    answer: Mapping[str, object],
    allowed: Mapping[str, type | tuple[type, ...]],
    required: Sequence[str],
) -> None:
    """Enforce the answer contract: no unknown fields, required present, types right."""
    for key in answer:
        if key not in allowed:
            raise StepFailed(f"{name} step answered unknown field {key!r}")
    for key in required:
        if answer.get(key) is None:
            raise StepFailed(f"{name} step answer lacks {key!r}")
    for key, value in answer.items():
        # null is how JSON says "absent" for an optional field; a required one was checked.
        if value is not None and not isinstance(value, allowed[key]):
            raise StepFailed(f"{name} step field {key!r} has the wrong type")
