"""Rebasing onto the remote when both sides rebuilt the font subsets.

Almost every article adds characters, so two writers nearly always both change the subset
files, and git cannot merge two binary fonts. The subsets are derived data: when they are
the only conflict, the right answer is neither side's file but a rebuild from the merged
articles, whose characters are the union of both sides'. Any other conflict is real and is
left to a person (the job becomes CONFLICT; a person's own rebase stops as git's would)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitpub.config import Config
from gitpub.context import Context
from gitpub.core.errors import GitpubError, InputError
from gitpub.deliver.commit import commit_message, load_manifest
from gitpub.git import objects, rebase, worktrees
from gitpub.git.process import WRITER_ENV
from gitpub.git.repo import in_progress
from gitpub.prepare import manifest
from gitpub.prepare.jobtree import branch_name
from gitpub.store import jobs
from gitpub.store.jobs import Job

if TYPE_CHECKING:
    from gitpub import fonts

# A person's rebase in the live checkout is the person's change, not gitpub's own: without
# the writer mark the installed hooks see it like any other rewrite of the branch.
_PERSON = {WRITER_ENV: ""}


# ----------------------------------------------------------------------- job worktrees


def rebase_job(
    ctx: Context, job: Job, worktree: Path, upstream: str
) -> tuple[Job, list[str] | None]:
    """Rebase the job branch checked out in `worktree` onto `upstream`, by the one replay
    every rebase of gitpub follows (`replay`).

    Returns the (possibly updated) job and None on success, or the conflicting paths after
    aborting the rebase. When the subsets were the only conflict — or the rebase was clean
    but left them short of the merged articles' characters — they are rebuilt, the job commit
    is amended with the new manifest trailer, and the new manifest hash is recorded before
    this returns: the relay confirms publication by that hash."""
    from gitpub.fonts.source import FontError

    cfg = ctx.config
    target = ctx.repo.resolve(upstream) or upstream
    before = ctx.repo.resolve(f"refs/heads/{branch_name(job.job_id)}")
    try:
        done = replay(cfg, worktree, target, job=True)
        if done.conflict is not None:
            return job, done.conflict
        if done.rebuilt:
            why = "font-only conflict"
            return _rebuild_and_amend(ctx, job, worktree, why, target, done.rebuilt), None
    except FontError:
        # A rebase stopped when the font failed was aborted by the driver; an amend that
        # failed after a finished one leaves the branch rebased: either way, back as it was.
        if before:
            worktrees.reset(worktree, before)
        return job, sorted(cfg.font_outputs)
    return _refresh_after_clean_rebase(ctx, job, worktree, target)


def _refresh_after_clean_rebase(
    ctx: Context, job: Job, worktree: Path, target: str
) -> tuple[Job, None]:
    """A clean rebase can still leave the subsets short: the remote may have gained articles
    without rebuilt subsets (a note written by hand). The job commit carries the subsets, so
    it carries correct ones."""
    if ctx.config.fonts is None:
        return job, None
    from gitpub import fonts  # the font engine is heavy: loaded where fonts are configured

    try:
        if _derived_off_manifest(ctx, job):
            # git merged a text output cleanly (two chunk stylesheets' rules), or kept one
            # side's: the outputs must be what the merged articles give, and the manifest
            # must name those bytes. Rebuilt from the resulting tree: equal bytes stay as
            # they are, and only the manifest follows.
            why = "outputs merged by git"
        elif fonts.stale(ctx.config, worktree, private=True):
            why = "stale after rebase"
        else:
            return job, None
        return _rebuild_and_amend(ctx, job, worktree, why, target, []), None
    except fonts.FontError as exc:
        job = jobs.record(ctx.store, job, "fonts:stale", {"reason": exc.message})
        return job, None


def _derived_off_manifest(ctx: Context, job: Job) -> bool:
    """Whether the rebased job commit changes a font output to bytes its manifest does not
    name (git's merge of a text output, or an output the manifest never held)."""
    repo = ctx.repo
    head = repo.resolve(f"refs/heads/{branch_name(job.job_id)}")
    if head is None:
        return False
    parent = str(repo.commit(head).parent_ids[0])
    outputs = set(ctx.config.font_outputs)
    sealed = {e.path: e.sha256 for e in load_manifest(ctx, job) if e.path in outputs}
    for path in repo.changed_paths(parent, head):
        if path not in outputs:
            continue
        data = repo.blob_at(head, path)
        if data is not None and manifest.sha256_bytes(data) != sealed.get(path):
            return True
    return False


def _rebuild_and_amend(
    ctx: Context, job: Job, worktree: Path, why: str, upstream: str, conflicted: list[str]
) -> Job:
    repo, cfg = ctx.repo, ctx.config
    written = _rebuild_staged(cfg, worktree, None, private=True)
    head = repo.resolve(f"refs/heads/{branch_name(job.job_id)}")
    assert head is not None
    parent = str(repo.commit(head).parent_ids[0])
    outputs = set(cfg.font_outputs)
    # The job's files: what its commit changes besides the subsets, plus every subset that
    # now differs from the parent's.
    paths = {p for p in repo.changed_paths(parent, head) if p not in outputs}
    paths = {p for p in paths if (worktree / p).is_file()}
    for output in sorted(outputs):
        file = worktree / output
        if file.is_file() and file.read_bytes() != repo.blob_at(parent, output):
            paths.add(output)
    entries = manifest.entries_for(worktree, paths)
    new = manifest.digest(entries)
    message = commit_message(ctx, job._replace(artifact_sha256=new))
    # The amend, made like every job commit: in memory, with the job's identity.
    objects.amend_from_index(cfg, repo, worktree, head, message, "gitpub: fonts rebuilt")
    artifact_dir = _store_artifacts(ctx, job, worktree, entries, new)
    job = jobs.record(
        ctx.store,
        job,
        "fonts:regenerated",
        {
            "old_manifest": job.artifact_sha256,
            "new_manifest": new,
            "reason": why,
            "upstream": upstream,
            "conflicted": conflicted,
            "written": written,
        },
        artifact_sha256=new,
        artifact_dir=artifact_dir,
    )
    jobs.remember_prepared(ctx.store, job)
    return job


def _store_artifacts(
    ctx: Context, job: Job, worktree: Path, entries: list[manifest.Entry], digest: str
) -> str:
    """The amended commit's files and manifest in the job folder, as prepare's seal leaves
    them: a lost job commit is remade from exactly these. A fresh folder per manifest, so the
    folder the database names stays intact until the database names the new one."""
    folder = ctx.job_dir(job.job_id) / f"artifacts-{digest[:16]}"
    manifest.save(
        worktree,
        entries,
        folder,
        ctx.job_dir(job.job_id) / "manifest.json",
        sync=ctx.store.folders_durable,
    )
    return str(folder.relative_to(ctx.state_dir))


# ----------------------------------------------------------------------- the font rule


def _rebuild_staged(
    cfg: Config, root: Path, progress: fonts.Progress | None, private: bool = False
) -> list[str]:
    """Rebuild the subsets from the articles as they stand in `root` (at a step of a rebase,
    or after it) and stage them; the outputs the rebuild wrote."""
    from gitpub import fonts

    written = fonts.regenerate(cfg, root, progress=progress, private=private)
    rebase.stage(root, [o for o in cfg.font_outputs if (root / o).is_file()])
    return written


FONT_ROUNDS = 100
"""Stops one replay may settle by rebuilding subsets before it gives up (a loop guard)."""


@dataclasses.dataclass
class FontRule:
    """The one font-conflict rule: the rebase driver's callback at every stop of every rebase
    gitpub runs (a job's, a hand edit's, a person's). When every unmerged path is a font
    output, the subsets are rebuilt from the step's merged articles and staged; so are they
    at a stop a person settled, when the articles as resolved need other characters. Any
    other unmerged path is a real conflict, for a person."""

    cfg: Config
    root: Path
    private: bool = False  # fonts built as in a private checkout (a job's worktree)
    progress: fonts.Progress | None = None
    rounds: int | None = None  # stops settled before the rule refuses (None: no bound)
    stops: int = 0
    rebuilt: int = 0  # stops whose subsets were rebuilt

    def __call__(self, unmerged: list[str]) -> list[str]:
        cfg = self.cfg
        real = [p for p in unmerged if cfg.fonts is None or p not in cfg.font_outputs]
        if real:
            return real
        if self.rounds is not None and self.stops >= self.rounds:
            return sorted(cfg.font_outputs)
        self.stops += 1
        if cfg.fonts is None:
            return []
        from gitpub import fonts

        if unmerged or fonts.stale(cfg, self.root, private=self.private):
            _rebuild_staged(cfg, self.root, self.progress, self.private)
            self.rebuilt += 1
        return []


def refresh(
    cfg: Config,
    root: Path,
    onto: str,
    *,
    person: bool = False,
    progress: fonts.Progress | None = None,
) -> bool:
    """The one font refresh after a clean rebase onto `onto` in `root` (a hand edit's, or a
    person's): the remote may have gained articles without rebuilt subsets (a note written by
    hand), so subsets short of the merged articles are rebuilt, and the last replayed commit
    — rewritten by the rebase anyway — is amended to carry them; never upstream's own commit.
    True when it was. (A job's commit is amended in memory with its manifest instead:
    `_refresh_after_clean_rebase`.)"""
    if cfg.fonts is None:
        return False
    from gitpub import fonts

    if not fonts.stale(cfg, root) or not rebase.replayed(root, onto):
        return False
    _rebuild_staged(cfg, root, progress)
    rebase.amend(root, env=_PERSON if person else None, verify=person)
    return True


# ----------------------------------------------------------------------- replays


class Replayed(NamedTuple):
    conflict: list[str] | None  # the real conflict's paths (the rebase aborted), or None
    rebuilt: list[str]  # subsets that conflicted on the way and were rebuilt


def replay(cfg: Config, worktree: Path, upstream: str, *, job: bool = False) -> Replayed:
    """`git rebase upstream` in `worktree` (a job's worktree, or a hand edit's) by the one
    rebase driver, each stop settled by the one font rule (`FontRule`); a real conflict
    aborts it. With `job`, the commits are the writer's (its identity and signing) and the
    fonts are built as in a private checkout."""
    # A job's branch is its one commit: only that commit is replayed, whatever it was last
    # stacked on (another job's commit that never landed is not this job's change).
    own = ["--onto", upstream, "HEAD~1"] if job else [upstream]
    done = rebase.run(
        worktree,
        ["--quiet", "--no-verify", *own],
        FontRule(cfg, worktree, private=job, rounds=FONT_ROUNDS),
        config=objects.sign_args(cfg) if job else (),
        env=objects.ident_env(cfg) if job else None,
    )
    return Replayed(done.conflict, done.settled)


# ----------------------------------------------------------------------- live checkout


@dataclasses.dataclass
class LiveRebase:
    regenerated: int  # replayed commits whose subsets were rebuilt
    stale: dict[str, str]  # subsets still short of the articles after the rebase


def rebase_live(
    ctx: Context, upstream: str | None, progress: fonts.Progress | None = None
) -> LiveRebase:
    """`git blogpub rebase [UPSTREAM]`: a person's rebase of the live checkout in which every
    step whose only conflicts are subsets is resolved by rebuilding them from that step's
    merged articles. A real conflict stops the rebase as git would, for the person to resolve;
    running this again afterwards continues it, and the subsets of the step the person
    resolved are rebuilt from the resolved articles. A rebase whose articles changed the
    character set without any conflict gets its last replayed commit's subsets rebuilt."""
    from gitpub import fonts

    cfg, root = ctx.config, ctx.repo.root
    rule = FontRule(cfg, root, progress=progress)
    with ctx.locks.hold("checkout"):
        done, onto = _start_or_resume(ctx, upstream, rule)
        if done.conflict is not None:
            raise GitpubError(
                f"rebase stopped: conflict in {', '.join(done.conflict)}; resolve and `git add` "
                "it, then run `git blogpub rebase` again to rebuild the fonts and "
                "continue (or `git rebase --abort`)"
            )
        # Replayed cleanly, yet the merged articles may need characters no side's subset has.
        refreshed = onto is not None and refresh(cfg, root, onto, person=True, progress=progress)
        left = fonts.stale(cfg, root) if cfg.fonts is not None else {}
    return LiveRebase(rule.rebuilt + refreshed, left)


def _start_or_resume(
    ctx: Context, upstream: str | None, rule: FontRule
) -> tuple[rebase.Rebased, str | None]:
    """The person's rebase, started onto `upstream` (the fetched remote branch when None) or
    gone on from where it stopped; and the commit it replays onto."""
    root = ctx.repo.root
    if in_progress(root, "rebase"):
        if upstream is not None:
            raise InputError(
                "a rebase is already in progress: run `git blogpub rebase` without "
                "UPSTREAM to continue it, or `git rebase --abort`"
            )
        done = rebase.resume(root, rule, env=_PERSON, person=True)
        return done, done.onto
    if upstream is None:
        pub = ctx.config.publish
        ctx.repo.fetch(pub.remote, pub.branch)
        upstream = ctx.tracking_ref
    done = rebase.run(root, [upstream], rule, env=_PERSON, person=True)
    return done, done.onto or ctx.repo.resolve(upstream)
