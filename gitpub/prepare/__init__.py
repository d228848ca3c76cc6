"""Prepare: turn a job's source into an immutable artifact set in the job's folder.

Steps run in order — draft → judge → review → scan → validate → fonts → manifest — and each
finished step's answer is stored in the job folder with its hash in the event history
(`record`). A step that finished is never run again for the same job: after a crash its
stored answer is reused (the draft is the expensive, non-deterministic one)."""

from __future__ import annotations

import dataclasses
import functools
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

from gitpub import intake, trust
from gitpub.config import StepSpec
from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import InputError
from gitpub.core.ids import Oid
from gitpub.core.states import State
from gitpub.git import worktrees
from gitpub.intake import checks
from gitpub.prepare import manifest, preflight, queued, secrets, similarity_index, steps
from gitpub.prepare import target as rules
from gitpub.prepare.answers import (
    DraftAnswer,
    DraftRequest,
    GateAnswer,
    GateRequest,
    JudgeAnswer,
    JudgeRequest,
)
from gitpub.prepare.jobtree import discard_worktree, needs_checkout
from gitpub.prepare.protocol import StepFailed
from gitpub.prepare.record import Recorder, stored_text
from gitpub.store import jobs, reads
from gitpub.store.db import parse_time
from gitpub.store.jobs import Job
from gitpub.trust import NotAllowed

if TYPE_CHECKING:
    from gitpub.fonts import FontsAnswer

FailureCode = Literal["similar", "write_set_violation", "path_refused", "not_allowed", "taken_down"]
"""The failure_code of a REVIEW prepare ends in, when the state's own (`review`) says less."""

SIMILAR_CODE: Final = "similar"
"""failure_code of a job that waits because another article is too similar to it."""

STEP_ORDER = ("draft", "judge", "review", "scan", "validate", "fonts", "manifest")


@dataclass
class Outcome:
    state: State  # READY_TO_COMMIT, REVIEW or SKIPPED
    reason: str | None = None
    failure_code: FailureCode | None = None  # when it says more than the state's own code
    similar: str | None = None  # the article a similarity REVIEW waits on


class Placed(NamedTuple):
    """What the draft and target phases settle: the article's text, where it goes, and the
    job's assets, on the base they were decided on."""

    base: Oid
    target: rules.Target
    text: str
    assets: dict[str, bytes]


class Preparer(Recorder):
    """Runs the steps of one job's prepare, in order, each checkpointed (`Recorder`)."""

    # -------------------------------------------------------------------- the steps

    def run(self) -> Outcome:
        try:
            return self._run()
        except NotAllowed as exc:
            return Outcome(State.REVIEW, exc.message, trust.FAILURE_CODE)
        except StepFailed as exc:
            return Outcome(State.REVIEW, exc.message)

    def _run(self) -> Outcome:
        """The phases of a prepare: draft, target, gates, fonts, then the seal. The target
        phase may send the job back to the draft phase, on a base fetched again."""
        # Bytes, decoded as they are: a text read (`read_text`) turns every CRLF into LF, and
        # the published article must be the bytes that were submitted.
        source = stored_text(self.ctx.state_dir / self.job.source_path)
        placed: Placed | Outcome | None = None
        while placed is None:  # None: start over on the fresh base (see `_target_phase`)
            base = self.base_commit()
            if base is None:
                p = self.ctx.config.publish
                why = self.base_problem or f"branch {p.branch!r} has no commit to build on"
                return Outcome(State.REVIEW, why)
            misplaced = preflight.placement_problems(self.ctx.repo, base, self.ctx.config)
            if misplaced:  # see there
                return Outcome(State.REVIEW, "; ".join(map(str, misplaced)), "write_set_violation")
            draft, by_operator = self._draft_phase(source)
            placed = self._target_phase(base, draft, by_operator)
        if isinstance(placed, Outcome):
            return placed
        worktree, written = self._write_files(placed)
        refused = self._gates_phase(placed, worktree)
        if refused is not None:
            return refused
        crash.point("after_gates")
        return self._fonts_phase(worktree, written)

    def _draft_phase(self, source: str) -> tuple[DraftAnswer, bool]:
        """The article's text and maybe its path: the draft step's answer, or what an
        operator fixed by hand (then True)."""
        draft = self.checkpoint(
            "draft", lambda: self.draft(source), durable=steps.external(self.ctx.config.steps.draft)
        )
        crash.point("after_draft")
        resolved = intake.resolution_path(self.ctx, self.job.job_id)
        by_operator = resolved.is_file() and self.job.target_path is not None
        if by_operator:
            # An operator fixed this article by hand (`resolve --continue`): their text, their
            # path, and no judge — the person has decided. The gates still run.
            draft = {"text": stored_text(resolved), "path": self.job.target_path}
        return draft, by_operator

    def _target_phase(
        self, base: Oid, draft: DraftAnswer, by_operator: bool
    ) -> Placed | Outcome | None:
        """Where the article goes, held to the path rules and judged, and recorded; None when
        a SKIPPED or a takedown was decided on an old picture of the remote: the base was
        fetched again."""
        existing = self.ctx.repo.files_under(base, self.ctx.config.publish.content)
        self.existing = existing  # a derived path may take its date from one of them
        try:
            target = self.article_path(draft)
        except InputError as exc:
            return Outcome(State.REVIEW, exc.message, "path_refused")
        path = target.path
        text = draft["text"]

        assets = intake.job_assets(self.ctx, self.job)
        decided = self.decide(target, text, existing, assets, by_operator)
        if not isinstance(decided, Outcome) and path not in existing and not by_operator:
            decided = self.taken_down(base, path) or decided
        if isinstance(decided, Outcome) and (
            decided.state is State.SKIPPED or decided.failure_code == rules.TAKEN_DOWN
        ):
            # SKIPPED is final, so it is decided on the remote's truth: a base from an old
            # fetch (a post removed since on another clone) never ends a job; nor does it
            # hold a job back for a takedown a person may have undone since.
            fresh = self.fresh_base()
            if fresh != base:
                self.note(
                    "base:refreshed",
                    {"from": base, "to": fresh},
                    {"base_commit": fresh},
                    durable=False,
                )
                self.refreshed = True
                return None
        if isinstance(decided, Outcome):
            return decided
        before = existing.get(path)
        self.note(
            "target",
            {"path": path, "decision": decided["decision"], "origin": target.origin}
            | ({"warning": target.warning} if target.warning else {}),
            {
                "target_path": path,
                "target_blob_sha256": (
                    manifest.sha256_bytes(before) if before is not None else None
                ),
            },
            durable=False,
        )
        if draft.get("leaks") and not by_operator:
            # Checked once the target is recorded: the person who restores the text needs
            # to know which file on the job branch to put it in.
            return Outcome(State.REVIEW, secrets.leaked("draft", draft["leaks"]))
        return Placed(base, target, text, assets)

    def _write_files(self, placed: Placed) -> tuple[Path, list[str]]:
        """The article and its assets in the job worktree, before the gates run, so a gate
        can build the site there (`worktree` in its request: contrib/site_build_gate.py)."""
        path, text = placed.target.path, placed.text
        worktree = self.worktree(placed.base)
        target_file = worktree / path
        target_file.parent.mkdir(parents=True, exist_ok=True)
        target_file.write_bytes(text.encode("utf-8"))
        written = [path]
        for name, asset_path in rules.asset_paths(placed.target, placed.assets).items():
            (worktree / asset_path).parent.mkdir(parents=True, exist_ok=True)
            (worktree / asset_path).write_bytes(placed.assets[name])
            written.append(asset_path)
        return worktree, written

    def _gates_phase(self, placed: Placed, worktree: Path) -> Outcome | None:
        """The review, scan and validate steps, then the built-in ruleset's last word: the
        REVIEW the first refusal ends in, or None when every gate passed."""
        cfg = self.ctx.config
        gates: list[tuple[str, StepSpec]] = [
            (f"review{i}", argv) for i, argv in enumerate(cfg.steps.review)
        ]
        gates += [("scan", cfg.steps.scan)]
        if cfg.steps.validate:  # `validate = []` turns validation off
            gates.append(("validate", cfg.steps.validate))
        # The secret step reads every text file the job writes: a text asset (a .txt, an
        # .svg) goes out in the same commit as the article. The other gates judge the article.
        placed_assets = rules.asset_paths(placed.target, placed.assets)
        texts = secrets.text_files(placed.target.path, placed.text, placed_assets, placed.assets)
        for name, spec in gates:
            for i, (file, body) in enumerate(texts if name == "scan" else texts[:1]):
                step = f"{name}-asset{i}" if i else name
                request: GateRequest = {"path": file, "text": body, "worktree": str(worktree)}
                answer = self.checkpoint(
                    step,
                    functools.partial(self.gate, name, spec, request, spool=step),
                    durable=steps.external(spec),
                )
                if not answer["ok"]:
                    where = f" (line {answer['line']})" if answer.get("line") else ""
                    about = f"{file}: " if i else ""
                    why = answer.get("reason") or "rejected"
                    return Outcome(State.REVIEW, f"{name}: {about}{why}{where}")
        # Whatever the configured steps are, the built-in ruleset has the last word: a
        # secret nobody allowed, or the marker of one redacted on the way, never goes out.
        found = secrets.last_word(texts, self.allow)
        if found is not None:
            return Outcome(State.REVIEW, found)
        return None

    def _fonts_phase(self, worktree: Path, written: list[str]) -> Outcome:
        """The font gate, when the blog has fonts, then the seal over every written file."""
        if self.ctx.config.fonts is not None:
            fonts_answer = self.fonts(worktree, written)
            if fonts_answer.get("review"):
                return Outcome(State.REVIEW, f"fonts: {fonts_answer['review']}")
            written += list(fonts_answer.get("outputs", {}))
        return self.seal(worktree, written)

    refreshed = False  # the base was fetched again in this prepare: it is the remote's tip

    def fresh_base(self) -> Oid | None:
        """The remote branch's tip as a fetch finds it now (a failed fetch raises: the job
        waits for the network rather than end on an old picture of the remote)."""
        p = self.ctx.config.publish
        if not self.refreshed:
            self.ctx.repo.fetch(p.remote, p.branch)
            self.refreshed = True
        return self.ctx.repo.resolve(self.ctx.tracking_ref)

    base_problem: str | None = None  # why there is no base, with the fix

    def base_commit(self) -> Oid | None:
        if self.job.base_commit:
            return Oid(self.job.base_commit)
        base, self.base_problem = preflight.base(self.ctx, self.fresh_base)
        if base is not None:
            self.note("base", {"base_commit": base}, {"base_commit": base}, durable=False)
        return base

    def draft(self, source: str) -> DraftAnswer:
        request: DraftRequest = {
            "job_id": self.job.job_id,
            "source": source,
            "topic": self.job.topic,
            "target": self.job.requested_target,
        }
        answer = self.call("draft", self.ctx.config.steps.draft, request)
        return steps.check_draft(answer)

    existing: Mapping[str, bytes] = {}  # the blog's articles at base, once prepare read them

    def article_path(self, draft: DraftAnswer) -> rules.Target:
        cfg = self.ctx.config
        if drafted := draft.get("path"):
            found = rules.Target(drafted, True, "draft path")
        elif self.job.requested_target:
            found = rules.Target(self.job.requested_target, True, "--target")
        else:
            bundle = (self.ctx.job_dir(self.job.job_id) / intake.ASSETS).is_dir()
            submitted = datetime.fromtimestamp(parse_time(self.job.created_at), timezone.utc)
            found = rules.derived(cfg, draft["text"], bundle, submitted, self.existing)
        path = checks.check_target(cfg, self.ctx.repo.root, found.path, found.origin)
        return dataclasses.replace(found, path=path)

    def decide(
        self,
        target: rules.Target,
        text: str,
        existing: Mapping[str, bytes],
        assets: dict[str, bytes],
        by_operator: bool,
    ) -> JudgeAnswer | Outcome:
        """The judge's verdict held to the path rules, or the outcome those rules end in."""
        path = target.path
        kind = "UPDATE" if path in existing else "NEW"
        clash = rules.clash([path, *rules.asset_paths(target, assets).values()], existing)
        if clash is not None:
            return Outcome(State.REVIEW, clash, "write_set_violation")
        ruled = rules.assets_verdict(target, assets, existing)
        if ruled is not None:
            return Outcome(ruled.state, ruled.reason)
        if by_operator:
            return {"decision": kind, "target": path, "reason": "resolved by an operator"}
        ruled = rules.before_judge(target, text.encode("utf-8"), existing)
        if (
            ruled is not None
            and ruled.state is State.SKIPPED
            and rules.new_assets(target, assets, existing)
        ):
            # The article is unchanged but brings files the blog lacks: deliver those.
            return {"decision": kind, "target": path, "reason": "same article, new assets"}
        if ruled is not None:
            return Outcome(ruled.state, ruled.reason)
        verdict = self.checkpoint(
            "judge",
            lambda: self.judge(path, text, existing),
            durable=steps.external(self.ctx.config.steps.judge),
        )
        if verdict.get("leaks"):
            return Outcome(State.REVIEW, secrets.leaked("judge", verdict["leaks"]))
        accepted = rules.accepted_similar(self.history)
        ruled = rules.after_judge(target, verdict, self.ctx.config.steps, accepted)
        if ruled is not None and ruled.similar is not None and ruled.state is State.REVIEW:
            return Outcome(ruled.state, ruled.reason, SIMILAR_CODE, ruled.similar)
        if ruled is not None:
            return Outcome(ruled.state, ruled.reason)
        return verdict

    def published_to(self, path: str) -> list[Job]:
        """The blog's PUBLISHED jobs whose article is `path`."""
        return reads.published_to(self.ctx.store, path)

    def taken_down(self, base: Oid, path: str) -> Outcome | None:
        """REVIEW when `path` is a publication a person took down (`rules.takedown`)."""
        job_id, repo = self.job.job_id, self.ctx.repo
        history = functools.partial(jobs.events, self.ctx.store, job_id)
        why = rules.takedown(
            repo, job_id, path, self.published_to(path), base, history, self.let_go
        )
        return None if why is None else Outcome(State.REVIEW, why, rules.TAKEN_DOWN)

    def let_go(self) -> set[str]:
        """What the remote-tracking branch held and lost, at its value now (never measured
        from `base`, which may be older: a commit published since would read as lost)."""
        ref = self.ctx.tracking_ref
        tip = self.ctx.repo.resolve(ref)
        return set() if tip is None else self.ctx.repo.let_go(ref, tip)

    turn: Turn | None = None  # see `prepare`

    def judge(self, path: str, text: str, existing: Mapping[str, bytes]) -> JudgeAnswer:
        if self.turn is not None:
            self.turn(self.beat)
        waiting = queued.articles(self.ctx, self.job, path)
        articles = similarity_index.pool(self.ctx, existing, path, text, waiting, self.beat)
        request: JudgeRequest = {
            "mode": "prepare",
            "candidate": {"path": path, "text": text},
            "existing": [
                {"path": p, "text": b.decode("utf-8", "replace")}
                for p, b in sorted(articles.items())
            ],
        }
        answer = self.call("judge", self.ctx.config.steps.judge, request)
        return steps.check_judge(answer, "prepare")

    def gate(
        self, name: str, spec: StepSpec, request: GateRequest, spool: str | None = None
    ) -> GateAnswer:
        answer = self.call(name, spec, request, spool)
        return steps.check_gate(name, answer)

    def fonts(self, worktree: Path, written: Sequence[str] = ()) -> FontsAnswer:
        from gitpub import fonts  # the font engine is heavy; only font-configured repos load it

        def run() -> FontsAnswer:
            try:
                on = None if self.tree_base is None else (self.ctx.repo, self.tree_base)
                return fonts.gate(self.ctx.config, worktree, self.beat, on=on, written=written)
            except fonts.FontError as exc:
                raise StepFailed(f"fonts: {exc.message}") from None

        answer = self.checkpoint("fonts", run)
        if fonts.outputs_differ(worktree, answer.get("outputs", {})):
            # A recorded answer can outlive its files: the worktree may have been re-created
            # since. The gate is deterministic, so running it again restores the same bytes.
            answer = run()
            self.note("fonts:restored", {"outputs": answer["outputs"]}, durable=True)
        return answer

    # ---------------------------------------------------------- worktree and manifest
    tree_base: Oid | None = None  # the commit a checkout-free font gate reads

    @property
    def artifacts(self) -> Path:
        """The job's sealed files; `manifest.save` copies nothing when they were written here."""
        return self.dir / "artifacts"

    def worktree(self, base: Oid) -> Path:
        """Where the job's files are written before they are sealed. Not a registered git
        worktree: the commit is made in memory from the sealed artifacts. When something
        reads a checkout (`jobtree.needs_checkout`), a checkout of base in a repository of its
        own that borrows the blog's objects; otherwise the artifact folder itself, sealing
        copies nothing, and the font gate reads the commit."""
        place = self.dir / "checkout"
        shutil.rmtree(place, ignore_errors=True)  # whatever a killed worker left
        if not needs_checkout(self.ctx, base):
            # Nothing reads a checkout: the files are written where they are sealed.
            shutil.rmtree(self.artifacts, ignore_errors=True)
            self.artifacts.mkdir(parents=True)
            self.tree_base = base
            return self.artifacts
        return worktrees.scratch_checkout(self.ctx.repo, base, place)

    def seal(self, worktree: Path, paths: list[str]) -> Outcome:
        """The written files in the immutable artifact folder, and the manifest."""
        entries = manifest.entries_for(worktree, paths)
        manifest.save(
            worktree,
            entries,
            self.artifacts,
            self.dir / "manifest.json",
            sync=self.ctx.store.folders_durable,
        )
        digest = manifest.digest(entries)
        shutil.rmtree(self.dir / "checkout", ignore_errors=True)
        self.note(
            "step:manifest",
            {"sha256": digest, "files": [e.path for e in entries]},
            {
                "artifact_dir": str(self.artifacts.relative_to(self.ctx.state_dir)),
                "artifact_sha256": digest,
            },
            durable=False,  # committed with the outcome: see `prepare`
        )
        return Outcome(State.READY_TO_COMMIT)


Turn = Callable[[Callable[[], None]], None]
"""Waits until the jobs ahead of this one in its worker's round are prepared, calling its
argument (the job's heartbeat) while it waits."""


def prepare(
    ctx: Context, job: Job, heartbeat: Callable[[Job], Job], turn: Turn | None = None
) -> Job:
    """RECEIVED or PREPARING → READY_TO_COMMIT, REVIEW or SKIPPED: the outcome commits in
    one transaction with the records of the steps it rests on.

    `turn`, when jobs are prepared at once (`run --concurrency`): the judge waits for it, so
    each job is judged against the articles every job ahead of it brings, as when they are
    prepared one by one (`queued`); the draft before it runs at the same time as theirs."""
    preparer = Preparer(ctx, job, heartbeat)
    preparer.turn = turn
    if job.state is State.RECEIVED:
        # Committed with the first durable record: a job killed while only built-in steps
        # ran is still RECEIVED, and simply prepared again.
        preparer.note("prepare:start", {}, to=State.PREPARING, durable=False)
    outcome = preparer.run()
    if outcome.state is not State.READY_TO_COMMIT:
        discard_worktree(ctx, job.job_id)  # a failed gate costs only the worktree
    code = outcome.failure_code or {State.REVIEW: "review"}.get(outcome.state)
    preparer.note(
        "prepare:done",
        {
            **({"reason": outcome.reason} if outcome.reason else {}),
            **({"similar": outcome.similar} if outcome.similar else {}),
        },
        {"failure_code": code},
        to=outcome.state,
        durable=True,
    )
    if outcome.state is State.READY_TO_COMMIT:
        jobs.remember_prepared(ctx.store, preparer.job)
    return preparer.job
