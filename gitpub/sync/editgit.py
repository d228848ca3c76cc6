"""The git side of external_sync: what changed in the live checkout, the one commit that carries
it, the rebase onto the remote branch (in a private worktree) and the push.

Only content paths and font outputs are ever staged, whatever else is dirty. The rebase happens
away from the live checkout, so the person's unstaged files can never make `git rebase` refuse
("cannot rebase: You have unstaged changes") and trap the commit locally."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gitpub.config import Config
from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import GitCommandError
from gitpub.core.ids import Oid
from gitpub.deliver import fontmerge, guard
from gitpub.git import trailers, worktrees
from gitpub.git.process import git_out, run_git
from gitpub.git.repo import in_progress, merge_base
from gitpub.sync import held

WORKTREE = "external-sync"
"""Name of the private worktree (under the state dir's worktrees/) where rebases happen."""


def sync_paths(cfg: Config) -> tuple[str, ...]:
    """Content paths plus font outputs: the same derived set the font gate writes."""
    return cfg.publish.content + cfg.font_outputs


def local_ref(ctx: Context) -> str:
    return f"refs/heads/{ctx.config.publish.branch}"


def observable(ctx: Context) -> bool:
    """The live checkout is on the published branch with no merge/rebase/... under way: only
    then are its uncommitted changes the branch's to deliver."""
    repo = ctx.repo
    return repo.current_branch() == ctx.config.publish.branch and not in_progress(repo.root)


def dirty_changes(ctx: Context) -> list[tuple[str, str | None]]:
    """Changed files under content paths and font outputs in the live checkout (untracked ones
    included, ignored ones not), each with the SHA-256 of its bytes, or None when deleted."""
    return changes_in(ctx.config, ctx.repo.root)


def deliverable_changes(ctx: Context) -> tuple[list[tuple[str, str | None]], held.Held]:
    """`dirty_changes` without the files holding a secret, and those files with findings."""
    return held.split(ctx.repo.root, dirty_changes(ctx), ctx.config.scan.allow)


def changes_in(config: Config, root: Path) -> list[tuple[str, str | None]]:
    out = run_git(
        [
            # A read: never take index.lock from under the person's own git (doctor too).
            "--no-optional-locks",
            "--literal-pathspecs",
            "status",
            "--porcelain=v1",
            "-z",
            "--no-renames",
            "--untracked-files=all",
            "--",
            *sync_paths(config),
        ],
        root,
    ).stdout
    changes: dict[str, str | None] = {}
    for entry in out.split(b"\0"):
        if len(entry) < 4:
            continue
        path = entry[3:].decode("utf-8", "surrogateescape")
        file = root / path
        changes[path] = hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else None
    return sorted(changes.items())


def regenerate_fonts(cfg: Config, root: Path) -> None:
    if cfg.fonts is not None:
        from gitpub import fonts  # the font engine is heavy: loaded where fonts are configured

        fonts.regenerate(cfg, root)


def commit_changes(ctx: Context, event_id: str) -> Oid | None:
    """Commit the live checkout's content and font-output changes, and nothing else, as one
    commit carrying `Blog-External-Sync: <event_id>`. The fonts are rebuilt first so the commit
    holds the subsets its articles need. Other staged files stay staged, other dirty files dirty.
    Returns the commit, or None when nothing is left to commit."""
    repo, root = ctx.repo, ctx.repo.root
    regenerate_fonts(ctx.config, root)
    # Never the files holding a secret: they stay in the checkout, uncommitted.
    paths = [path for path, _ in deliverable_changes(ctx)[0]]
    if not paths:
        return None
    run_git(["--literal-pathspecs", "add", "--all", "--", *paths], root)
    staged = run_git(
        ["--literal-pathspecs", "diff", "--cached", "--quiet", "HEAD", "--", *paths],
        root,
        check=False,
    )
    if staged.returncode == 0:
        return None  # changed back while we looked
    message = trailers.format_message(
        f"blog: sync {len(paths)} hand-edited file(s)",
        {trailers.EXTERNAL_SYNC: event_id, trailers.NODE: ctx.config.node},
    )
    # --only: commit exactly these paths, whatever else the person has staged.
    run_git(
        ["--literal-pathspecs", "commit", "--no-verify", "--quiet", "--only", "-F", "-", "--"]
        + paths,
        root,
        input=message.encode("utf-8"),
    )
    return repo.resolve("HEAD")


def commit_paths(ctx: Context, tip: str, head: str) -> list[str]:
    """Content and font paths the commits of `head` that `tip` lacks touch."""
    if not head or ctx.repo.resolve(head) is None:
        return []
    out = git_out(
        [
            "--literal-pathspecs",
            "-c",
            "core.quotePath=false",
            "log",
            "--cherry-pick",
            "--right-only",
            "--name-only",
            "--format=",
            f"{tip}...{head}",
            "--",
            *sync_paths(ctx.config),
        ],
        ctx.repo.root,
    )
    return sorted({line for line in out.splitlines() if line.strip()})


def unpushed_content(ctx: Context, local: str, tip: str) -> bool:
    """Whether `local` has commits touching content or font outputs that `tip` lacks, even as
    an equivalent patch (a rebased copy of our own commit does not count)."""
    out = git_out(
        [
            "--literal-pathspecs",
            "log",
            "--cherry-pick",
            "--right-only",
            "--format=%H",
            f"{tip}...{local}",
            "--",
            *sync_paths(ctx.config),
        ],
        ctx.repo.root,
    )
    return bool(out)


def contains_patches(ctx: Context, upstream: str, head: str) -> bool:
    """Every change of `head` is in `upstream`: by ancestry, or as an equivalent patch after a
    rebase gave it a new hash (`git cherry` compares patch ids)."""
    repo = ctx.repo
    if repo.is_ancestor(head, upstream):
        return True
    out = git_out(["cherry", upstream, head], repo.root)
    return not any(line.startswith("+") for line in out.splitlines())


def find_sync_commit(ctx: Context, tip: str, event_id: str, since: str | None) -> Oid | None:
    """The commit in tip's history carrying `Blog-External-Sync: <event_id>`; the walk stops at
    the merge base with `since` (the commit the change was made on), when known."""
    hide = []
    if since:
        base = merge_base(ctx.repo, since, tip)
        if base:
            hide.append(base)
    return ctx.repo.find_by_trailers(tip, hide, {trailers.EXTERNAL_SYNC: event_id})


# ------------------------------------------------------------------ delivery


@dataclass
class Pushed:
    kind: Literal["pushed", "conflict", "retry"]
    commit: Oid | None = None
    reason: str = ""
    paths: list[str] = field(default_factory=list)


def push_branch(ctx: Context, local: Oid) -> Pushed:
    """Put `local` (the published branch with its unpushed commits) on the remote: rebased onto
    the remote branch when that moved, pushed, and again after a non-fast-forward rejection.
    The caller holds the delivery lock and confirms the result after a fetch."""
    repo, pub = ctx.repo, ctx.config.publish
    for _ in range(ctx.config.retry.push_races):
        tip = repo.resolve(ctx.tracking_ref)
        if tip is None:
            return Pushed("retry", reason=f"remote branch {pub.branch!r} does not exist")
        head: Oid | None = local
        if not repo.is_ancestor(tip, local):
            head, conflict = rebase(ctx, local, tip)
            if head is None:
                return Pushed("conflict", reason="rebase conflict", paths=conflict)
        assert head is not None
        if head == tip:
            # Everything the branch holds is on the remote already (say, pushed by a run
            # that died before recording it): the rebase left nothing to push.
            return Pushed("pushed", commit=head)
        # The replay must change on the remote exactly what the person's commits changed
        # (plus rebuilt font outputs): never a deletion or a file they did not touch.
        own = guard.own_changes(
            repo, merge_base(repo, local, tip), local, frozenset(ctx.config.font_outputs)
        )
        checked = guard.Checked()
        beyond = checked.check_range(repo, tip, head, own)
        if beyond:
            return Pushed(
                "conflict", reason="write set violated: " + "; ".join(beyond), paths=beyond
            )
        result = guard.push(repo, checked, pub.remote, tip, head, pub.branch)
        if result.ok:
            crash.point("during_external_sync_push")
            return Pushed("pushed", commit=head)
        if not result.rejected_non_ff:
            return Pushed("retry", reason=f"push failed: {result.stderr[-300:]}")
        try:
            repo.fetch(pub.remote, pub.branch)
        except GitCommandError as exc:
            return Pushed("retry", reason=f"fetch failed: {exc.stderr.strip()[-300:]}")
    return Pushed("retry", reason=f"remote moved during {ctx.config.retry.push_races} pushes")


def rebase(ctx: Context, local: Oid, upstream: Oid) -> tuple[Oid | None, list[str]]:
    """Rebase `local` onto `upstream` in the private worktree; the live checkout is not touched.

    Returns the new tip, or None and the conflicting paths after aborting. Font outputs are
    derived, so they never stop a rebase: a conflict confined to them is resolved by
    rebuilding the subsets from the merged articles (the union of characters), and subsets
    left short of the merged articles by a clean rebase are rebuilt into the last replayed
    commit."""
    repo = ctx.repo
    path = ctx.worktree_dir(WORKTREE)
    with ctx.locks.hold("repo"):
        worktrees.add(repo, path, local)  # detached; whatever a crash left is removed first
    try:
        # The one replay of delivery, with its one font-conflict rule.
        conflict = fontmerge.replay(ctx.config, path, upstream).conflict
        if conflict is not None:
            return None, conflict
        fontmerge.refresh(ctx.config, path, upstream)
        return repo.resolve(git_out(["rev-parse", "HEAD"], path)), []
    finally:
        with ctx.locks.hold("repo"):
            worktrees.remove(repo, path)


def catch_up(ctx: Context, rebased: tuple[Oid, Oid] | None = None) -> str:
    """After a rebase, the remote holds new copies of the local branch's commits: move the local
    branch onto them, keeping every uncommitted change of the person (`git reset --keep`
    refuses rather than overwrite one). `rebased` is (old tip, its pushed copy) when this pass
    pushed one; otherwise the branch moves only if `git cherry` finds all its commits on the
    remote-tracking branch. Returns what was done."""
    repo = ctx.repo
    with ctx.locks.hold("checkout"):
        local = repo.resolve(local_ref(ctx))
        if rebased is not None:
            old, target = rebased
            if local != old:
                return "changed meanwhile" if local != target else "up to date"
        else:
            tip = repo.resolve(ctx.tracking_ref)
            if local is None or tip is None or repo.is_ancestor(local, tip):
                return "up to date"
            if not contains_patches(ctx, tip, local):
                return "has unpushed commits"
            target = tip
        if local is None or local == target:
            return "up to date"
        if repo.current_branch() != ctx.config.publish.branch:
            if _checked_out_elsewhere(ctx):
                # Moving it under another worktree would leave that one's files behind.
                return "checked out in another worktree"
            proc = run_git(
                ["update-ref", "-m", "gitpub: external_sync caught up", local_ref(ctx), target]
                + [local],
                repo.root,
                check=False,
            )
            return "moved" if proc.returncode == 0 else "changed meanwhile"
        if in_progress(repo.root) or repo.resolve("HEAD") != local:
            return "busy"
        proc = run_git(["reset", "--keep", "--quiet", target], repo.root, check=False)
        return "moved" if proc.returncode == 0 else "local changes in the way"


def _checked_out_elsewhere(ctx: Context) -> bool:
    out = git_out(["worktree", "list", "--porcelain"], ctx.repo.root)
    return f"branch {local_ref(ctx)}" in out.splitlines()
