"""Failures that come back: which class an error belongs to, and the explicit state a job
ends in once the same job has failed `max_attempts` times.

A git or filesystem error that repeats on every pass (a signing set-up without a key, a file
name the filesystem refuses, a full disk, objects pruned from under a commit) must not keep
a job "in flight" for ever. The class becomes the job's failure_code, and git's own words
are kept whole in the event (`show`), their first line in the reason (`status`)."""

from __future__ import annotations

import errno
import re
from dataclasses import dataclass

import pygit2

from gitpub.context import Context
from gitpub.core.errors import GitCommandError, GitpubError, JobFault
from gitpub.core.states import State
from gitpub.scan.sanitize import sanitize
from gitpub.store import jobs
from gitpub.store.errors import StoreError
from gitpub.store.jobs import Job

DISK_FULL = "disk_full"


@dataclass(frozen=True)
class Fault:
    code: str  # commit_refused, sign_failed, path_refused, disk_full, objects_missing, …
    message: str  # one line
    detail: str  # git's (or the OS's) whole output, for `show`

    @property
    def deterministic(self) -> bool:
        """Trying again at once gives the same answer: no reason to wait for the next pass."""
        return self.code in DETERMINISTIC


DETERMINISTIC = frozenset({"commit_refused", "sign_failed", "path_refused"})

_BY_STDERR = (
    ("No space left on device", DISK_FULL),
    ("Disk quota exceeded", DISK_FULL),
    ("gpg failed to sign", "sign_failed"),
    ("failed to sign", "sign_failed"),
    ("Please tell me who you are", "commit_refused"),
    ("empty ident name", "commit_refused"),
    ("unable to auto-detect email", "commit_refused"),
    ("failed to write commit object", "commit_refused"),
    ("File name too long", "path_refused"),
    ("invalid path", "path_refused"),
    ("bad object", "objects_missing"),
    ("missing object", "objects_missing"),
    ("did not send all necessary objects", "objects_missing"),
    ("unable to read", "objects_missing"),
)

_BY_ERRNO = {
    errno.ENOSPC: DISK_FULL,
    errno.EDQUOT: DISK_FULL,
    errno.ENAMETOOLONG: "path_refused",
    errno.EILSEQ: "path_refused",
    errno.EINVAL: "path_refused",
    errno.EACCES: "permission_denied",
    errno.EPERM: "permission_denied",
    errno.EROFS: "permission_denied",
}


_REF_RACE = re.compile(
    r"cannot lock ref '[^']*': (is at \S+ but expected \S+|reference already exists)"
    r"|Unable to create '[^']*\.lock': File exists"
)


def ref_lock_race(output: str) -> bool:
    """Whether a failed push lost a race for the remote's ref: another writer moved it (or
    held its lock) between the remote reading the old value and updating it. That is a
    moved remote like a non-fast-forward — fetch and try again at once — not a failure that
    deserves the retry budget and a wait of `base_delay`."""
    return _REF_RACE.search(output) is not None


def classify(exc: BaseException) -> Fault:
    if isinstance(exc, JobFault):
        return Fault(exc.code, exc.message, exc.stderr)
    if isinstance(exc, GitCommandError):
        return Fault(_code_of(exc.stderr, "git_failed"), exc.message, exc.stderr)
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        code = _BY_ERRNO.get(exc.errno or 0, "filesystem")
        return Fault(code, f"{exc.strerror or exc}{where}", str(exc))
    if isinstance(exc, StoreError):
        text = str(exc)
        code = DISK_FULL if "full" in text else "database"
        return Fault(code, text, text)  # the store's words name the store already
    if isinstance(exc, (pygit2.GitError, KeyError)) and _looks_missing(str(exc)):
        return Fault("objects_missing", f"object not found: {exc}", str(exc))
    if isinstance(exc, GitpubError):
        return Fault("error", exc.message, exc.message)
    return Fault("internal", f"internal error: {type(exc).__name__}: {exc}", repr(exc))


def _code_of(stderr: str, default: str) -> str:
    for needle, code in _BY_STDERR:
        if needle in stderr:
            return code
    return default


def _looks_missing(text: str) -> bool:
    return "not found" in text or "object" in text or len(text.strip("'")) in (40, 64)


def failures_since_reset(ctx: Context, job_id: str) -> int:
    """worker:error events since the job was created or an operator last started it over."""
    count = 0
    for ev in reversed(jobs.events(ctx.store, job_id)):
        if str(ev["step"]).startswith("operator:"):
            break
        if ev["step"] == "worker:error":
            count += 1
    return count


def note(ctx: Context, job_id: str, fault: Fault) -> tuple[Job | None, bool]:
    """Record the failure; once the job has failed max_attempts times, end it in REVIEW (or
    FAILED, when it was delivering) with the failure's class as its failure_code.

    Returns the job as it ended (None while it still has tries) and whether to try again at
    once: a deterministic failure gains nothing from waiting for the next pass."""
    job = jobs.get(ctx.store, job_id)
    if job is None or job.state not in _EXITS:
        if job is not None:
            jobs.record(ctx.store, _unleased(job), "worker:error", _detail(fault))
        return None, False
    jobs.record(ctx.store, _unleased(job), "worker:error", _detail(fault))
    if failures_since_reset(ctx, job_id) < job.max_attempts:
        return None, fault.deterministic
    return give_up(ctx, job_id, fault), False


def _detail(fault: Fault) -> dict[str, str]:
    detail = {"error": fault.message, "code": fault.code}
    if fault.detail and fault.detail != fault.message:
        detail["git"] = fault.detail
    return detail


def _unleased(job: Job) -> Job:
    # Recorded by the worker that caught the error, whose lease the finally-block releases.
    return job._replace(lease_token=None)


# From each state in flight, the way out the transition table allows to an explicit state.
_EXITS: dict[State, tuple[State, ...]] = {
    State.RECEIVED: (State.PREPARING, State.REVIEW),
    State.PREPARING: (State.REVIEW,),
    State.READY_TO_COMMIT: (State.LOCAL_COMMITTING, State.RECOVERING, State.REVIEW),
    State.LOCAL_COMMITTING: (State.RECOVERING, State.REVIEW),
    State.RECOVERING: (State.REVIEW,),
    State.RECHECK_CANDIDATES: (State.REVIEW,),
    State.LOCAL_COMMITTED: (State.PUSHING, State.RETRY_WAIT, State.FAILED),
    State.PUSHING: (State.RETRY_WAIT, State.FAILED),
    State.RETRY_WAIT: (State.FAILED,),
}


def give_up(ctx: Context, job_id: str, fault: Fault) -> Job | None:
    job = jobs.get(ctx.store, job_id)
    if job is None or job.state not in _EXITS:
        return job
    job = _unleased(job)
    reason = fault.message.strip().splitlines()[0] if fault.message.strip() else fault.code
    for step in _EXITS[job.state]:
        final = step in (State.REVIEW, State.FAILED)
        if final:
            job = jobs.transition(
                ctx.store,
                job,
                step,
                "fault:gave-up",
                {"reason": sanitize(reason), "failure_code": fault.code},
                failure_code=fault.code,
            )
        else:
            job = jobs.transition(ctx.store, job, step, "fault:way-out")
        job = _unleased(job)
    return job
