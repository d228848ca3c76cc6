"""Dry run: the real prepare steps against throwaway state, to see what a submit would publish.

A real prepare writes in three places: the job store (row and events), the job folder
(source, step answers, artifacts) and a `git worktree` on a job branch. A dry run sends the
first two into a temporary folder (a fresh store, a state dir of its own) and replaces the
third with a scratch repository there that borrows the blog's objects read-only through
`objects/info/alternates`: a `git worktree` would register itself in the blog's git dir and
add a branch. So the draft, the judge, the gates and the font gate all run as they would,
and the blog's state dir, refs and live checkout are never written."""

from __future__ import annotations

import contextlib
import difflib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gitpub import intake
from gitpub.config import Config
from gitpub.context import Context, open_shared, open_store
from gitpub.core.ids import Oid
from gitpub.core.jsonvalue import JSONObject, text_or_none
from gitpub.core.states import State
from gitpub.git.locks import Locks
from gitpub.git.repo import Repo
from gitpub.git.worktrees import scratch_checkout
from gitpub.prepare import Preparer, manifest
from gitpub.prepare.answers import DraftAnswer
from gitpub.prepare.jobtree import needs_checkout
from gitpub.prepare.target import Target, asset_paths
from gitpub.store import jobs, reads
from gitpub.store.db import SqliteStore, Store, database_file
from gitpub.store.jobs import Job

KEY = "dry-run"
"""The idempotency key of the one job in the throwaway store."""


@dataclass(frozen=True)
class Placed:
    """Where an `--asset` file would go, and what is at that path now."""

    name: str
    path: str
    there: str  # "new", "same bytes" or "other bytes"


@dataclass
class Preview:
    """What a submit of the same source would do, as far as prepare decides it."""

    outcome: State  # READY_TO_COMMIT, REVIEW or SKIPPED
    reason: str | None
    base_commit: str | None
    target: str | None
    decision: str | None  # the judge's NEW / UPDATE / SKIP, when it ran
    warning: str | None = None  # about the path: a front-matter date no one could read
    entries: list[manifest.Entry] = field(default_factory=list)
    manifest_sha256: str | None = None
    diff: list[str] = field(default_factory=list)
    assets: list[Placed] = field(default_factory=list)


class ScratchContext(Context):
    """A Context whose state dir (store, job folders, locks) is a throwaway folder, while the
    repository and config stay the blog's own, for reads; `blog_store` is the blog's own
    store (None when it has none yet), read for what the blog published."""

    def __init__(
        self,
        repo: Repo,
        config: Config,
        store: Store,
        locks: Locks,
        scratch: Path,
        blog_store: Store | None = None,
    ) -> None:
        super().__init__(repo, config, store, locks)
        self.scratch = scratch
        self.blog_store = blog_store

    @property
    def state_dir(self) -> Path:
        return self.scratch


class ScratchPreparer(Preparer):
    """The normal Preparer, on the scratch context's state."""

    def __init__(self, ctx: ScratchContext, job: Job) -> None:
        super().__init__(ctx, job, heartbeat=lambda j: j)  # no lease to renew
        self.scratch = ctx.scratch
        self.checkout: Path | None = None
        self.proposed: Target | None = None

    def published_to(self, path: str) -> list[Job]:
        # What the blog published is in its own store, not the scratch one: a takedown stops
        # a run's job, so it stops the dry run's (`taken_down`).
        ctx = self.ctx
        assert isinstance(ctx, ScratchContext)
        return [] if ctx.blog_store is None else reads.published_to(ctx.blog_store, path)

    def article_path(self, draft: DraftAnswer) -> Target:
        # Remembered for the report: a job that stops before its target is recorded (an
        # asset over other bytes, a path that already exists) still shows where it aimed.
        self.proposed = super().article_path(draft)
        return self.proposed

    def fresh_base(self) -> Oid | None:
        # A dry run changes nothing, the remote-tracking branch included: it previews on the
        # remote as last fetched, and says so (`base:` in its report). A branch the remote
        # holds but this clone never fetched cannot be previewed; it says what would let it.
        found = self.ctx.repo.resolve(self.ctx.tracking_ref)
        if found is None:
            p = self.ctx.config.publish
            self.base_problem = (
                f"branch {p.branch!r} of remote {p.remote!r} was never fetched here: "
                f"`git fetch {p.remote}`, then dry-run again"
            )
        return found

    def worktree(self, base: Oid) -> Path:
        # Where a real prepare writes (a checkout only when something reads one), inside
        # the throwaway state dir: the report reads the files from there.
        if self.checkout is None:
            if needs_checkout(self.ctx, base):
                # Its own folder: a real prepare's checkout goes with the seal, and the
                # report reads the written files after it.
                self.checkout = scratch_checkout(self.ctx.repo, base, self.scratch / "checkout")
            else:
                self.checkout = super().worktree(base)
        return self.checkout


@contextlib.contextmanager
def scratch_context(repo: Repo, cfg: Config) -> Iterator[ScratchContext]:
    """A context on the blog's repository and config whose state lives in a temporary folder,
    removed (store included) when the block ends."""
    with (
        _blog_store(repo, cfg) as blog_store,
        tempfile.TemporaryDirectory(prefix="gitpub-dry-run-") as tmp,
    ):
        scratch = Path(tmp) / "state"
        store = SqliteStore(database_file(scratch))
        try:
            yield ScratchContext(
                repo=repo,
                config=cfg,
                store=store,
                locks=Locks(scratch / "locks"),
                scratch=scratch,
                blog_store=blog_store,
            )
        finally:
            store.close()


@contextlib.contextmanager
def _blog_store(repo: Repo, cfg: Config) -> Iterator[Store | None]:
    """The blog's own store, to read; None when it has none yet (never created by a look)."""
    if cfg.store_url is not None:
        store: Store = open_shared(repo, cfg)
    elif database_file(repo.state_dir).is_file():
        store = open_store(repo.state_dir)
    else:
        yield None
        return
    try:
        yield store
    finally:
        store.close()


def preview(
    ctx: ScratchContext,
    source: str,
    target: str | None,
    assets: dict[str, bytes] | None = None,
) -> Preview:
    """Prepare `source` (and its `--asset` files) as a submit with `target` would (all already
    validated the way submit validates them), recording only into the scratch context."""
    job, _ = intake.create(ctx, key=KEY, source=source, target=target, assets=assets)
    preparer = ScratchPreparer(ctx, job)
    outcome = preparer.run()
    preparer.flush()  # the records the report reads (the scratch store's, never the blog's)
    out = _describe(ctx, preparer, outcome.state, outcome.reason)
    if preparer.proposed is not None:
        out.assets = _placed(ctx, preparer.job.base_commit, preparer.proposed, assets or {})
    return out


def _placed(
    ctx: ScratchContext, base: str | None, target: Target, assets: dict[str, bytes]
) -> list[Placed]:
    """Each asset beside the article's target, compared with the base commit's file there."""
    where = asset_paths(target, assets)
    out = []
    for name in sorted(assets):
        before = ctx.repo.blob_at(base, where[name]) if base else None
        if before is None:
            there = "new"
        else:
            there = "same bytes" if before == assets[name] else "other bytes"
        out.append(Placed(name, where[name], there))
    return out


def _describe(
    ctx: ScratchContext, preparer: ScratchPreparer, state: State, reason: str | None
) -> Preview:
    job = preparer.job
    judged = jobs.step_results(ctx.store, job.job_id).get("judge", {})
    target_event: JSONObject = next(
        (
            e["detail"]
            for e in reversed(jobs.events(ctx.store, job.job_id))
            if e["step"] == "target"
        ),
        {},
    )
    aimed = preparer.proposed.path if preparer.proposed is not None else None
    out = Preview(
        outcome=state,
        reason=reason,
        base_commit=job.base_commit,
        target=job.target_path or aimed,
        decision=text_or_none(target_event.get("decision") or judged.get("decision")),
        warning=text_or_none(target_event.get("warning"))
        or (preparer.proposed.warning if preparer.proposed is not None else None),
    )
    if state is not State.READY_TO_COMMIT or preparer.checkout is None:
        return out
    out.entries = manifest.load(ctx.job_dir(job.job_id) / "manifest.json")
    out.manifest_sha256 = job.artifact_sha256
    for entry in out.entries:
        after = (preparer.checkout / entry.path).read_bytes()
        before = ctx.repo.blob_at(job.base_commit, entry.path) if job.base_commit else None
        out.diff += unified_diff(entry.path, before, after)
    return out


def unified_diff(path: str, before: bytes | None, after: bytes) -> list[str]:
    """`git diff`-style lines for one file; binary files (font subsets) get one line."""
    if before == after:
        return []
    old_name = f"a/{path}" if before is not None else "/dev/null"
    texts = []
    for data in (before or b"", after):
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            return [f"Binary files {old_name} and b/{path} differ"]
        if "\x00" in texts[-1]:
            return [f"Binary files {old_name} and b/{path} differ"]
    return list(
        difflib.unified_diff(
            texts[0].splitlines(),
            texts[1].splitlines(),
            fromfile=old_name,
            tofile=f"b/{path}",
            lineterm="",
        )
    )
