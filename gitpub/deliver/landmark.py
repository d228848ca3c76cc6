"""Landmarks: a ref on the remote that the push landing a job's commit creates in the same
atomic push (`git push --atomic`), so it exists exactly when that push landed.

The question it answers: did a push of this job ever land, when its commit is nowhere on the
branch now? A worker that dies between its push and its record, then a person who force-pushes
the article away before anyone looks, leaves no trace in another node's clone: its tracking
ref's history never held the commit (`confirm.taken_down_since` sees only what this clone
fetched). Only the remote knows, and pushing the job again would undo the person's takedown.

A landmark is a commit with the empty tree and no parent, naming each job of its push and the
commit that landed for it (one per push; every job's ref points at it): it keeps no article
reachable after a takedown, and no person's clone fetches it (it is not under `refs/heads/`).
A job's ref is deleted, compare-and-swap, once the store records the job PUBLISHED; one a
crash left behind is only a name on the remote, and `gc` removes it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import pygit2

from gitpub.context import Context
from gitpub.core.ids import Oid
from gitpub.core.states import State
from gitpub.deliver import guard
from gitpub.git.process import git_out, run_git
from gitpub.store import jobs
from gitpub.store.jobs import Job

PREFIX = "refs/blog-landed/"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class Landmark(NamedTuple):
    mark: Oid  # the landmark commit itself, what the remote ref holds
    landed: Oid  # the job commit the same push put on the branch


def ref(job_id: str) -> str:
    return PREFIX + job_id


def refs(marks: Mapping[str, Oid]) -> dict[str, str]:
    """Job id -> landmark, as remote ref -> landmark."""
    return {ref(job_id): mark for job_id, mark in marks.items()}


def make(ctx: Context, landed: Mapping[str, Oid]) -> Oid:
    """One landmark commit for a push, naming each job it lands and that job's commit, one
    line each; written to the odb (no ref moves). Every job's ref points at it. Never signed:
    it carries no content, and a signing prompt per push would stall the batch."""
    pg = ctx.repo.pg
    who = pygit2.Signature("gitpub", "gitpub@landmark")
    lines = "".join(f"{job_id} {commit}\n" for job_id, commit in landed.items())
    message = f"gitpub: {len(landed)} job(s) landed\n\n{lines}"
    return Oid(str(pg.create_commit(None, who, who, message, _empty_tree(pg), [])))


def _empty_tree(pg: pygit2.Repository) -> pygit2.Oid:
    oid = pygit2.Oid(hex=EMPTY_TREE)
    if oid not in pg:
        return pg.TreeBuilder().write()
    return oid


def _named(ctx: Context, mark: Oid, job_id: str) -> Oid | None:
    """The commit landmark `mark` says the push landed for `job_id`, if it names the job."""
    try:
        message = ctx.repo.commit(mark).message
    except (KeyError, ValueError):
        return None
    for line in message.splitlines()[2:]:
        named, _, commit = line.partition(" ")
        if named == job_id and commit:
            return Oid(commit)
    return None


def look(ctx: Context, held: Sequence[Job]) -> dict[str, Landmark]:
    """The landmarks the remote holds for these jobs' own commits (one `ls-remote`, and one
    fetch of the landmarks found, which are a few hundred bytes each). Raises GitCommandError
    when the remote cannot be asked: a job whose push may have landed is not pushed blind."""
    return _found(ctx, held)[0]


def _found(ctx: Context, held: Sequence[Job]) -> tuple[dict[str, Landmark], dict[str, Landmark]]:
    """The landmarks the remote holds for these jobs: those naming each job's own commit, and
    those naming another — an earlier attempt's, which a worker that died before removing it
    left and a person's `retry` made history: it says nothing of this attempt."""
    wanted: dict[str, str] = {j.job_id: ref(j.job_id) for j in held}
    if not wanted:
        return {}, {}
    marks = {j: m for j, m in _listed(ctx, list(wanted.values())).items() if j in wanted}
    if marks:
        # By name, not by id: every server lets a client fetch a ref it advertises.
        run_git(
            ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", ctx.config.publish.remote]
            + [wanted[job_id] for job_id in marks],
            ctx.repo.root,
        )
    own: dict[str, Landmark] = {}
    earlier: dict[str, Landmark] = {}
    commits: dict[str, str | None] = {j.job_id: j.local_commit for j in held}
    for job_id, mark in marks.items():
        landed = _named(ctx, mark, job_id)
        if landed is not None:
            side = own if landed == commits[job_id] else earlier
            side[job_id] = Landmark(mark, landed)
    return own, earlier


def _listed(ctx: Context, patterns: Sequence[str]) -> dict[str, Oid]:
    """Job id -> landmark of the remote's landmark refs matching `patterns` (`ls-remote`)."""
    out = git_out(["ls-remote", ctx.config.publish.remote, *patterns], ctx.repo.root)
    marks: dict[str, Oid] = {}
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if name.startswith(PREFIX):
            marks[name.removeprefix(PREFIX)] = Oid(oid)
    return marks


def remove(ctx: Context, marks: Mapping[str, Oid]) -> bool:
    """Delete these jobs' landmarks from the remote, each only if it still holds the mark
    given; whether git said all went. A failure leaves names `cleanup` removes later: the
    publication is recorded already, and nothing reads a settled job's landmark."""
    if not marks:
        return True
    return guard.withdraw_refs(ctx.repo, ctx.config.publish.remote, refs(marks))


def refused(output: str) -> list[str]:
    """The jobs whose landmark a push's porcelain output says the remote refused: a ref of
    that name exists already (an earlier attempt's)."""
    found = []
    for line in output.splitlines():
        flag, _, rest = line.partition("\t")
        spec, _, summary = rest.partition("\t")
        name = spec.rpartition(":")[2]
        if flag == "!" and name.startswith(PREFIX) and "atomic push failed" not in summary:
            found.append(name.removeprefix(PREFIX))
    return found


def clear_earlier(ctx: Context, held: Sequence[Job]) -> None:
    """Delete these jobs' landmarks on the remote that an earlier attempt left (`_found`),
    each only if it still holds what was read."""
    earlier = _found(ctx, held)[1]
    remove(ctx, {i: m.mark for i, m in earlier.items()})


def stale(ctx: Context) -> dict[str, Oid]:
    """The landmarks on the remote of jobs this store holds as PUBLISHED: what a worker that
    died between its record and `remove` left. A landmark of any other job stays (another
    blog on the same remote may still be delivering it)."""
    marks = _listed(ctx, [PREFIX + "*"])
    if not marks:
        return {}
    settled = jobs.get_many(ctx.store, list(marks))
    return {i: m for i, m in marks.items() if i in settled and settled[i].state is State.PUBLISHED}
