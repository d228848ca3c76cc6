"""Jobs: creation with idempotency, the topic cursor, transitions with their events, leases."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any, NamedTuple

from gitpub import jobrecord
from gitpub.config import Config
from gitpub.context import Context
from gitpub.errors import GitpubError, InputError, KeyReused
from gitpub.files import write_atomic
from gitpub.sanitize import sanitize, sanitize_obj
from gitpub.scan import FINGERPRINT_CHARS
from gitpub.states import State, check_transition
from gitpub.store import Store, now
from gitpub.types import JobId, Sha256, sha256_hex


class LeaseLost(GitpubError):
    """Another worker owns this job now: stop at this checkpoint, touch nothing."""


# Job and Move are NamedTuples, not frozen dataclasses: on Python 3.11 each frozen dataclass
# costs ~1 ms to create (its methods are compiled from source), and importing `dataclasses`
# (with `inspect`) ~10 ms of every `submit`. A changed copy is `job._replace(...)`.


class Job(NamedTuple):
    job_id: JobId
    idempotency_key: str
    kind: str
    state: State
    failure_code: str | None
    source_sha256: Sha256
    source_path: str
    topic: str | None
    base_commit: str | None
    target_path: str | None
    target_blob_sha256: str | None
    artifact_dir: str | None
    artifact_sha256: str | None
    local_commit: str | None
    remote_commit: str | None
    attempt: int
    max_attempts: int
    next_retry_at: str | None
    last_recheck_head: str | None
    last_recheck_delta_sha: str | None
    lease_owner: str | None
    lease_token: str | None
    lease_expires_at: str | None
    requested_target: str | None
    created_at: str
    updated_at: str
    key_display: str
    key_legacy: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Job:
        values = {name: row[name] for name in cls._fields}
        values["state"] = State(values["state"])
        return cls(**values)

    def public(self) -> dict[str, Any]:
        """The fields `status --json` and `show --json` report."""
        return {
            "job_id": self.job_id,
            "state": self.state.value,
            "failure_code": self.failure_code,
            "kind": self.kind,
            "idempotency_key": self.key_display,  # sanitized: the raw key is never stored
            "key_sha256": self.idempotency_key,
            "topic": self.topic,
            "target_path": self.target_path,
            "base_commit": self.base_commit,
            "local_commit": self.local_commit,
            "remote_commit": self.remote_commit,
            "artifact_sha256": self.artifact_sha256,
            "attempt": self.attempt,
            "max_attempts": self.max_attempts,
            "next_retry_at": self.next_retry_at,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


# ------------------------------------------------------------------------- source input


def decode_source(data: bytes, name: str, limit: int) -> str:
    """Validate submitted source bytes; every rejection names the source."""
    if len(data) > limit:
        raise InputError(f"{name}: source is {len(data)} bytes, over the limit of {limit}")
    if b"\x00" in data:
        raise InputError(f"{name}: source contains NUL bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: source is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise InputError(f"{name}: source is empty")
    return text


NAME_MAX = 255
"""Bytes in one path component: the limit of every common filesystem. A job commit made in
memory could hold a longer one, and every checkout of the blog would then fail."""


def check_target(cfg: Config, root: Path, target: str, origin: str = "--target") -> str:
    """A repository-relative article path inside one of the content folders, else InputError.

    `origin` names where the path came from (`--target`, the draft's path, the judge's
    target): a reason names only what someone actually gave."""
    pure = PurePosixPath(target.replace("\\", "/"))
    if pure.is_absolute() or target.startswith("~"):
        raise InputError(f"{origin} {target}: must be relative to the repository root")
    if ".." in pure.parts or not pure.parts:
        raise InputError(f"{origin} {target}: must not leave the content folders")
    if any(part.lower() == ".git" for part in pure.parts):
        raise InputError(f"{origin} {target}: a path inside .git is git's own, never an article")
    long = next((p for p in pure.parts if len(p.encode("utf-8")) > NAME_MAX), None)
    if long is not None:
        raise InputError(
            f"{origin} {target[:80]}…: a name of {len(long.encode('utf-8'))} bytes; "
            f"filesystems refuse names over {NAME_MAX}"
        )
    text = pure.as_posix()
    folder = next((c for c in cfg.publish.content if text.startswith(c.rstrip("/") + "/")), None)
    if folder is None:
        raise InputError(
            f"{origin} {target}: not inside a content folder ({', '.join(cfg.publish.content)})"
        )
    if pure.suffix not in cfg.publish.suffixes:
        raise InputError(f"{origin} {target}: must end in one of {', '.join(cfg.publish.suffixes)}")
    # A symlinked folder on the way could point anywhere; the resolved path must stay put.
    real_root = root.resolve()
    real_folder = (real_root / folder).resolve()
    real_target = (real_root / text).resolve()
    if not real_target.is_relative_to(real_folder) or not real_folder.is_relative_to(real_root):
        raise InputError(
            f"{origin} {target}: resolves outside the content folder through a symlink"
        )
    return text


# ------------------------------------------------------------------------------ reads


def get(store: Store, job_id: str) -> Job | None:
    row = store.conn.execute(
        "SELECT * FROM blog_publication WHERE job_id = ?", (job_id,)
    ).fetchone()
    return Job.from_row(row) if row else None


def require(store: Store, job_id: str) -> Job:
    """A job by id or a unique id prefix (like git's abbreviated hashes)."""
    job = get(store, job_id)
    if job:
        return job
    if len(job_id) < 4:
        raise InputError(f"job {job_id}: ids need 4+ characters")
    rows = store.conn.execute(
        "SELECT * FROM blog_publication WHERE job_id LIKE ? ESCAPE '\\' LIMIT 2",
        (job_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
    ).fetchall()
    if len(rows) == 1:
        return Job.from_row(rows[0])
    if len(rows) > 1:
        raise InputError(f"job {job_id}: ambiguous id prefix")
    raise InputError(f"job {job_id}: no such job")


def new_job_id() -> JobId:
    """A fresh job id: a random (version 4) UUID in its usual text form, as `uuid.uuid4()`
    writes it, which `gc` and `lost` recognise job folders by. Made from os.urandom
    directly: importing `uuid` (and `platform` behind it) costs every `submit` ~4 ms."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = raw.hex()
    return JobId(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")


def key_hash(key: str) -> Sha256:
    """What the store keeps of an idempotency key: two keys never collide, and the raw key
    (which may hold a secret) never reaches the disk."""
    return sha256_hex(key.encode("utf-8"))


def by_key(store: Store, key: str) -> Job | None:
    """The job of a raw idempotency key."""
    row = store.conn.execute(
        "SELECT * FROM blog_publication WHERE idempotency_key = ?", (key_hash(key),)
    ).fetchone()
    display = sanitize(key)
    if row is None and display != key:
        # A job from before keys were hashed kept only its sanitized key (see store).
        row = store.conn.execute(
            "SELECT * FROM blog_publication WHERE key_legacy = 1 AND key_display = ?", (display,)
        ).fetchone()
    return Job.from_row(row) if row else None


def same_request(
    job: Job, key: str, text: str, target: str | None, allow: Iterable[str] = ()
) -> Job:
    """An existing job for `key`, provided this is the same request again; else KeyReused.

    As payment APIs treat idempotency keys: a key names one request, so a key sent with
    another text (or another target) is a client's mistake, never a silent no-op. The text is
    compared as it was stored: sanitized, keeping the findings allowed by fingerprint."""
    clean = sanitize(text, allow)
    if job.source_sha256 != sha256_hex(clean.encode("utf-8")):
        raise KeyReused(sanitize(key), job.job_id, "source")
    if (target or None) != job.requested_target:
        raise KeyReused(sanitize(key), job.job_id, "target")
    return job


def all_jobs(store: Store, state: State | None = None) -> list[Job]:
    if state is None:
        rows = store.conn.execute("SELECT * FROM blog_publication ORDER BY created_at, job_id")
    else:
        rows = store.conn.execute(
            "SELECT * FROM blog_publication WHERE state = ? ORDER BY created_at, job_id",
            (state.value,),
        )
    return [Job.from_row(r) for r in rows]


def events(store: Store, job_id: str) -> list[dict[str, Any]]:
    rows = store.conn.execute(
        "SELECT seq, from_state, to_state, step, detail, at FROM blog_publication_event "
        "WHERE job_id = ? ORDER BY seq",
        (job_id,),
    )
    return [
        {
            "seq": r["seq"],
            "from_state": r["from_state"],
            "to_state": r["to_state"],
            "step": r["step"],
            "detail": json.loads(r["detail"]),
            "at": r["at"],
        }
        for r in rows
    ]


def step_results(store: Store, job_id: str) -> dict[str, dict[str, Any]]:
    """The latest recorded result of every finished prepare step of a job.

    An operator's retry or continue invalidates every step but the draft: the draft is the
    expensive, non-deterministic one, and what the person fixed lies downstream of it."""
    out: dict[str, dict[str, Any]] = {}
    for ev in events(store, job_id):
        if ev["step"].startswith("step:"):
            out[ev["step"][5:]] = ev["detail"]
        elif ev["step"].startswith("operator:"):
            out = {k: v for k, v in out.items() if k == "draft"}
    return out


def resolution_path(ctx: Context, job_id: str) -> Path:
    """Where `resolve --continue` keeps the article text a person fixed."""
    return ctx.job_dir(job_id) / "resolution.txt"


# ------------------------------------------------------------------------------ writes


def _canonical(detail: Mapping[str, Any] | None) -> str:
    # Value by value (keys included), not the serialized string: our own field names are no
    # context for a secret rule, so `{"key": "<a request uuid>"}` stays readable while a
    # token inside any value is still redacted.
    plain = json.loads(json.dumps(detail or {}, default=str))
    return json.dumps(sanitize_obj(plain), sort_keys=True, ensure_ascii=False)


def append_event(
    conn: sqlite3.Connection,
    job_id: str,
    src: State | None,
    dst: State | None,
    step: str,
    detail: Mapping[str, Any] | None,
) -> None:
    seq = conn.execute(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM blog_publication_event WHERE job_id = ?", (job_id,)
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO blog_publication_event (job_id, seq, from_state, to_state, step, detail, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            job_id,
            seq,
            src.value if src else None,
            dst.value if dst else None,
            step,
            _canonical(detail),
            now(),
        ),
    )


def note(conn: sqlite3.Connection, job_id: str, step: str, detail: Mapping[str, Any]) -> None:
    """An event without a state change, inside the caller's transaction."""
    append_event(conn, job_id, None, None, step, detail)


def check_allow(allow: Iterable[str]) -> tuple[str, ...]:
    """`--allow` values, each a fingerprint as `git blogpub scan` prints it."""
    out: list[str] = []
    for value in allow:
        value = value.strip().lower()
        if len(value) != FINGERPRINT_CHARS or value.strip("0123456789abcdef"):
            raise InputError(
                f"--allow {value!r}: not a fingerprint ({FINGERPRINT_CHARS} hex digits, "
                "as `git blogpub scan` prints them)"
            )
        out.append(value)
    return tuple(sorted(set(out)))


def allowed(ctx: Context, job_id: str) -> frozenset[str]:
    """Fingerprints this job may publish as written: the repository's `[scan] allow` plus
    those a person passed with `submit --allow` or `resolve --continue --allow` (the
    events keep only fingerprints, never the text they stand for)."""
    rows = ctx.store.conn.execute(
        "SELECT detail FROM blog_publication_event WHERE job_id = ? AND detail LIKE '%allow%'",
        (job_id,),
    ).fetchall()
    extra: set[str] = set()
    for (detail,) in rows:
        value = json.loads(detail).get("allow")
        if isinstance(value, list):
            extra.update(str(v) for v in value)
    return ctx.config.scan.allow | frozenset(extra)


def create(
    ctx: Context,
    *,
    key: str,
    source: str,
    allow: Sequence[str] = (),
    kind: str = "article",
    topic: str | None = None,
    target: str | None = None,
    assets: Mapping[str, bytes] | None = None,
    conn_hook: Callable[[sqlite3.Connection, str], None] | None = None,
) -> tuple[Job, bool]:
    """Create the job for `key`, or return the existing one (created=False).

    The idempotency key says "the same request again" (the same key with another source is
    refused: KeyReused); the source hash is only an index: the same text submitted next week
    under a new key is a new, legitimate request."""
    store = ctx.store
    allowed = ctx.config.scan.allow | frozenset(allow)
    existing = by_key(store, key)
    if existing:
        return same_request(existing, key, source, target, allowed), False
    job_id = new_job_id()
    # The source is kept as written only where a person allowed a finding by fingerprint;
    # anything else the ruleset sees is redacted before it touches the disk.
    clean = sanitize(source, allowed)
    source_path = ctx.job_dir(job_id) / "source.txt"
    source_sha256 = sha256_hex(clean.encode("utf-8"))
    stamp = now()
    # The files first, then the row: a crash between them leaves an orphan folder that gc
    # removes, never a row pointing at nothing. The record makes the folder enough to
    # rebuild the row from, should the database ever be lost.
    write_atomic(source_path, clean.encode("utf-8"))
    for name, data in sorted((assets or {}).items()):
        write_atomic(ctx.job_dir(job_id) / ASSETS / name, data)
    jobrecord.create(
        ctx.job_dir(job_id),
        {
            "job_id": job_id,
            "key_sha256": key_hash(key),
            "key_display": sanitize(key),
            "kind": kind,
            "target": target,
            "topic": sanitize(topic) if topic is not None else None,
            "created_at": stamp,
            "source_sha256": source_sha256,
        },
    )
    try:
        with store.transaction() as conn:
            conn.execute(
                "INSERT INTO blog_publication (job_id, idempotency_key, key_display, kind, state,"
                " source_sha256, source_path, topic, requested_target, max_attempts, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job_id,
                    key_hash(key),
                    sanitize(key),
                    kind,
                    State.RECEIVED.value,
                    source_sha256,
                    str(source_path.relative_to(ctx.state_dir)),
                    sanitize(topic) if topic is not None else None,
                    target,
                    ctx.config.retry.max_attempts,
                    stamp,
                    stamp,
                ),
            )
            append_event(
                conn,
                job_id,
                None,
                State.RECEIVED,
                "submit",
                {
                    "key": sanitize(key),
                    "kind": kind,
                    "target": target,
                    **({"allow": sorted(allow)} if allow else {}),
                    **({"assets": sorted(assets)} if assets else {}),
                },
            )
            if conn_hook is not None:
                conn_hook(conn, job_id)
    except sqlite3.IntegrityError:
        # Lost a race with a concurrent submit of the same key: theirs is the job.
        _remove_tree(ctx.job_dir(job_id))
        winner = by_key(store, key)
        if winner is None:
            raise
        return same_request(winner, key, source, target, allowed), False
    except BaseException:
        _remove_tree(ctx.job_dir(job_id))
        raise
    job = get(store, job_id)
    assert job is not None
    return job, True


def submit(
    ctx: Context,
    *,
    key: str,
    text: str,
    target: str | None = None,
    topic: str | None = None,
    allow: Sequence[str] = (),
    assets: Mapping[str, bytes] | None = None,
) -> tuple[Job, bool]:
    """The one entry for new publications (CLI and API): validate, then create or find."""
    if not key.strip():
        raise InputError("--key must not be empty")
    if target is not None:
        target = check_target(ctx.config, ctx.repo.root, target)
    for name in assets or {}:
        check_asset_name(name)
    return create(ctx, key=key, source=text, target=target, topic=topic, allow=allow, assets=assets)


ASSETS = "assets"
"""Folder of a job's `--asset` files inside its job folder, kept as submitted."""


def check_asset_name(name: str) -> str:
    """An asset travels beside its article under its own file name: one safe path segment."""
    if (
        not name
        or "/" in name
        or "\\" in name
        or name in (".", "..")
        or name.startswith(".")
        or any(ord(c) < 32 for c in name)
    ):
        raise InputError(f"--asset {name!r}: the file name must be one plain name")
    return name


def job_assets(ctx: Context, job: Job) -> dict[str, bytes]:
    """The job's `--asset` files by name."""
    folder = ctx.job_dir(job.job_id) / ASSETS
    if not folder.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _remove_tree(path: Path) -> None:
    import shutil  # only on this failure path: `submit` should not pay for importing it

    shutil.rmtree(path, ignore_errors=True)


def read_source(ctx: Context, job: Job) -> str:
    return (ctx.state_dir / job.source_path).read_text("utf-8")


def _set_clause(values: Mapping[str, Any]) -> tuple[str, list[Any]]:
    allowed = set(Job._fields) - {"job_id", "state", "created_at", "updated_at"}
    parts, params = [], []
    for name, value in values.items():
        if name not in allowed:
            raise ValueError(f"not a job field: {name}")
        parts.append(f"{name} = ?")
        params.append(sanitize(value) if isinstance(value, str) else value)
    return ", ".join(parts), params


def transition(
    store: Store,
    job: Job,
    to: State,
    step: str,
    detail: Mapping[str, Any] | None = None,
    *,
    operator: bool = False,
    also: Callable[[sqlite3.Connection], None] | None = None,
    **values: Any,
) -> Job:
    """Move job to `to` (one transaction with its event). The row must still be in job.state
    and, when job holds a lease, still under that lease; otherwise LeaseLost."""
    check_transition(job.state, to, operator=operator)
    fresh = _update(store, job, to, step, detail, values, also)
    jobrecord.remember_state(job_dir(store, job.job_id), fresh)
    return fresh


def record(
    store: Store, job: Job, step: str, detail: Mapping[str, Any] | None = None, **values: Any
) -> Job:
    """Record a step result (and field changes) without changing state."""
    return _update(store, job, None, step, detail, values)


def _update(
    store: Store,
    job: Job,
    to: State | None,
    step: str,
    detail: Mapping[str, Any] | None,
    values: Mapping[str, Any],
    also: Callable[[sqlite3.Connection], None] | None = None,
) -> Job:
    with store.transaction() as conn:
        _apply(conn, job, to, step, detail, values)
        if also is not None:
            also(conn)
    fresh = get(store, job.job_id)
    assert fresh is not None
    return fresh


def _apply(
    conn: sqlite3.Connection,
    job: Job,
    to: State | None,
    step: str,
    detail: Mapping[str, Any] | None,
    values: Mapping[str, Any],
) -> None:
    sets, params = _set_clause(values)
    state = to or job.state
    sql = "UPDATE blog_publication SET state = ?, updated_at = ?" + (f", {sets}" if sets else "")
    sql += " WHERE job_id = ? AND state = ?"
    args: list[Any] = [state.value, now(), *params, job.job_id, job.state.value]
    if job.lease_token is not None:
        sql += " AND lease_token = ?"
        args.append(job.lease_token)
    if conn.execute(sql, args).rowcount != 1:
        raise LeaseLost(f"job {job.job_id}: no longer {job.state} under this worker's lease")
    append_event(conn, job.job_id, job.state if to else None, to, step, detail)


NO_VALUES: Mapping[str, Any] = MappingProxyType({})
"""A Move's field changes when it has none: shared by every Move, so read-only."""


class Move(NamedTuple):
    """One change of a batch (see `transition_all`): a transition, or with `to=None` an
    event and field changes in the job's current state, like `record`."""

    job: Job
    to: State | None
    step: str
    detail: Mapping[str, Any] | None = None
    values: Mapping[str, Any] = NO_VALUES


def transition_all(
    store: Store, moves: Sequence[Move], also: Callable[[sqlite3.Connection], None] | None = None
) -> dict[str, Job]:
    """Several changes committed together: each is checked against the table and gets its
    own event, and either all of them happen or none. For bookkeeping over many jobs (a
    delivered batch, start-up recovery), where one durable commit per change would dominate.
    Two moves of one job chain: the second starts from the state the first left. Returns the
    jobs as they now are."""
    states: dict[str, State] = {}
    for move in moves:
        start = states.get(move.job.job_id, move.job.state)
        if move.to is not None:
            check_transition(start, move.to)
            states[move.job.job_id] = move.to
    moved = set(states)
    with store.transaction() as conn:
        states.clear()
        for move in moves:
            start = states.get(move.job.job_id, move.job.state)
            job = move.job if start is move.job.state else move.job._replace(state=start)
            _apply(conn, job, move.to, move.step, move.detail, move.values)
            states[job.job_id] = move.to or start
        if also is not None:
            also(conn)
    fresh: dict[str, Job] = {}
    for job_id in states:
        row = get(store, job_id)
        if row is not None:
            fresh[job_id] = row
            if job_id in moved:
                jobrecord.remember_state(job_dir(store, job_id), row)
    return fresh


def job_dir(store: Store, job_id: str) -> Path:
    """The job's folder beside the database (`Context.job_dir` for those holding a context)."""
    return store.path.parent / "jobs" / job_id


def remember_prepared(store: Store, job: Job) -> None:
    jobrecord.remember_prepared(job_dir(store, job.job_id), job)
