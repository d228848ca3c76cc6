"""The network part of delivery, for every ready job at once: one fetch, the job commits
stacked in order on the remote tip (in memory), one push carrying them all, one fetch, and
each job confirmed on its own by its trailers and its content.

A job whose CAS, recheck or rebase fails drops out of the stack with its own result and the
others go on without it. Runs under the delivery lock; the caller records the outcomes."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import GitCommandError, git_cause
from gitpub.core.ids import Oid
from gitpub.deliver import confirm, faults, guard, landmark, recheck, replay
from gitpub.deliver.commit import load_manifest, point_jobs_refs, target_unchanged
from gitpub.git import objects, repair
from gitpub.git.repo import PushResult
from gitpub.prepare import target as rules
from gitpub.store import jobs, leases, reads
from gitpub.store.jobs import Job, Move

# in_review: pushed to its review branch (gitpub.deliver.review), waiting for a person's merge
Outcome = Literal["published", "retry", "conflict", "review", "recheck", "fault", "in_review"]
"""What delivery made of one job: relay turns each into its state (recheck: judged first;
fault: the worker's failure accounting)."""


@dataclass
class Result:
    kind: Outcome
    reason: str = ""
    remote_commit: Oid | None = None
    detail: dict[str, object] = field(default_factory=dict)
    delta: recheck.Delta | None = None
    error: Exception | None = None  # kind "fault": what went wrong with this job alone
    taken_down_at: Oid | None = None  # "published", by a push the branch at this tip lost
    mark: Oid | None = None  # the job's landmark on the remote, removed once this is recorded


Results = dict[str, Result]


def fetch_repairing(ctx: Context) -> repair.Repaired | None:
    """Fetch the published branch; when git blames the repository's own state (a half-made
    worktree, a ref at a pruned object, a lock a killed fetch left), repair and fetch again."""
    pub = ctx.config.publish
    try:
        ctx.repo.fetch(pub.remote, pub.branch)
        return None
    except GitCommandError as exc:
        if not repair.wedged(exc.stderr):
            raise
    with ctx.locks.hold("repo"):
        repaired = repair.repair(ctx.repo, ctx.tracking_ref)
    ctx.repo.fetch(pub.remote, pub.branch)
    return repaired


def deliver_locked(
    ctx: Context, held: Sequence[Job], probes: frozenset[str], again: frozenset[str] = frozenset()
) -> Results:
    """Deliver the leased jobs, in order; a result for every job whose lease still held.

    `probes` are jobs whose retry budget is spent (FAILED): they are pushed like the others
    but never judged again. `again`: jobs delivered before, whose push may have landed."""
    failed = fetch_result(ctx, held)
    if failed:
        return {j.job_id: failed for j in held}
    results: Results = {}
    try:
        marks = landmark.look(ctx, [j for j in held if j.job_id in again])
    except GitCommandError as exc:
        # Whether an earlier push landed is unknown: those jobs are not pushed blind.
        failed = Result(
            "retry", f"ls-remote failed: {git_cause(exc.stderr)}", detail={"git": exc.stderr}
        )
        results.update({j.job_id: failed for j in held if j.job_id in again})
        marks = {}
    known_before(ctx, [j for j in held if j.job_id not in results], marks, results)
    heads = job_commits(ctx, [j for j in held if j.job_id not in results], results)
    pending = [j for j in held if j.job_id in heads and j.job_id not in results]
    races = ctx.config.retry.push_races
    for race in range(races):
        if not pending:
            return results
        pending = _push_round(ctx, pending, heads, probes, race, results)
    for job in pending:
        results[job.job_id] = Result("retry", f"remote moved during {races} push attempts")
    return results


def known_before(
    ctx: Context,
    held: Sequence[Job],
    marks: Mapping[str, landmark.Landmark],
    results: Results,
) -> None:
    """The result of each job an earlier push already delivered, written into `results`:
    on the remote branch, or landed there once and taken down since (what the tracking ref's
    history remembers, or the job's landmark on the remote: `marks`). Pushing such a job
    again would publish it twice, or undo a person's takedown."""
    found = confirm.find_published_all(ctx, held)
    tip = ctx.repo.resolve(ctx.tracking_ref)
    missing = [j for j in held if not found.get(j.job_id)]
    gone = confirm.taken_down_since(ctx, missing, tip) if tip is not None else {}
    for job in held:
        mark = marks.get(job.job_id)
        at = found.get(job.job_id)
        if at:
            # A previous push whose answer we never recorded. Never push twice.
            results[job.job_id] = Result(
                "published", "found on remote before pushing", at, mark=_mark(mark)
            )
        elif job.job_id in gone or mark is not None:
            # Published by that push, then taken down: settled withdrawn at once (the takedown
            # look of this very process may have seen this tip already: it looks again only
            # once the tip moves).
            landed = gone.get(job.job_id) or (mark.landed if mark else None)
            results[job.job_id] = Result(
                "published",
                "on the remote once, taken down since",
                landed,
                taken_down_at=tip,
                mark=_mark(mark),
            )


def _mark(found: landmark.Landmark | None) -> Oid | None:
    return found.mark if found is not None else None


def job_commits(ctx: Context, held: list[Job], results: Results) -> dict[str, Oid]:
    """Each job's commit, whole; a job whose commit cannot be had drops out with its fault."""
    try:
        return replay.job_commits(ctx, held)
    except Exception:
        pass  # one job's trouble: find whose, one by one
    heads: dict[str, Oid] = {}
    for job in held:
        try:
            heads[job.job_id] = replay.job_commit(ctx, job)
        except Exception as exc:  # this job's trouble, not the batch's
            results[job.job_id] = Result("fault", str(exc), error=exc)
    return heads


def _push_round(
    ctx: Context,
    pending: list[Job],
    heads: dict[str, Oid],
    probes: frozenset[str],
    race: int,
    results: Results,
) -> list[Job]:
    """One stack, one push, one confirmation: the jobs left for another round (the remote
    moved under the push), every other job's result written into `results`."""
    repo, pub = ctx.repo, ctx.config.publish
    # A checkpoint before every push: network rounds can be slow, and a job whose lease was
    # taken meanwhile must not be pushed by us (its new holder drives it).
    pending = leases.renew_many(ctx.store, pending, ctx.config.retry.lease_seconds)
    tip = repo.resolve(ctx.tracking_ref)
    if tip is None:
        for job in pending:
            results[job.job_id] = Result("retry", f"remote branch {pub.branch!r} does not exist")
        return []
    checked = guard.Checked()
    stacked, stack = stack_jobs(ctx, pending, heads, tip, probes, results, checked)
    if not stacked:
        return []
    stacked = record_stack(ctx, stacked, heads)
    mark = landmark.make(ctx, {j.job_id: heads[j.job_id] for j in stacked})
    marks: dict[str, Oid] = dict.fromkeys((j.job_id for j in stacked), mark)
    crash.point("after_rebase_before_push")
    pushed = guard.push(
        repo, checked, pub.remote, tip, stack, pub.branch, marks=landmark.refs(marks)
    )
    if pushed.ok:
        crash.point("after_push_before_db")
        _note_all(ctx, stacked, "push", lambda j: {"commit": heads[j.job_id], "race": race})
    elif not pushed.rejected_non_ff and not faults.ref_lock_race(pushed.stderr):
        failure = push_failed(ctx, stacked, heads, pushed.stderr)
        for job in stacked:
            results[job.job_id] = failure
        return []
    elif earlier := set(landmark.refused(pushed.stderr)):
        # Refused for an earlier attempt's landmark, not for a moved branch: it goes, and the
        # next round pushes again.
        landmark.clear_earlier(ctx, [j for j in stacked if j.job_id in earlier])
    return _confirm_round(ctx, stacked, pushed, marks if pushed.marked else {}, race, results)


def _confirm_round(
    ctx: Context,
    stacked: list[Job],
    pushed: PushResult,
    marks: Mapping[str, Oid],
    race: int,
    results: Results,
) -> list[Job]:
    """After a push (accepted, or refused as the remote moved): fetch, and find each stacked
    job on the remote branch. The jobs left for another round; `marks`: the landmarks the
    push created, each removed once its job's publication is recorded."""
    failed = fetch_result(ctx, stacked)
    if failed:
        for job in stacked:
            results[job.job_id] = failed
        return []
    found = confirm.find_published_all(ctx, stacked)
    crash.point("after_batch_confirmed_before_db")
    left = []
    for job in stacked:
        if found.get(job.job_id):
            results[job.job_id] = Result(
                "published",
                "confirmed by trailers and content",
                found[job.job_id],
                mark=marks.get(job.job_id),
            )
        elif pushed.ok:
            results[job.job_id] = Result(
                "retry", "push accepted but the commit is not on the remote branch"
            )
        else:
            left.append(job)
    why = "non-fast-forward" if pushed.rejected_non_ff else "remote ref lock race"
    _note_all(ctx, left, "push:rejected", lambda j: {"race": race, "reason": why})
    return left


def stack_jobs(
    ctx: Context,
    pending: list[Job],
    heads: dict[str, Oid],
    tip: Oid,
    probes: frozenset[str],
    results: Results,
    checked: guard.Checked,
) -> tuple[list[Job], Oid]:
    """Each job's commit replayed onto the one before it, starting at the remote tip. A job
    whose target moved on the remote, which needs a recheck first, whose replay conflicts or
    whose commit would change more than its own files drops out with its result; the next job
    is stacked on the last one that stayed."""
    stack, stacked = tip, []
    # Under the delivery lock nobody publishes: read once what each article had published.
    absent = [
        j.target_path for j in pending if j.target_path and not ctx.repo.blob_at(tip, j.target_path)
    ]
    published = reads.published_to_each(ctx.store, absent)
    for job in pending:
        held_back = _held_back(ctx, job, tip, job.job_id in probes, published)
        if held_back is not None:
            results[job.job_id] = held_back
            continue
        try:
            job, rebased, conflict = replay.rebase(ctx, job, heads[job.job_id], stack)
        except Exception as exc:  # this job's trouble, not the batch's
            results[job.job_id] = Result("fault", str(exc), error=exc)
            continue
        if conflict is not None:
            results[job.job_id] = _conflict_or_clash(ctx, job, stack, conflict)
            continue
        assert rebased is not None
        try:
            own = guard.WriteSet({e.path: e.sha256 for e in load_manifest(ctx, job)})
        except Exception as exc:  # this job's trouble, not the batch's
            results[job.job_id] = Result("fault", str(exc), error=exc)
            continue
        beyond = checked.check(ctx.repo, stack, rebased, own)
        if beyond:
            results[job.job_id] = Result(
                "review",
                "the commit would change more than the job's own files: " + "; ".join(beyond),
                detail={"failure_code": "write_set_violation", "paths": beyond},
            )
            continue
        stack = heads[job.job_id] = rebased
        stacked.append(job)
        crash.point("during_batch_stacking")
    return stacked, stack


def _held_back(
    ctx: Context, job: Job, tip: Oid, probe: bool, published: Mapping[str, Sequence[Job]]
) -> Result | None:
    """Why the job is not stacked onto `tip` now: its target moved, a person took its article
    down (`published`: the PUBLISHED jobs of each article `tip` lacks), or (unless a probe)
    new articles need a recheck first; None when it goes on."""
    # CAS against the remote, not the stack: a batch never holds two jobs that write the
    # same article (see worker.run_until_idle), so only others can have moved it.
    if not target_unchanged(ctx, job, tip):
        return Result(
            "conflict",
            f"{job.target_path} changed on the remote since the snapshot",
            detail={"failure_code": "target_changed", "paths": [job.target_path]},
        )
    why = _taken_down(ctx, job, tip, published)
    if why is not None:
        return Result(
            "review", why, detail={"failure_code": rules.TAKEN_DOWN, "paths": [job.target_path]}
        )
    delta = None if probe else recheck.pending(ctx, job, tip)
    if delta is not None:
        return Result("recheck", "new articles on the remote", delta=delta)
    return None


def _taken_down(
    ctx: Context, job: Job, tip: Oid, published: Mapping[str, Sequence[Job]]
) -> str | None:
    """Why the job must not bring its article back onto `tip` (`rules.takedown`): checked
    again here, as a job prepared before a person's takedown is delivered after it.
    `published` holds only articles `tip` lacks (`stack_jobs` reads it once for a batch)."""
    path = job.target_path
    if not path or path not in published:
        return None  # at the tip, or never published: nothing to take down
    history = functools.partial(jobs.events, ctx.store, job.job_id)
    let_go = functools.partial(confirm.once_held, ctx, tip)  # `tip` is the tracking ref's now
    return rules.takedown(ctx.repo, job.job_id, path, published[path], tip, history, let_go)


def _conflict_or_clash(ctx: Context, job: Job, tip: Oid, conflict: list[str]) -> Result:
    """A replay that conflicts: REVIEW when the job's own paths clash with the tip (a file
    where the job needs a folder, a folder where it writes a file: it would have to delete
    another file, whatever merge made of it), else a CONFLICT for a person to merge."""
    try:
        paths = [e.path for e in load_manifest(ctx, job)]
    except Exception:  # noqa: BLE001 - without its manifest, the conflict says enough
        paths = []
    clash = rules.clash(paths, ctx.repo.files_under(tip, ctx.config.publish.content))
    if clash is not None:
        return Result(
            "review", clash, detail={"failure_code": "write_set_violation", "paths": conflict}
        )
    return Result(
        "conflict",
        "rebase conflict in " + ", ".join(conflict),
        detail={"failure_code": "rebase_conflict", "paths": conflict},
    )


def record_stack(ctx: Context, stacked: list[Job], heads: dict[str, Oid]) -> list[Job]:
    """The job refs at the rebased commits (one ref transaction), then the database (one
    SQLite transaction): a crash between the two leaves refs that recovery trusts anyway,
    since each ref names a commit carrying the job's trailers and manifest."""
    moved = [j for j in stacked if heads[j.job_id] != j.local_commit]
    if moved:
        with ctx.locks.hold("repo"):
            point_jobs_refs(ctx, {j.job_id: heads[j.job_id] for j in moved}, "rebase")
    crash.point("after_batch_refs_before_db")
    if not moved:
        return stacked
    fresh = jobs.transition_all(
        ctx.store,
        [
            Move(j, None, "rebase", {"commit": heads[j.job_id]}, {"local_commit": heads[j.job_id]})
            for j in moved
        ],
    )
    return [fresh.get(j.job_id, j) for j in stacked]


def _note_all(
    ctx: Context, held: list[Job], step: str, detail: Callable[[Job], Mapping[str, object]]
) -> None:
    if held:
        jobs.transition_all(ctx.store, [Move(j, None, step, detail(j)) for j in held])


def push_failed(ctx: Context, stacked: list[Job], heads: dict[str, Oid], stderr: str) -> Result:
    """A push that failed for another reason than a moved remote: git's own cause in the
    reason (not the porcelain's closing "Done"), its whole output in the event."""
    repo = ctx.repo
    wanted = [
        o for j in stacked for o in objects.closure(repo, heads[j.job_id], replay.paths(ctx, j))
    ]
    if objects.missing(repo, wanted):
        # A `git gc --prune=now` took objects of a job commit: forget them, so the next
        # attempt makes them again from the artifacts.
        with ctx.locks.hold("repo"):
            repair.repair(repo)
        return Result("retry", "objects of the job commit were removed; it will be made again")
    return Result(
        "retry", f"push failed: {git_cause(stderr) or 'no output'}", detail={"git": stderr}
    )


def fetch_result(ctx: Context, held: Sequence[Job]) -> Result | None:
    """Fetch the published branch; a retry Result when the remote cannot be reached."""
    try:
        repaired = fetch_repairing(ctx)
    except GitCommandError as exc:
        return Result("retry", f"fetch failed: {git_cause(exc.stderr)}", detail={"git": exc.stderr})
    if repaired:
        _note_all(ctx, list(held), "repair", lambda _: repaired.summary())
    return None
