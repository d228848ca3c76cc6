"""`git blogpub reconcile --rebuild`: make a lost job database again from what outlived it.

Every job folder holds the job's durable record (`job.json`: key hash, kind, target, topic,
created_at; the sealed manifest; the outcome once the job ended) beside `source.txt`, the
manifest and the artifacts. With `refs/blog-jobs/<id>` (the job's local commit) and the
remote's trailers (checked against the manifest's content, as any confirmation is), each job
is put back in the furthest state the evidence proves:

- its commit is on the remote branch → PUBLISHED (never pushed again);
- its record says it ended (SKIPPED, REVIEW, CONFLICT, FAILED, PUBLISHED) → that state, so an
  abandoned job is not resurrected;
- its commit is in `refs/blog-jobs` → LOCAL_COMMITTED (the relay confirms before it pushes);
- its sealed artifacts verify → READY_TO_COMMIT;
- otherwise → RECEIVED, with its recorded draft adopted: a checkpointed draft is never paid
  for again.

Each job gets a `rebuilt` event naming its evidence. The lost database is moved aside, never
deleted. Nothing here runs while the database is usable: it only ever replaces a lost one."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitpub import config
from gitpub.context import Context, open_context
from gitpub.core.errors import GitCommandError, GitpubError
from gitpub.core.states import State
from gitpub.deliver.confirm import differing_paths
from gitpub.git import trailers
from gitpub.git.locks import Locks
from gitpub.git.repo import Repo
from gitpub.ops import cleanup
from gitpub.prepare import manifest
from gitpub.store import folders, jobs, lost, outbox, reads, topics
from gitpub.store.db import Connection, SqliteStore, Store, database_file, now
from gitpub.store.errors import StoreError, Unavailable

ENDED = {
    s.value for s in (State.PUBLISHED, State.SKIPPED, State.REVIEW, State.CONFLICT, State.FAILED)
}
_RANK = {
    State.PUBLISHED: 5,
    State.SKIPPED: 4,
    State.LOCAL_COMMITTED: 3,
    State.READY_TO_COMMIT: 2,
    State.REVIEW: 1,
    State.CONFLICT: 1,
    State.FAILED: 1,
    State.RECEIVED: 0,
}


@dataclass
class Plan:
    """One job as it will be inserted: its row values and its events."""

    values: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]

    @property
    def state(self) -> State:
        return State(self.values["state"])


@dataclass
class Rebuilt:
    moved_aside: list[str] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)  # job id → state
    left: list[str] = field(default_factory=list)  # what was not rebuilt, one line each
    remote: str = ""


def rebuild(path: Path) -> Rebuilt:
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    if cfg.store_url is not None:
        return _rebuild_shared(repo)
    state_dir = repo.state_dir
    locks = Locks(state_dir / "locks")
    out = Rebuilt()
    # The delivery lock: no relay of this clone may push or fetch while the evidence is read.
    with locks.hold("delivery"):
        db = database_file(state_dir)
        _require_lost(state_dir, db)
        out.moved_aside = _move_aside(db)
        out.remote = _fetch(repo, cfg)
        store = SqliteStore(db)
        try:
            ctx = Context(repo=repo, config=cfg, store=store, locks=locks)
            _rebuild_into(ctx, out, state_dir, set())
        finally:
            store.close()
    return out


def _rebuild_shared(repo: Repo) -> Rebuilt:
    """A shared store that lost rows (a database restored from an older backup, or a new
    one): put back the jobs this node's copies of their folders, its job refs and the
    remote's trailers prove, as for a lost embedded store. Every job the store still knows
    is left as it is; so is a folder whose key the store already knows under another job."""
    out = Rebuilt()
    with open_context(repo.root) as ctx, ctx.locks.hold("delivery"):
        root = ctx.store.path.parent
        if not lost.job_folders(root):
            raise GitpubError(
                f"{root / 'jobs'}: this node keeps no copy of a job folder; "
                "nothing to rebuild from here"
            )
        out.remote = _fetch(repo, ctx.config)
        _rebuild_into(ctx, out, root, set(reads.all_rows(ctx.store.conn)))
    return out


def _require_lost(state_dir: Path, db: Path) -> None:
    if not lost.job_folders(state_dir):
        raise GitpubError(f"{state_dir / 'jobs'}: no job folders; nothing to rebuild from")
    if not db.exists():
        return
    # A database the machine cannot read now (a full disk, a failing filesystem) is not a
    # lost one: rebuilding would move its history aside for a copy made from what the
    # folders and the remote remember.
    try:
        conn = reads.open_raw(db)
    except Unavailable as fault:
        raise GitpubError(f"not rebuilding: {fault.message}") from None
    except StoreError:
        return  # damaged: lost indeed
    try:
        if lost.why_lost(state_dir, conn) is None:
            count = reads.count(conn)
            raise GitpubError(
                f"{db}: the job database is usable and knows {count} job(s); nothing to "
                "rebuild (to rebuild it from the job folders anyway, move it aside first)"
            )
    except Unavailable as fault:
        raise GitpubError(f"not rebuilding: {fault.message}") from None
    except StoreError:
        return
    finally:
        conn.close()


def _move_aside(db: Path) -> list[str]:
    """The lost database and its WAL files, renamed as a pair sqlite can still open."""
    stamp = now().replace(":", "").replace("-", "")  # to the microsecond: never renamed over
    moved = []
    for suffix in ("", "-wal", "-shm"):
        old = db.with_name(db.name + suffix)
        if old.exists():
            new = db.with_name(f"{db.name}.lost-{stamp}{suffix}")
            old.rename(new)
            moved.append(new.name)
    return moved


def _fetch(repo: Repo, cfg: config.Config) -> str:
    try:
        repo.fetch(cfg.publish.remote, cfg.publish.branch)
    except GitCommandError as exc:
        tail = exc.stderr.strip().splitlines()[-1:] or ["no answer"]
        return f"remote not reachable ({tail[0]}): delivery confirms each job before pushing"
    return f"checked against {cfg.publish.remote}/{cfg.publish.branch}"


def _rebuild_into(ctx: Context, out: Rebuilt, root: Path, known: set[str]) -> None:
    """Insert a job for each folder under `root` the store does not know (`known`)."""
    plans: list[Plan] = []
    for folder in lost.job_folders(root):
        if folder.name in known:
            continue
        plan = _plan(ctx, folder)
        if isinstance(plan, str):
            out.left.append(f"job folder {folder.name}: {plan}")
        else:
            plans.append(plan)
    # Two folders with one key: a submit that died before its row, and the job made when
    # the client sent the key again. The one that got further is the job.
    plans.sort(key=lambda p: (-_RANK.get(p.state, 0), p.values["created_at"]))
    keys: dict[str, str] = {}
    kept: list[Plan] = []
    for plan in plans:
        key = plan.values["idempotency_key"]
        other = reads.by_key(ctx.store, key, None) if known else None
        if other is not None:
            out.left.append(
                f"job folder {plan.values['job_id']}: the store has its key as job "
                f"{other.job_id}; left as it is"
            )
            continue
        if key in keys:
            out.left.append(
                f"job folder {plan.values['job_id']}: same key as job {keys[key]}; left as it is"
            )
            continue
        keys[key] = plan.values["job_id"]
        kept.append(plan)
    kept.sort(key=lambda p: (p.values["created_at"], p.values["job_id"]))
    with ctx.store.transaction() as conn:
        for plan in kept:
            _insert(ctx.store, conn, plan)
            if plan.state is State.LOCAL_COMMITTED:
                outbox.enqueue_publish(conn, plan.values["job_id"])
            _restore_topic(conn, plan.values)
    out.states = {p.values["job_id"]: p.values["state"] for p in kept}
    with_folder = {p.values["job_id"] for p in kept} | known
    orphans = sorted(
        i for i in cleanup.inventory(ctx.repo, ctx.state_dir).refs if i not in with_folder
    )
    if orphans:
        out.left.append(
            f"{len(orphans)} job ref(s) without a job folder left as they are "
            f"(their source is gone): {', '.join(trailers.job_ref(i) for i in orphans[:3])}"
        )


def _insert(store: Store, conn: Connection, plan: Plan) -> None:
    """The job row, and its events: the first moves it from nothing into its state."""
    jobs.insert(store, conn, plan.values)
    for n, (step, detail) in enumerate(plan.events):
        to = plan.state if n == 0 else None
        jobs.append_event(conn, plan.values["job_id"], None, to, step, detail)


def _restore_topic(conn: Connection, values: dict[str, Any]) -> None:
    session, _, revision = values["key_display"].rpartition(":")
    if values["kind"] == "topic" and session.startswith("topic:") and revision.isdigit():
        topics.restore(conn, session[len("topic:") :], int(revision))


def _plan(ctx: Context, folder: Path) -> Plan | str:
    job_id = folder.name
    source = folder / "source.txt"
    if not source.is_file():
        return "no source.txt; left as it is"
    rec = folders.load(folder)
    evidence = ["job.json"] if rec is not None else ["source.txt (no job.json)"]
    rec = rec or {}
    stamp = now()
    values: dict[str, Any] = {
        "job_id": job_id,
        "idempotency_key": rec.get("key_sha256")
        or hashlib.sha256(f"gitpub-lost-key:{job_id}".encode()).hexdigest(),
        "key_display": rec.get("key_display") or f"(key lost with the database, job {job_id})",
        "key_legacy": 0,
        "kind": rec.get("kind") if rec.get("kind") in ("article", "topic") else "article",
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "source_path": str(source.relative_to(ctx.state_dir)),
        "topic": rec.get("topic"),
        "requested_target": rec.get("target"),
        "max_attempts": ctx.config.retry.max_attempts,
        "attempt": 0,
        "created_at": rec.get("created_at") or lost.folder_time(folder) or stamp,
        "updated_at": stamp,
        # The workflow a writer chose: review mode, and a time to wait for (`submit --at`).
        "review": 1 if rec.get("review") is True else 0,
        "scheduled_at": rec.get("scheduled_at")
        if isinstance(rec.get("scheduled_at"), str)
        else None,
    }
    found = rec.get("outcome")
    outcome: dict[str, Any] = found if isinstance(found, dict) else {}
    prepared = _prepared(folder, rec)
    events: list[tuple[str, dict[str, Any]]] = []
    if prepared is not None:
        values.update(prepared)
        state = _prepared_state(ctx, folder, values, outcome, evidence)
    elif outcome.get("state") in (State.SKIPPED.value, State.REVIEW.value):
        state = State(outcome["state"])
        values["failure_code"] = outcome.get("failure_code")
        evidence.append(f"recorded outcome {state.value}")
    elif values["scheduled_at"] and values["scheduled_at"] > stamp:
        state = State.SCHEDULED
        evidence.append(f"scheduled for {values['scheduled_at']}")
    else:
        state = State.RECEIVED
    draft = folder / "steps" / "draft.json"
    if state is State.RECEIVED and draft.is_file():
        # Adopted like any finished step after a crash: its hash is its checkpoint.
        digest = manifest.sha256_bytes(draft.read_bytes())
        events.append(("step:draft", {"sha256": digest, "adopted": "rebuild"}))
        evidence.append("steps/draft.json")
    values["state"] = state.value
    if state is State.FAILED:
        values["next_retry_at"] = stamp  # its delivery probe is due at once
    detail = {"state": state.value, "from": evidence}
    if values.get("remote_commit"):
        detail["remote_commit"] = values["remote_commit"]
    return Plan(values, [("rebuilt", detail), *events])


def _prepared(folder: Path, rec: dict[str, Any]) -> dict[str, Any] | None:
    """The sealed manifest's fields, when the record has them and manifest.json agrees."""
    prepared = rec.get("prepared")
    if not isinstance(prepared, dict) or not prepared.get("artifact_sha256"):
        return None
    try:
        entries = manifest.load(folder / "manifest.json")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if manifest.digest(entries) != prepared["artifact_sha256"]:
        return None  # prepared again since (the record lags a crash behind): prepare anew
    keys = ("base_commit", "target_path", "target_blob_sha256", "artifact_dir", "artifact_sha256")
    return {k: prepared.get(k) for k in keys}


def _prepared_state(
    ctx: Context,
    folder: Path,
    values: dict[str, Any],
    outcome: dict[str, Any],
    evidence: list[str],
) -> State:
    job_id, sha = values["job_id"], values["artifact_sha256"]
    entries = manifest.load(folder / "manifest.json")
    local = trailers.find_local(ctx.repo, job_id, sha)
    if local:
        values["local_commit"] = local
        evidence.append("refs/blog-jobs")
    candidates = trailers.find_remote_all(
        ctx.repo, ctx.tracking_ref, values["base_commit"], job_id, sha
    )
    remote = next((c for c in candidates if not differing_paths(ctx, c, entries)), None)
    if remote:
        values["remote_commit"] = remote
        evidence.append("remote trailers and content")
        return State.PUBLISHED
    ended = outcome.get("state")
    if ended in ENDED:
        evidence.append(f"recorded outcome {ended}")
        values["failure_code"] = outcome.get("failure_code")
        if ended == State.PUBLISHED.value:
            values["remote_commit"] = outcome.get("remote_commit")
        return State(ended)
    if local:
        return State.LOCAL_COMMITTED
    artifacts = ctx.state_dir / (values["artifact_dir"] or "")
    if values["artifact_dir"] and not manifest.verify(artifacts, entries):
        evidence.append("verified artifacts")
        return State.READY_TO_COMMIT
    for key in ("base_commit", "target_path", "target_blob_sha256", "artifact_dir"):
        values[key] = None
    values["artifact_sha256"] = None
    return State.RECEIVED
