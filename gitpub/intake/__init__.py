"""What a submit hands over — key, source, target, assets, allow list: checked, stored as a
new job (idempotent by key) with its folder, and read back by the steps that need them."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from gitpub.config import Config
from gitpub.context import Context
from gitpub.core.errors import InputError, KeyReused
from gitpub.core.files import write_atomic
from gitpub.core.ids import JobId, Sha256, sha256_hex
from gitpub.core.states import State
from gitpub.scan import FINGERPRINT_CHARS
from gitpub.scan.sanitize import sanitize
from gitpub.store import folders as jobrecord
from gitpub.store import jobs, reads
from gitpub.store.db import Store, now
from gitpub.store.jobs import Job, append_event, get


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


# ----------------------------------------------------------------------- keys and jobs


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
        raise KeyReused(sanitize(key), job.job_id, "source")
    if (target or None) != job.requested_target:
        raise KeyReused(sanitize(key), job.job_id, "target")
    return job


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
    return ctx.config.scan.allow | frozenset(reads.allowed_by_events(ctx.store, job_id))


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
            jobs.insert(
                conn,
                {
                    "job_id": job_id,
                    "idempotency_key": key_hash(key),
                    "key_display": key,
                    "kind": kind,
                    "state": State.RECEIVED.value,
                    "source_sha256": source_sha256,
                    "source_path": str(source_path.relative_to(ctx.state_dir)),
                    "topic": topic,
                    "requested_target": target,
                    "max_attempts": ctx.config.retry.max_attempts,
                    "created_at": stamp,
                    "updated_at": stamp,
                },
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


# ---------------------------------------------------------------------- the job folder


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


def resolution_path(ctx: Context, job_id: str) -> Path:
    """Where `resolve --continue` keeps the article text a person fixed."""
    return ctx.job_dir(job_id) / "resolution.txt"
