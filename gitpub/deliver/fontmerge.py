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
from gitpub.core.errors import GitCommandError, GitpubError, InputError
from gitpub.deliver.commit import commit_message, load_manifest
from gitpub.git import objects
from gitpub.git.process import WRITER_ENV, git_out, run_git
from gitpub.git.repo import unmerged_paths
from gitpub.prepare import manifest
from gitpub.prepare.jobtree import branch_name
from gitpub.store import jobs
from gitpub.store.jobs import Job

if TYPE_CHECKING:
    from gitpub import fonts

_EDITOR = {"GIT_EDITOR": "true"}  # keep each replayed commit's message as it is
# A person's rebase in the live checkout is the person's change, not gitpub's own: without
# the writer mark the installed hooks see it like any other rewrite of the branch.
_PERSON = {**_EDITOR, WRITER_ENV: ""}


def _in_progress(cwd: Path) -> bool:
    for name in ("rebase-merge", "rebase-apply"):
        where = run_git(["rev-parse", "--git-path", name], cwd).stdout.decode().strip()
        if (cwd / where).exists():
            return True
    return False


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
        if _in_progress(worktree):
            run_git(["rebase", "--abort"], worktree, check=False)
        if before:
            run_git(["reset", "--hard", "--quiet", before], worktree)
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
    from gitpub import fonts

    repo, cfg = ctx.repo, ctx.config
    written = fonts.regenerate(cfg, worktree, private=True)
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
    present = sorted(o for o in outputs if (worktree / o).is_file())
    if present:
        run_git(["add", "--", *present], worktree)
    message = commit_message(ctx, job._replace(artifact_sha256=new))
    # The amend, made like every job commit: in memory, with the job's identity.
    tree = git_out(["write-tree"], worktree)
    amended = objects.create_commit(
        cfg, repo, tree, [parent], message, author=repo.commit(head).author
    )
    run_git(["update-ref", "-m", "gitpub: fonts rebuilt", "HEAD", amended, head], worktree)
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
    manifest.save(worktree, entries, folder, ctx.job_dir(job.job_id) / "manifest.json")
    return str(folder.relative_to(ctx.state_dir))


# ----------------------------------------------------------------------- live checkout


@dataclasses.dataclass
class LiveRebase:
    regenerated: int  # replayed commits whose subsets were rebuilt
    stale: dict[str, str]  # subsets still short of the articles after the rebase


def _git_path(root: Path, name: str) -> Path:
    return root / run_git(["rev-parse", "--git-path", name], root).stdout.decode().strip()


def _onto(root: Path) -> str | None:
    """The commit an in-progress rebase replays onto."""
    for name in ("rebase-merge/onto", "rebase-apply/onto"):
        file = _git_path(root, name)
        if file.is_file():
            return file.read_text().strip()
    return None


def _rebuild_staged(
    cfg: Config, root: Path, progress: fonts.Progress | None, private: bool = False
) -> bool:
    """Rebuild the subsets from the articles as they stand at this step of the rebase and
    stage them; True when that changed what the step commits."""
    from gitpub import fonts

    fonts.regenerate(cfg, root, progress=progress, private=private)
    present = [o for o in cfg.font_outputs if (root / o).is_file()]
    if present:
        run_git(["add", "--", *present], root, env=_PERSON)
    return bool(present)


def resolve_step(
    cfg: Config, root: Path, progress: fonts.Progress | None = None, *, private: bool = False
) -> str | list[str]:
    """One stopped step of a rebase in `root` (a hand-edit replay or a person's rebase), the
    one font-conflict rule both follow: when every unmerged path is a font output, the
    subsets are rebuilt from the step's merged articles and staged, and the answer is the git
    rebase argument that goes on (`--skip` when the rebuilt subsets equal upstream's and the
    step has nothing left to replay, else `--continue`). Otherwise the answer is the paths of
    the real conflict, for a person."""
    unmerged = unmerged_paths(root)
    real = [p for p in unmerged if cfg.fonts is None or p not in cfg.font_outputs]
    if real:
        return real
    from gitpub import fonts

    if cfg.fonts is not None and (unmerged or fonts.stale(cfg, root, private=private)):
        _rebuild_staged(cfg, root, progress, private)
        same = run_git(["diff", "--cached", "--quiet", "HEAD"], root, check=False)
        return "--skip" if same.returncode == 0 else "--continue"
    return "--continue"


FONT_ROUNDS = 100
"""Stops one replay may settle by rebuilding subsets before it gives up (a loop guard)."""


class Replayed(NamedTuple):
    conflict: list[str] | None  # the real conflict's paths (the rebase aborted), or None
    rebuilt: list[str]  # subsets that conflicted on the way and were rebuilt


def replay(cfg: Config, worktree: Path, upstream: str, *, job: bool = False) -> Replayed:
    """`git rebase upstream` in `worktree` (a job's worktree, or a hand edit's), each stop
    settled by the one font-conflict rule (`resolve_step`); a real conflict aborts it. With
    `job`, the commits are the writer's (its identity and signing) and the fonts are built
    as in a private checkout."""
    prefix = objects.sign_args(cfg) if job else []
    env = {**_EDITOR, **objects.ident_env(cfg)} if job else _EDITOR
    # A job's branch is its one commit: only that commit is replayed, whatever it was last
    # stacked on (another job's commit that never landed is not this job's change).
    own = ["--onto", upstream, "HEAD~1"] if job else [upstream]
    step = ["rebase", "--quiet", "--no-verify", *own]
    rebuilt: set[str] = set()
    for _ in range(FONT_ROUNDS):
        proc = run_git([*prefix, *step], worktree, check=False, env=env)
        if proc.returncode == 0:
            return Replayed(None, sorted(rebuilt))
        unmerged = unmerged_paths(worktree)
        if not unmerged:
            run_git(["rebase", "--abort"], worktree, check=False)
            stderr = proc.stderr.decode("utf-8", "replace")
            raise GitCommandError(["git", *step], proc.returncode, stderr)
        resolved = resolve_step(cfg, worktree, private=job)
        if isinstance(resolved, list):
            run_git(["rebase", "--abort"], worktree, check=False)
            return Replayed(resolved, sorted(rebuilt))
        rebuilt.update(unmerged)
        step = ["rebase", resolved]
    run_git(["rebase", "--abort"], worktree, check=False)
    return Replayed(sorted(cfg.font_outputs), sorted(rebuilt))


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
    regenerated = 0
    with ctx.locks.hold("checkout"):
        if _in_progress(root):
            if upstream is not None:
                raise InputError(
                    "a rebase is already in progress: run `git blogpub rebase` without "
                    "UPSTREAM to continue it, or `git rebase --abort`"
                )
        else:
            if upstream is None:
                pub = cfg.publish
                ctx.repo.fetch(pub.remote, pub.branch)
                upstream = ctx.tracking_ref
            proc = run_git(["rebase", upstream], root, check=False, env=_PERSON)
            if proc.returncode != 0 and not _in_progress(root):
                stderr = proc.stderr.decode("utf-8", "replace")
                raise GitCommandError(["git", "rebase", upstream], proc.returncode, stderr)
        onto = _onto(root) or (ctx.repo.resolve(upstream) if upstream else None)
        while _in_progress(root):
            # A step stops on a subset conflict, or on an article a person has just resolved:
            # either way its subsets are rebuilt from the articles as they now stand.
            rebuilds = cfg.fonts is not None and (
                bool(unmerged_paths(root)) or bool(fonts.stale(cfg, root))
            )
            step = resolve_step(cfg, root, progress)
            if isinstance(step, list):
                raise GitpubError(
                    f"rebase stopped: conflict in {', '.join(step)}; resolve and `git add` "
                    "it, then run `git blogpub rebase` again to rebuild the fonts and "
                    "continue (or `git rebase --abort`)"
                )
            if rebuilds:
                regenerated += 1
            proc = run_git(["rebase", step], root, check=False, env=_PERSON)
            if proc.returncode != 0 and not unmerged_paths(root):
                stderr = proc.stderr.decode("utf-8", "replace")
                raise GitCommandError(["git", "rebase", step], proc.returncode, stderr)
        if cfg.fonts is not None and onto and fonts.stale(cfg, root) and _replayed(root, onto):
            # Replayed cleanly, yet the merged articles need characters no side's subset
            # has: the last replayed commit (rewritten by this rebase anyway) gets them.
            _rebuild_staged(cfg, root, progress)
            run_git(["commit", "--amend", "--no-edit", "--quiet"], root, env=_PERSON)
            regenerated += 1
        left = fonts.stale(cfg, root) if cfg.fonts is not None else {}
    return LiveRebase(regenerated, left)


def _replayed(root: Path, onto: str) -> bool:
    """True when HEAD holds commits replayed on top of `onto` (never amend upstream's)."""
    count = run_git(["rev-list", "--count", f"{onto}..HEAD"], root).stdout.decode().strip()
    return count not in ("", "0")
