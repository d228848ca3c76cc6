"""Operator exits from REVIEW, CONFLICT and FAILED, each recorded as an event."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Mapping, Sequence

from gitpub import intake
from gitpub.context import Context
from gitpub.core.errors import GitCommandError, InputError
from gitpub.core.files import write_atomic
from gitpub.core.states import OPERATOR_TRANSITIONS, State
from gitpub.deliver import confirm, review
from gitpub.git import trailers
from gitpub.intake import checks
from gitpub.prepare import manifest, record
from gitpub.prepare.jobtree import branch_name, discard_worktree
from gitpub.scan.sanitize import sanitize
from gitpub.store import jobs, outbox, spools
from gitpub.store.db import Connection
from gitpub.store.jobs import Job, JobUpdate

# Everything a fresh attempt must recompute; the draft checkpoint survives (see step_results).
_RESET: JobUpdate = dict(
    failure_code=None,
    base_commit=None,
    target_path=None,
    target_blob_sha256=None,
    artifact_dir=None,
    artifact_sha256=None,
    local_commit=None,
    remote_commit=None,
    withdrawn_at=None,
    attempt=0,
    next_retry_at=None,
    last_recheck_head=None,
    last_recheck_delta_sha=None,
)


def _require_operable(ctx: Context, job_id: str, verb: str) -> Job:
    job = jobs.require(ctx.store, job_id)
    withdrawn = job.state is State.PUBLISHED and job.withdrawn_at is not None
    if job.state not in OPERATOR_TRANSITIONS or (job.state is State.PUBLISHED and not withdrawn):
        raise InputError(
            f"job {job.job_id} is {job.state.value}; {verb} applies to REVIEW, CONFLICT or FAILED"
            + (" (or SCHEDULED)" if verb != "resolve --continue" else "")
            + (" (and retry to a withdrawn publication)" if verb == "retry" else "")
        )
    if withdrawn and verb != "retry":
        raise InputError(f"job {job.job_id} is a withdrawn publication; only retry applies")
    if job.state is State.SCHEDULED and verb == "resolve --continue":
        raise InputError(
            f"job {job.job_id} is SCHEDULED; `retry` publishes it now, `resolve --abandon` drops it"
        )
    return job


def _forget_commit(ctx: Context, job: Job, why: str) -> None:
    """Drop the job's unpublished local commit so no later lookup can pick it up again."""
    discard_worktree(ctx, job.job_id)
    if ctx.repo.resolve(trailers.job_ref(job.job_id)) is not None:
        with contextlib.suppress(GitCommandError):
            ctx.repo.delete_ref(trailers.job_ref(job.job_id), f"gitpub: {why} job {job.job_id}")
    intake.resolution_path(ctx, job.job_id).unlink(missing_ok=True)


def _forget_failed_steps(ctx: Context, job_id: str) -> None:
    """A fresh attempt runs every step but a finished draft again, with today's
    configuration: drop the spooled runs (a failed judge's exit status and output would
    otherwise be adopted as its answer) and every stored answer but the draft's."""
    spools.clear(ctx.store, job_id)
    folder = ctx.job_dir(job_id) / "steps"
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if entry.is_dir() and entry.name.endswith(".run"):
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name != "draft.json":
            entry.unlink(missing_ok=True)


def _already_delivered(ctx: Context, job: Job) -> str | None:
    """A FAILED job may have reached the remote after all (its push went through, every
    answer was lost). Starting it over could then publish it twice: look first."""
    if job.state is not State.FAILED or not job.artifact_sha256:
        return None
    pub = ctx.config.publish
    with ctx.locks.hold("delivery"), contextlib.suppress(GitCommandError):
        ctx.repo.fetch(pub.remote, pub.branch)
    return confirm.find_published(ctx, job)


Actor = Mapping[str, str]
"""Who acted, recorded in the operator's event (the web page names the node's user there)."""


def retry(ctx: Context, job_id: str, *, actor: Actor | None = None) -> Job:
    """Start the job again from RECEIVED against the current remote. The recorded draft is
    reused (never paid twice); every later step runs again."""
    job = _require_operable(ctx, job_id, "retry")
    found = _already_delivered(ctx, job)
    if found:
        raise InputError(
            f"job {job.job_id} is already on the remote as {found}; "
            "`git blogpub run` will record it as PUBLISHED at its next delivery probe"
        )
    _forget_commit(ctx, job, "retry")
    _forget_failed_steps(ctx, job.job_id)
    edited = _draft_from_review(ctx, job)

    def also(conn: Connection) -> None:
        outbox.settle_publish(conn, job.job_id, "retried")
        if edited is not None:
            # After the retry's own event, which keeps only the draft's record: the
            # reviewer's version is the draft from now on.
            jobs.note(conn, job.job_id, "step:draft", edited)

    try:
        return jobs.transition(
            ctx.store,
            job,
            State.RECEIVED,
            "operator:retry",
            {"from": job.state.value, **(actor or {})},
            operator=True,
            **_RESET,
            also=also,
        )
    except BaseException:
        if edited is not None:
            _restore_draft(ctx, job.job_id)
        raise


def _draft_from_review(ctx: Context, job: Job) -> dict[str, str] | None:
    """A job a reviewer edited before it was rejected or superseded starts again from the
    reviewer's last version, never from its own (which would revert the edit): that text
    becomes its draft answer. The answer's record (hash and commit), or None."""
    edit = review.last_edit(ctx, job) if job.state is State.REVIEW else None
    if edit is None:
        return None
    path = ctx.job_dir(job.job_id) / "steps" / "draft.json"
    old: dict[str, object] = json.loads(path.read_bytes()) if path.is_file() else {}
    if path.is_file():
        shutil.copyfile(path, path.with_name("draft.json.before-review"))
    answer = {**old, "text": edit["text"]}
    data = record.answer_bytes(answer)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    return {"sha256": manifest.sha256_bytes(data), "from_review": edit["commit"]}


def _restore_draft(ctx: Context, job_id: str) -> None:
    path = ctx.job_dir(job_id) / "steps" / "draft.json"
    before = path.with_name("draft.json.before-review")
    if before.is_file():
        before.replace(path)


def abandon(ctx: Context, job_id: str, *, actor: Actor | None = None) -> Job:
    job = _require_operable(ctx, job_id, "resolve --abandon")
    _forget_commit(ctx, job, "abandon")
    return jobs.transition(
        ctx.store,
        job,
        State.SKIPPED,
        "operator:abandon",
        {"from": job.state.value, **(actor or {})},
        operator=True,
        also=lambda conn: outbox.settle_publish(conn, job.job_id, "abandoned"),
    )


def resume(
    ctx: Context, job_id: str, allow: Sequence[str] = (), *, actor: Actor | None = None
) -> Job:
    """`resolve --continue`: deliver the article as a person fixed it on the job branch.

    The person rebased the job branch in its worktree and resolved the conflict; the fixed
    article becomes the job's text and the commit it sits on becomes its new base. The gates
    run again on the fixed text; the judge does not (the person has decided). `allow` names
    findings in the fixed text the person has judged not to be secrets: they are kept as
    written, and only their fingerprints are recorded."""
    job = _require_operable(ctx, job_id, "resolve --continue")
    branch = branch_name(job.job_id)
    head = ctx.repo.resolve(f"refs/heads/{branch}")
    worktree = ctx.worktree_dir(job.job_id)
    if head is None or not job.target_path or head == job.local_commit:
        raise InputError(
            f"job {job.job_id}: nothing to continue from; fix the article on branch {branch} "
            f"(worktree {worktree}: rebase it onto the remote branch, resolve, commit), "
            "or use `retry` / `resolve --abandon`"
        )
    if (worktree / ".git").exists() and not ctx.repo.is_clean(worktree):
        raise InputError(f"job {job.job_id}: worktree {worktree} has uncommitted changes")
    data = ctx.repo.blob_at(head, job.target_path)
    if data is None:
        raise InputError(f"job {job.job_id}: {job.target_path} is missing on branch {branch}")
    parents = ctx.repo.commit(head).parent_ids
    if not parents:
        raise InputError(f"job {job.job_id}: branch {branch} has no parent to build on")
    text = checks.decode_source(
        data, f"{branch}:{job.target_path}", ctx.config.publish.max_source_bytes
    )
    allow = checks.check_allow(allow)
    allowed = intake.allowed(ctx, job.job_id) | frozenset(allow)
    target = job.target_path
    _forget_commit(ctx, job, "continue")
    _forget_failed_steps(ctx, job.job_id)
    clean = sanitize(text, allowed)  # what is not allowed is still never persisted
    write_atomic(intake.resolution_path(ctx, job.job_id), clean.encode("utf-8"))
    return jobs.transition(
        ctx.store,
        job,
        State.RECEIVED,
        "operator:continue",
        {
            "from": job.state.value,
            "commit": str(head),
            **({"allow": list(allow)} if allow else {}),
            **(actor or {}),
        },
        operator=True,
        **JobUpdate({**_RESET, "base_commit": str(parents[0]), "target_path": target}),
        also=lambda conn: outbox.settle_publish(conn, job.job_id, "retried"),
    )


def conflict_steps(ctx: Context, job: Job) -> list[str]:
    """The commands that settle a CONFLICT by hand, with this blog's remote, branch and paths
    written in (a blog publishing `master`, or through a remote not named origin, must not be
    told `origin/main`): `show` prints them, in order, ready to paste."""
    import shlex

    pub, short = ctx.config.publish, job.job_id[:8]
    worktree, branch = ctx.worktree_dir(job.job_id), branch_name(job.job_id)
    target = shlex.quote(job.target_path or "THE-ARTICLE")
    steps = []
    if not (worktree / ".git").exists():
        if ctx.repo.resolve(f"refs/heads/{branch}") is None:
            start = f"-b {branch} {pub.remote}/{pub.branch}"
        else:
            start = branch
        steps.append(f"git worktree add {shlex.quote(str(worktree))} {start}")
    steps += [
        f"cd {shlex.quote(str(worktree))}",
        f"git fetch {pub.remote} && git rebase {pub.remote}/{pub.branch}",
        f"# edit {target} so it holds both versions, then:",
        f"git add {target} && git rebase --continue",
        f"cd {shlex.quote(str(ctx.repo.root))} && git blogpub resolve {short} --continue",
        f"# or start over: git blogpub retry {short}; give up: git blogpub resolve {short} "
        "--abandon",
    ]
    return steps
