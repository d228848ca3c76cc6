"""Review before publish: each job commit goes to its own branch on the remote, and a person
publishes it by merging that branch — in any way their forge offers.

- Delivery (`deliver_locked`) stacks the job commit on the published branch's tip exactly as a
  batch does (CAS, recheck, replay, the write-set guard), then pushes it to a branch of its
  own: `<review_prefix><target path>/<short job id>`, so two articles (two `index.md` of two
  bundles, two posts of one title) never share one. The job waits in IN_REVIEW. A newer job
  for the same target supersedes an older one still in review: the older goes to REVIEW,
  where a person sees it and may retry it; a job of another target never touches it.
- Watching (`watch`) decides on any node, from the store and the remote alone, by the
  article and its assets — never by derived files (font subsets, chunk CSS), which every
  merge may regenerate. The versions that count are the job's own and each one a reviewer
  pushed to the review branch (recorded in the store as `review:edited` when the watch sees
  the branch move). A merge commit, a squash and a rebase all leave one of them on the
  published branch, while only the first keeps the trailers: the job is then PUBLISHED with
  the first commit of the published branch that holds it (and "edited in review" when it is
  the reviewer's). A review branch gone without that was rejected (REVIEW). A remote that
  cannot be reached decides nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import NamedTuple

from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import GitCommandError, git_cause
from gitpub.core.files import write_atomic
from gitpub.core.ids import Oid
from gitpub.core.jsonvalue import JSON, as_object
from gitpub.core.states import State
from gitpub.deliver import batch, guard
from gitpub.deliver.batch import Result, Results
from gitpub.deliver.commit import ArtifactsDamaged, load_manifest
from gitpub.git.process import git_out
from gitpub.prepare import manifest
from gitpub.prepare.jobtree import discard_worktrees
from gitpub.store import jobs, leases, outbox, reads
from gitpub.store.db import Connection
from gitpub.store.jobs import Job, LeaseLost, Move

REJECTED = "rejected_in_review"
"""The failure code of a job whose review branch was deleted without a merge."""

SUPERSEDED = "superseded_in_review"
"""The failure code of a job a newer job of the same target replaced in review."""

STRANDED = "review_base_rewritten"
"""The failure code of a job whose review branch stood on commits a person's force-push took
off the published branch: the branch was withdrawn, so no merge of it brings them back."""

WITHDRAWING = "review:withdrawing"
"""The event said just before gitpub deletes a stranded job's review branch."""

HISTORY = 1000
"""Commits of the published branch (first parents, newest first) searched for a job's bytes."""


def branch_for(ctx: Context, job: Job) -> str:
    """`<review_prefix><target path>/<short job id>`: one job, one target, one branch. Each
    part of the path keeps its letters (any script: git and the forges take UTF-8 names) and
    digits; what a ref name may not hold becomes `-`."""
    parts = [_ref_part(p) for p in PurePosixPath(job.target_path or "article").parts]
    return ctx.config.publish.review_prefix + "/".join([*parts, job.job_id[:8]])


def _ref_part(part: str) -> str:
    text = re.sub(r"[^\w.-]+", "-", part)
    text = re.sub(r"\.{2,}", ".", text).lstrip(".")
    while text.endswith((".lock", ".")):
        text = text.removesuffix(".lock").rstrip(".")
    return text or "-"


def remote_branches(ctx: Context) -> dict[str, Oid]:
    """The review branches on the remote now (branch → commit); GitCommandError when the
    remote cannot be asked, which must never read as "deleted"."""
    pub = ctx.config.publish
    out = git_out(
        ["ls-remote", "--heads", pub.remote, f"refs/heads/{pub.review_prefix}*"], ctx.repo.root
    )
    found: dict[str, Oid] = {}
    for line in out.splitlines():
        oid, _, ref = line.partition("\t")
        if ref.startswith("refs/heads/"):
            found[ref.removeprefix("refs/heads/")] = Oid(oid)
    return found


# ------------------------------------------------------------------------------ delivery


def deliver_locked(ctx: Context, held: Sequence[Job], probes: frozenset[str]) -> Results:
    """Push each review job's commit, stacked alone on the published tip, to its review
    branch. Under the delivery lock; the caller records the outcomes ("in_review" carries
    the branch in `detail`)."""
    failed = batch.fetch_result(ctx, held)
    if failed:
        return {j.job_id: failed for j in held}
    try:
        there = remote_branches(ctx)
    except GitCommandError as exc:
        why = Result(
            "retry", f"ls-remote failed: {git_cause(exc.stderr)}", detail={"git": exc.stderr}
        )
        return {j.job_id: why for j in held}
    results: Results = {}
    tip = ctx.repo.resolve(ctx.tracking_ref)
    line = _first_parents(ctx, tip) if tip is not None else []
    for job in held:
        # Merged while its answer was lost (a crash after the push, then a person's merge):
        # pushing it again would only bring back a branch the person deleted.
        merged = _merged(ctx, job, line)
        if merged is not None:
            results[job.job_id] = Result("published", "merged from review", merged)
    heads = batch.job_commits(ctx, [j for j in held if j.job_id not in results], results)
    pub = ctx.config.publish
    for job in held:
        if job.job_id not in heads or job.job_id in results:
            continue
        if tip is None:
            results[job.job_id] = Result("retry", f"remote branch {pub.branch!r} does not exist")
            continue
        mine = leases.renew_many(ctx.store, [job], ctx.config.retry.lease_seconds)
        if not mine:
            continue  # taken by another worker: theirs to push
        checked = guard.Checked()
        stacked, head = batch.stack_jobs(ctx, mine, heads, tip, probes, results, checked)
        if not stacked:
            continue
        batch.record_stack(ctx, stacked, heads)
        branch = branch_for(ctx, job)
        # Replaced, not fast-forwarded, and only if it is still what we just saw: a branch
        # someone else moved meanwhile is looked at again on the next attempt.
        pushed = guard.push(
            ctx.repo, checked, pub.remote, tip, head, branch, expect=there.get(branch, "")
        )
        if not pushed.ok:
            results[job.job_id] = batch.push_failed(ctx, stacked, heads, pushed.stderr)
            continue
        crash.point("after_review_push_before_db")
        results[job.job_id] = Result(
            "in_review", f"pushed to {branch}", detail={"branch": branch, "commit": head}
        )
    return results


def in_review_moves(ctx: Context, job: Job, result: Result) -> list[Move]:
    """IN_REVIEW for the job pushed; REVIEW "superseded" for an older job of the same target
    still waiting in review (its branch stays: the person decides, and may retry it)."""
    branch = str(result.detail["branch"])
    moves = [
        Move(
            job,
            State.IN_REVIEW,
            "review:pushed",
            {"branch": branch, "commit": result.detail["commit"]},
            {"review_branch": branch, "failure_code": None, "next_retry_at": None},
        )
    ]
    for older in reads.in_review(ctx.store):
        if older.target_path == job.target_path and older.job_id != job.job_id:
            moves.append(
                Move(
                    older,
                    State.REVIEW,
                    "review:superseded",
                    {
                        "reason": f"superseded by job {job.job_id} (the same article, in "
                        f"review on {branch})",
                        "by": job.job_id,
                        "branch": older.review_branch,
                    },
                    {"failure_code": SUPERSEDED},
                )
            )
    return moves


# ------------------------------------------------------------------------------ watching


class Version(NamedTuple):
    """One version of a job's article and assets: path → SHA-256 of its bytes (None: the
    version has no such file), and the commit it was read from."""

    commit: str
    files: Mapping[str, str | None]
    edited: bool  # a reviewer's, not the job's own


def watch(ctx: Context) -> list[Job]:
    """Settle the IN_REVIEW jobs a person has decided: merged (by content) → PUBLISHED,
    branch deleted unmerged → REVIEW. The jobs settled now; nothing when the remote cannot be
    reached."""
    waiting = reads.in_review(ctx.store)
    if not waiting:
        return []
    try:
        with ctx.locks.hold("delivery"):
            batch.fetch_repairing(ctx)
            there = remote_branches(ctx)
    except GitCommandError:
        return []  # unreachable: a deleted branch and a dropped network look alike
    tip = ctx.repo.resolve(ctx.tracking_ref)
    if tip is None:
        return []
    line = _first_parents(ctx, tip)
    moves: list[Move] = []
    for job in waiting:
        # Any node watches: what the job wrote is read from the store, never from a folder
        # only the node that prepared it has.
        ctx.store.fetch_folder(job.job_id)
        # Its history, read once: an edit `_versions` records adds only `review:edited`,
        # which the decisions below do not read.
        events = jobs.events(ctx.store, job.job_id)
        try:
            versions = _versions(ctx, job, events, there.get(job.review_branch or ""))
        except (ArtifactsDamaged, GitCommandError):
            continue  # nothing to match by (or the branch's commit out of reach): next pass
        gone = job.review_branch not in there
        move = _decision(ctx, job, versions, events, line, gone=gone)
        if move is None and not gone:
            move = _stranded(ctx, job, events, there[job.review_branch or ""], tip)
        if move is not None:
            moves.append(move)
    return _settle(ctx, moves)


def _stranded(
    ctx: Context, job: Job, events: Sequence[jobs.Event], branch_tip: Oid, tip: Oid
) -> Move | None:
    """REVIEW for a job whose review branch stands on a commit the published branch no longer
    has (a person force-pushed it away, say a takedown): merging the branch would bring that
    commit back, so it is withdrawn from the remote — only while it still is what was just
    read, the reviewer's edits being recorded already — and `retry` builds again on today's
    tip from the reviewer's last version. None while the branch's base is still published."""
    pushed = [str(e["detail"].get("commit")) for e in events if e["step"] == "review:pushed"]
    if not pushed or ctx.repo.resolve(pushed[-1]) is None:
        return None
    bases = [str(p) for p in ctx.repo.commit(pushed[-1]).parent_ids]
    if not bases or ctx.repo.is_ancestor(bases[0], tip):
        return None
    branch = job.review_branch or ""
    try:
        # Said before the branch goes (once, however many passes find it moved meanwhile): a
        # watcher that dies between the withdrawal and its record leaves the next one a gone
        # branch it must not read as a reviewer's "no".
        if _withdrawing(events) != bases[0]:
            job = jobs.record(ctx.store, job, WITHDRAWING, {"branch": branch, "base": bases[0]})
    except LeaseLost:
        return None  # another watcher settled it meanwhile
    withdrawn = guard.withdraw(ctx.repo, ctx.config.publish.remote, branch, branch_tip)
    if not withdrawn.ok:
        return None  # moved or out of reach: looked at again on the next pass
    return _stranded_move(ctx, job, bases[0])


def _stranded_move(ctx: Context, job: Job, base: str) -> Move:
    branch = job.review_branch or ""
    reason = (
        f"{branch} stood on commit {base[:12]}, which left {ctx.config.publish.branch}; "
        "the branch was withdrawn so that no merge brings it back: retry to build it again on "
        "the current tip (from the reviewer's last version, if any)"
    )
    return Move(
        job,
        State.REVIEW,
        "review:stranded",
        {"reason": reason, "branch": branch, "base": base},
        {"failure_code": STRANDED},
    )


def _withdrawing(events: Sequence[jobs.Event]) -> str | None:
    """The base named by a withdrawal of the job's review branch said since its last push
    (`_stranded`), or None: who finds the branch gone after it knows no reviewer deleted it."""
    base = None
    for event in events:
        if event["step"] == "review:pushed":
            base = None
        elif event["step"] == WITHDRAWING:
            base = str(event["detail"].get("base"))
    return base


def _decision(
    ctx: Context,
    job: Job,
    versions: list[Version],
    events: Sequence[jobs.Event],
    line: list[Oid],
    *,
    gone: bool,
) -> Move | None:
    for version in versions:
        merged = _first_holding(ctx, line, version.files)
        if merged is not None:
            how = "merged from review" + (" (edited in review)" if version.edited else "")
            extra = {"edited_in_review": version.commit} if version.edited else {}
            return _published(job, merged, how, extra)
    if not gone:
        return None
    # Both fallbacks below count only while the tip still has an article at the job's path:
    # one that came and went is not published now.
    standing = bool(line) and _article_at(ctx, line[-1], job)
    named = _named_in(ctx, job, line) if standing else None
    if named is not None:
        # Squashed or rebased with edits the watch never saw (pushed, merged and deleted
        # between two passes): the published branch names the job and holds its article.
        return _published(job, named, "merged from review (edited in review)")
    kept = _kept_in(ctx, job, versions, line) if standing else None
    if kept is not None:
        # Merged keeping its history (a merge commit, a fast-forward), then its article
        # changed again before the watch looked: the merge was still a person's yes.
        return _published(job, kept, "merged from review (changed since)")
    withdrawn = _withdrawing(events)
    if withdrawn is not None:
        return _stranded_move(ctx, job, withdrawn)  # gitpub took the branch, not a reviewer
    reason = f"rejected in review: {job.review_branch} was deleted unmerged"
    return Move(
        job,
        State.REVIEW,
        "review:rejected",
        {"reason": reason, "branch": job.review_branch},
        {"failure_code": REJECTED},
    )


def _published(job: Job, commit: Oid, how: str, extra: Mapping[str, str] | None = None) -> Move:
    """The job PUBLISHED by a person's merge: `commit`, the published branch's commit that
    brought it, and `how` they merged it."""
    detail = {"remote_commit": commit, "how": how, "branch": job.review_branch, **(extra or {})}
    return Move(
        job, State.PUBLISHED, "published", detail, {"remote_commit": commit, "failure_code": None}
    )


def _named_in(ctx: Context, job: Job, line: list[Oid]) -> Oid | None:
    """The oldest commit of the published line whose message carries the job's id (a rebase
    keeps it, a squash lists it)."""
    out = git_out(
        [
            "rev-list",
            "--first-parent",
            f"-n{HISTORY}",
            "--fixed-strings",
            f"--grep=Blog-Job-Id: {job.job_id}",
            line[-1],
        ],
        ctx.repo.root,
    )
    found = out.split()
    return Oid(found[-1]) if found else None


def _article_at(ctx: Context, commit: Oid, job: Job) -> bool:
    return bool(job.target_path) and ctx.repo.blob_at(commit, job.target_path or "") is not None


def _kept_in(ctx: Context, job: Job, versions: list[Version], line: list[Oid]) -> Oid | None:
    """The commit of the published line that merged a version of the review branch with its
    history (the oldest whose history holds it); None when no version's commit is in the
    tip's history."""
    for version in versions:
        if not version.commit or ctx.repo.resolve(version.commit) is None:
            continue
        if not ctx.repo.is_ancestor(version.commit, line[-1]):
            continue
        # Once a commit of the line holds it, every later one does: the first, by halves.
        low, high = 0, len(line) - 1
        while low < high:
            mid = (low + high) // 2
            if ctx.repo.is_ancestor(version.commit, line[mid]):
                high = mid
            else:
                low = mid + 1
        return line[low]
    return None


def _settle(ctx: Context, moves: list[Move]) -> list[Job]:
    if not moves:
        return []
    crash.point("after_review_merged_before_db")
    settle: dict[str, outbox.PublishStatus] = {
        m.job.job_id: ("delivered" if m.to is State.PUBLISHED else "review") for m in moves
    }

    def also(conn: Connection) -> None:
        outbox.settle_publish_all(conn, settle)

    try:
        done = jobs.transition_all(ctx.store, moves, also=also)
    except LeaseLost:
        return []  # another watcher settled them first
    published = [j for j in done.values() if j.state is State.PUBLISHED]
    if published:
        discard_worktrees(ctx, [j.job_id for j in published])
    return list(done.values())


def written(ctx: Context, job: Job) -> dict[str, str | None]:
    """The job's own version: its article and assets as its manifest sealed them. Font
    outputs are left out: they are derived, and any merge may rebuild them."""
    derived = set(ctx.config.font_outputs)
    return {e.path: e.sha256 for e in load_manifest(ctx, job) if e.path not in derived}


def _versions(
    ctx: Context, job: Job, events: Sequence[jobs.Event], branch_tip: Oid | None
) -> list[Version]:
    """What may have been merged, newest first: the review branch's tip as it is now (when a
    reviewer moved it, recorded once), every edit recorded before, and the job's own."""
    own = written(ctx, job)
    pushed = [e["detail"].get("commit") for e in events if e["step"] == "review:pushed"]
    seen = [
        Version(str(e["detail"].get("commit")), _files_of(e["detail"].get("files")), True)
        for e in events
        if e["step"] == "review:edited"
    ]
    known = {str(c) for c in pushed if c} | {v.commit for v in seen}
    if branch_tip is not None and branch_tip not in known:
        files = _files_at(ctx, branch_tip, own)
        if files != own:
            _record_edit(ctx, job, branch_tip, files)
            seen.append(Version(str(branch_tip), files, True))
    edits = list(reversed(seen))
    return [*edits, Version(str(pushed[-1] if pushed else ""), own, False)]


def _files_of(recorded: JSON) -> dict[str, str | None]:
    """The files of a recorded edit (path → SHA-256, None: no such file)."""
    return {k: v if isinstance(v, str) else None for k, v in as_object(recorded).items()}


def _files_at(ctx: Context, commit: Oid, own: Mapping[str, str | None]) -> dict[str, str | None]:
    if ctx.repo.resolve(commit) is None:
        ctx.repo.fetch_commit(ctx.config.publish.remote, commit)
    files: dict[str, str | None] = {}
    for path in own:
        data = ctx.repo.blob_at(commit, path)
        files[path] = None if data is None else manifest.sha256_bytes(data)
    return files


def _record_edit(ctx: Context, job: Job, commit: Oid, files: dict[str, str | None]) -> None:
    """A reviewer's version, kept where every node finds it: its hashes in the event, and the
    article's text in the job folder (the store keeps it), for a `retry` to build on."""
    data = ctx.repo.blob_at(commit, job.target_path) if job.target_path else None
    try:
        text = None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        text = None  # bytes a draft answer cannot carry: a retry starts from the job's own
    if text is not None:
        record = {"commit": commit, "path": job.target_path, "text": text}
        folder = ctx.job_dir(job.job_id) / "review"
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / "edited.json", json.dumps(record, ensure_ascii=False).encode())
    jobs.record(ctx.store, job, "review:edited", {"commit": commit, "files": files})


def last_edit(ctx: Context, job: Job) -> dict[str, str] | None:
    """The reviewer's last version of the article (`commit`, `path`, `text`), or None."""
    path = ctx.job_dir(job.job_id) / "review" / "edited.json"
    if not path.is_file():
        return None
    found: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    return found


def _merged(ctx: Context, job: Job, line: list[Oid]) -> Oid | None:
    """The commit of the published branch that brought the job's own version, or None (also
    when its manifest is damaged: nothing to match by, left for `doctor` and a person)."""
    try:
        own = written(ctx, job)
    except ArtifactsDamaged:
        return None
    return _first_holding(ctx, line, own)


def _first_parents(ctx: Context, tip: Oid) -> list[Oid]:
    """The published branch's own line (merges, squashes and rebased commits all land on
    it), oldest first."""
    out = git_out(["rev-list", "--first-parent", f"-n{HISTORY}", tip], ctx.repo.root)
    return [Oid(o) for o in reversed(out.split())]


def _holds(ctx: Context, oid: Oid, files: Mapping[str, str | None]) -> bool:
    for path, sha in files.items():
        data = ctx.repo.blob_at(oid, path)
        if (None if data is None else manifest.sha256_bytes(data)) != sha:
            return False
    return True


def _first_holding(ctx: Context, line: list[Oid], files: Mapping[str, str | None]) -> Oid | None:
    """The oldest commit of `line` whose tree holds every file of the version with its bytes,
    provided the tip still does (an article that came and went is not published now)."""
    if not line or not files or not _holds(ctx, line[-1], files):
        return None
    first = line[-1]
    for oid in reversed(line[:-1]):
        if not _holds(ctx, oid, files):
            break
        first = oid
    return first
