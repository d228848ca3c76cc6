"""What a submit hands over — key, source, target, assets, allow list: checked, stored as a
new job (idempotent by key) with its folder, and read back by the steps that need them."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from gitpub import scan
from gitpub.config import Config
from gitpub.context import Context
from gitpub.core import crash
from gitpub.core.errors import InputError, KeyReused, UsageError
from gitpub.core.files import write_atomic
from gitpub.core.ids import JobId, Sha256, sha256_hex
from gitpub.core.states import State
from gitpub.intake import checks
from gitpub.scan.sanitize import sanitize, sanitize_name
from gitpub.store import folders, jobs, reads
from gitpub.store.db import Connection, Store, at, now
from gitpub.store.errors import Duplicate
from gitpub.store.jobs import Job, JobKind, append_event, get


class Request(NamedTuple):
    """One publication as a writer hands it over, through any door (CLI, API, MCP)."""

    key: str
    text: str
    target: str | None = None
    topic: str | None = None
    allow: tuple[str, ...] = ()
    assets: Mapping[str, bytes] = MappingProxyType({})  # path beside the article -> bytes
    source: str = "source"  # how errors name the text: a file name, `<stdin>`, …
    labels: Mapping[str, str] = MappingProxyType({})  # how errors name each asset
    at: str | None = None  # `--at`: ISO 8601 with an offset, or `+N{s,m,h,d}`
    review: bool = False  # `--review`: to a review branch; published by a person's merge


def check(cfg: Config, root: Path, req: Request) -> Request:
    """Everything the door refuses, before the store is opened: a refused submit leaves no
    trace, not even an empty job database. A source or a text asset holding a secret nobody
    allowed is refused by the built-in ruleset, whatever the blog's `scan` step is."""
    # First, as click checks `--since` before anything runs: a usage error is said alone.
    when = None if req.at is None else scheduled_at(req.at)
    key = checks.text_argument(req.key, "--key")
    if not key.strip():
        raise InputError("--key must not be empty")
    if checks.has_control(key):
        raise InputError("--key: holds a control character (a newline, an escape)")
    allow = checks.check_allow(req.allow)
    allowed = cfg.scan.allow | frozenset(allow)
    target = req.target
    if target is not None:
        target = checks.check_target(cfg, root, checks.text_argument(target, "--target"))
    topic = req.topic
    if topic is not None:
        topic = checks.no_secret(checks.text_argument(topic, "--topic"), "--topic")
    text = checks.text_argument(req.text, req.source)
    text = checks.decode_source(text.encode("utf-8"), req.source, cfg.publish.max_source_bytes)
    scan.refuse(text, req.source, allow=allowed)
    assets = {}
    for rel in sorted(req.assets):
        checks.check_asset_path(checks.text_argument(rel, "--asset"))
    checks.check_asset_set(req.assets)
    for rel, data in sorted(req.assets.items()):
        label = req.labels.get(rel, f"--asset {rel}")
        if len(data) > cfg.publish.max_asset_bytes:  # before the scan reads it all
            raise InputError(checks.asset_too_big(label, cfg.publish.max_asset_bytes))
        scan.refuse_file(data, label, allow=allowed)
        assets[rel] = data
    return req._replace(
        key=key, text=text, target=target, topic=topic, allow=allow, assets=assets, at=when
    )


def scheduled_at(text: str) -> str:
    """`--at` as the store writes times (UTC, sorting in time order), or the line refusing it:
    a value that does not parse is a usage error (exit 2), as `--since` is."""
    from gitpub.core.timespec import parse_when  # `submit` without --at never imports it

    try:
        checks.text_argument(text, "--at")
    except InputError as exc:
        raise UsageError(exc.message) from None
    try:
        return at(parse_when(text))
    except (ValueError, OverflowError, OSError) as exc:
        raise UsageError(f"--at {exc}") from None


def accept(path: Path, req: Request, cfg: Config | None = None) -> tuple[Job, bool]:
    """The one door for new publications: checked, then created (or found by its key).
    `cfg`: the repository's config, when the caller has loaded it already."""
    from gitpub import config as config_mod
    from gitpub.context import open_context
    from gitpub.git.repo import Repo

    repo = Repo.discover(path)
    if cfg is None:
        cfg = config_mod.load(repo.root)
    req = check(cfg, repo.root, req)
    with open_context(path, cfg=cfg) as ctx:
        job, created = create_checked(ctx, req)
    if created:
        crash.point("after_received")
    return job, created


# ----------------------------------------------------------------------- keys and jobs


def new_job_id() -> JobId:
    """A fresh job id: a random (version 4) UUID in its usual text form, which `gc` and
    `lost` recognise job folders by."""
    return JobId(str(uuid.uuid4()))


def key_hash(key: str) -> Sha256:
    """What the store keeps of an idempotency key: two keys never collide, and the raw key
    (which may hold a secret) never reaches the disk."""
    return sha256_hex(key.encode("utf-8"))


def by_key(store: Store, key: str) -> Job | None:
    """The job of a raw idempotency key."""
    display = sanitize(key)
    # A job from before keys were hashed kept only its sanitized key (see store).
    return reads.by_key(store, key_hash(key), display if display != key else None)


def same_request(
    job: Job, key: str, text: str, target: str | None, allow: Iterable[str] = ()
) -> Job:
    """An existing job for `key`, provided this is the same request again; else KeyReused.

    As payment APIs treat idempotency keys: a key names one request, so a key sent with
    another text (or another target) is a client's mistake, never a silent no-op. The text is
    compared as it was stored: sanitized, keeping the findings allowed by fingerprint."""
    clean = sanitize(text, allow)
    if job.source_sha256 != sha256_hex(clean.encode("utf-8")):
        raise KeyReused(sanitize_name(key), job.job_id, "source")
    if (target or None) != job.requested_target:
        raise KeyReused(sanitize_name(key), job.job_id, "target")
    return job


def allowed(ctx: Context, job_id: str) -> frozenset[str]:
    """Fingerprints this job may publish as written (`allowed_in` its history)."""
    return allowed_in(ctx, jobs.events(ctx.store, job_id))


def allowed_in(ctx: Context, history: Iterable[jobs.Event]) -> frozenset[str]:
    """Fingerprints a job with this history may publish as written: the repository's
    `[scan] allow` plus those a person passed with `submit --allow` or `resolve --continue
    --allow` (the events keep only fingerprints, never the text they stand for)."""
    out: set[str] = set()
    for event in history:
        value = (event["detail"] or {}).get("allow")
        if isinstance(value, list):
            out.update(str(v) for v in value)
    return ctx.config.scan.allow | frozenset(out)


class _New(NamedTuple):
    """A new job as `create` decides it, once for its folder, its row and its event."""

    job_id: JobId
    key: str  # raw: only its hash and its sanitized display are stored
    kind: JobKind
    topic: str | None
    target: str | None
    scheduled_at: str | None
    review: bool
    state: State
    stamp: str
    source: str  # sanitized, as stored
    source_sha256: Sha256


def create(
    ctx: Context,
    *,
    key: str,
    source: str,
    allow: Sequence[str] = (),
    kind: JobKind = "article",
    topic: str | None = None,
    target: str | None = None,
    assets: Mapping[str, bytes] | None = None,
    conn_hook: Callable[[Connection, str], None] | None = None,
    scheduled_at: str | None = None,
    review: bool = False,
) -> tuple[Job, bool]:
    """Create the job for `key`, or return the existing one (created=False).

    A job with a `scheduled_at` still to come is created SCHEDULED: recorded (and durable)
    now, prepared and delivered once its time has come. A time already past is simply now.
    `review` (or `[publish] review`) sends it to a review branch instead of the published one.

    The idempotency key says "the same request again" (the same key with another source is
    refused: KeyReused); the source hash is only an index: the same text submitted next week
    under a new key is a new, legitimate request."""
    allowed = ctx.config.scan.allow | frozenset(allow)
    existing = by_key(ctx.store, key)
    if existing:
        return same_request(existing, key, source, target, allowed), False
    stamp = now()
    # The source is kept as written only where a person allowed a finding by fingerprint;
    # anything else the ruleset sees is redacted before it touches the disk.
    clean = sanitize(source, allowed)
    new = _New(
        job_id=new_job_id(),
        key=key,
        kind=kind,
        topic=topic,
        target=target,
        scheduled_at=scheduled_at,
        review=review or ctx.config.publish.review,
        state=(
            State.SCHEDULED if scheduled_at is not None and scheduled_at > stamp else State.RECEIVED
        ),
        stamp=stamp,
        source=clean,
        source_sha256=sha256_hex(clean.encode("utf-8")),
    )
    # The files first, then the row: a crash between them leaves an orphan folder that gc
    # removes, never a row pointing at nothing. The record makes the folder enough to
    # rebuild the row from, should the database ever be lost.
    _write_folder(ctx, new, assets or {})
    try:
        _insert_row(ctx, new, allow, assets or {}, conn_hook)
    except Duplicate as exc:
        return _lost_race(ctx, new, source, allowed, exc), False
    except BaseException:
        _remove_tree(ctx.job_dir(new.job_id))
        raise
    job = get(ctx.store, new.job_id)
    assert job is not None
    return job, True


def _write_folder(ctx: Context, new: _New, assets: Mapping[str, bytes]) -> None:
    """The job folder: the source, the assets, and the record (`job.json`)."""
    job_dir, sync = ctx.job_dir(new.job_id), ctx.store.folders_durable
    write_atomic(job_dir / "source.txt", new.source.encode("utf-8"), sync=sync)
    for name, data in sorted(assets.items()):
        write_atomic(job_dir / ASSETS / name, data, sync=sync)
    folders.create(
        job_dir,
        {
            "job_id": new.job_id,
            "key_sha256": key_hash(new.key),
            "key_display": sanitize_name(new.key),
            "kind": new.kind,
            "target": new.target,
            "topic": sanitize(new.topic) if new.topic is not None else None,
            "created_at": new.stamp,
            "source_sha256": new.source_sha256,
            "scheduled_at": new.scheduled_at,
            "review": new.review,
        },
        sync,
    )


def _insert_row(
    ctx: Context,
    new: _New,
    allow: Sequence[str],
    assets: Mapping[str, bytes],
    conn_hook: Callable[[Connection, str], None] | None,
) -> None:
    """The job's row and its submit event, in one transaction with `conn_hook`'s writes."""
    source_path = ctx.job_dir(new.job_id) / "source.txt"
    with ctx.store.transaction() as conn:
        jobs.insert(
            ctx.store,
            conn,
            {
                "job_id": new.job_id,
                "idempotency_key": key_hash(new.key),
                "key_display": sanitize_name(new.key),
                "kind": new.kind,
                "state": new.state.value,
                "source_sha256": new.source_sha256,
                "source_path": str(source_path.relative_to(ctx.state_dir)),
                "topic": new.topic,
                "requested_target": new.target,
                "scheduled_at": new.scheduled_at,
                "review": int(new.review),
                "max_attempts": ctx.config.retry.max_attempts,
                "created_at": new.stamp,
                "updated_at": new.stamp,
            },
        )
        append_event(
            conn,
            new.job_id,
            None,
            new.state,
            "submit",
            {
                "key": sanitize_name(new.key),
                "kind": new.kind,
                "target": new.target,
                **({"scheduled_at": new.scheduled_at} if new.scheduled_at else {}),
                **({"review": True} if new.review else {}),
                **({"allow": sorted(allow)} if allow else {}),
                **({"assets": sorted(assets)} if assets else {}),
            },
        )
        if conn_hook is not None:
            conn_hook(conn, new.job_id)


def _lost_race(
    ctx: Context, new: _New, source: str, allowed: frozenset[str], duplicate: Duplicate
) -> Job:
    """A concurrent submit of the same key made its row first: theirs is the job, and this
    one's folder goes."""
    _remove_tree(ctx.job_dir(new.job_id))
    winner = by_key(ctx.store, new.key)
    if winner is None:
        raise duplicate
    return same_request(winner, new.key, source, new.target, allowed)


def submit(
    ctx: Context,
    *,
    key: str,
    text: str,
    target: str | None = None,
    topic: str | None = None,
    allow: Sequence[str] = (),
    assets: Mapping[str, bytes] | None = None,
    at: str | None = None,
    review: bool = False,
) -> tuple[Job, bool]:
    """`accept` inside an open context (the demo, a test): the same checks, then create."""
    files = MappingProxyType(dict(assets or {}))
    req = check(
        ctx.config,
        ctx.repo.root,
        Request(key, text, target, topic, tuple(allow), files, at=at, review=review),
    )
    return create_checked(ctx, req)


def create_checked(ctx: Context, req: Request) -> tuple[Job, bool]:
    """`create` for a request the door has checked."""
    return create(
        ctx,
        key=req.key,
        source=req.text,
        target=req.target,
        topic=req.topic,
        allow=req.allow,
        assets=req.assets,
        scheduled_at=req.at,
        review=req.review,
    )


# ---------------------------------------------------------------------- the job folder


ASSETS = "assets"
"""Folder of a job's `--asset` files inside its job folder, kept as submitted."""


def job_assets(ctx: Context, job: Job) -> dict[str, bytes]:
    """The job's `--asset` files by their path beside the article (`a.png`, `images/a.png`)."""
    folder = ctx.job_dir(job.job_id) / ASSETS
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _remove_tree(path: Path) -> None:
    import shutil  # only on this failure path: `submit` should not pay for importing it

    shutil.rmtree(path, ignore_errors=True)


def read_source(ctx: Context, job: Job) -> str:
    # Bytes decoded as they are: read_text would turn every CRLF into LF.
    return (ctx.state_dir / job.source_path).read_bytes().decode("utf-8")


def resolution_path(ctx: Context, job_id: str) -> Path:
    """Where `resolve --continue` keeps the article text a person fixed."""
    return ctx.job_dir(job_id) / "resolution.txt"
