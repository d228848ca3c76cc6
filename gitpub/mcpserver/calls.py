"""What each tool does, as plain functions of the repository and the call's arguments.

No MCP here: each function takes arguments already checked against the tool's input schema
and returns the JSON object the tool answers with, or raises GitpubError with the line the
CLI would print. The work goes through the doors the CLI and the Python API use: `submit`
is `intake.accept`, as `Publisher.submit` is (scan, idempotency by key); `status`/`show`
read with the functions behind `status --json`/`show --json`; `dry_run` is the dry run's
own preview."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict, TypeVar

from gitpub import config, intake
from gitpub.context import no_store_yet, open_context
from gitpub.core.errors import InputError
from gitpub.core.states import State
from gitpub.git.repo import Repo
from gitpub.intake import checks
from gitpub.mcpserver.tools import FINAL
from gitpub.scan.sanitize import sanitize_name, sanitize_obj
from gitpub.store import jobs
from gitpub.store import listing as joblist
from gitpub.store.jobs import Event, PublicJob

# The arguments of each tool, as its input schema (tools.INPUT) lets them through.


class Asset(TypedDict, total=False):
    path: str
    text: str
    content_base64: str


class _Text(TypedDict):
    text: str


class DryRunArgs(_Text, total=False):
    target: str | None
    allow: list[str]
    assets: list[Asset]


class SubmitArgs(DryRunArgs):
    key: str


class StatusArgs(TypedDict, total=False):
    state: str
    limit: int


class ShowArgs(TypedDict, total=False):
    key: str
    job_id: str


# What each tool answers (its output schema, tools.OUTPUT).


class Submitted(TypedDict):
    job_id: str
    created: bool
    state: str


class Listed(TypedDict):
    jobs: list[PublicJob]
    finished: dict[str, int]
    unlisted: int


class Shown(TypedDict):
    job: PublicJob
    events: list[Event]


class FileShown(TypedDict):
    path: str
    sha256: str
    size: int


class AssetShown(TypedDict):
    name: str
    path: str
    there: str


class Previewed(TypedDict):
    outcome: str
    meaning: str
    reason: str | None
    base_commit: str | None
    target: str | None
    decision: str | None
    manifest_sha256: str | None
    files: list[FileShown]
    assets: list[AssetShown]
    diff: list[str]


class Waited(TypedDict):
    job: PublicJob
    final: bool
    waited_s: float


Answer = TypeVar("Answer", bound=Mapping[str, object])

MEANING = {
    "READY_TO_COMMIT": "a submit would commit and publish this",
    "REVIEW": "a submit would stop in REVIEW",
    "SKIPPED": "a submit would be SKIPPED",
}


def plain(obj: Answer) -> Answer:
    """What reaches the agent, as `--json` output does: JSON values only, every string
    (keys included) through the sanitizer. Every field of an answer is a JSON value already,
    so the answer keeps its shape."""
    out: Answer = sanitize_obj(json.loads(json.dumps(obj, default=str)))
    return out


def assets(given: list[Asset] | None, limit: int, tail: str = "") -> dict[str, bytes]:
    """The assets of a call by name: `content_base64` decoded, `text` as UTF-8 bytes; each
    at most `limit` bytes (`publish.max_asset_bytes`), measured before it is decoded."""
    out: dict[str, bytes] = {}
    for item in given or ():
        name = item["path"]
        label = f"asset {name!r}{tail}"
        if name in out:
            raise InputError(f"asset {name!r}: given twice")
        if "text" in item:
            try:
                out[name] = item["text"].encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate, which JSON can carry
                raise InputError(f"asset {name!r}: text is not valid Unicode") from None
        else:
            encoded = item["content_base64"]
            if len(encoded) // 4 * 3 - encoded[-2:].count("=") > limit:
                raise InputError(checks.asset_too_big(label, limit))
            try:
                out[name] = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise InputError(f"asset {name!r}: content_base64 is not base64") from None
        if len(out[name]) > limit:
            raise InputError(checks.asset_too_big(label, limit))
    return out


def request(args: DryRunArgs, key: str | None, cfg: config.Config) -> intake.Request:
    """The call as the door takes it. Refusals name the text and assets as the Python API
    names them (by the key), or plainly for a dry run, which has no key."""
    tail = f" for key {sanitize_name(key)!r}" if key is not None else ""
    files = assets(args.get("assets"), cfg.publish.max_asset_bytes, tail)
    return intake.Request(
        key if key is not None else "dry-run",
        args["text"],
        args.get("target"),
        None,
        tuple(args.get("allow", ())),
        files,
        f"source{tail}",
        {rel: f"asset {rel!r}{tail}" for rel in files},
    )


def submit(root: Path, args: SubmitArgs) -> Submitted:
    """`git blogpub submit --json`, through the door the Python API uses."""
    cfg = config.load(Repo.discover(root).root)
    job, created = intake.accept(root, request(args, args["key"], cfg), cfg)
    return plain(Submitted(job_id=job.job_id, created=created, state=job.state.value))


def status(root: Path, args: StatusArgs) -> Listed:
    """`git blogpub status --json [--state S] [--limit N]`."""
    if no_store_yet(root):
        return {"jobs": [], "finished": {}, "unlisted": 0}
    state = State(args["state"]) if "state" in args else None
    with open_context(root, need_remote=False) as ctx:
        listing = joblist.select(ctx.store, state=state, limit=args.get("limit"))
        listed: Listed = {
            "jobs": [j.public() for j in listing.jobs],
            "finished": listing.finished,
            "unlisted": listing.unlisted,
        }
        return plain(listed)


def show(root: Path, args: ShowArgs) -> Shown:
    """`git blogpub show JOB --json`, or `show --key KEY --json`."""
    key, job_id = args.get("key"), args.get("job_id")
    if (key is None) == (job_id is None):
        raise InputError("give either job_id or key")
    if no_store_yet(root):
        shown = f"--key {sanitize_name(key)}" if key is not None else f"job {job_id}"
        raise InputError(f"{shown}: no such job")
    with open_context(root, need_remote=False) as ctx:
        if key is not None:
            found = intake.by_key(ctx.store, key)
            if found is None:
                raise InputError(f"--key {sanitize_name(key)}: no job was submitted with this key")
        else:
            found = jobs.require(ctx.store, str(job_id))
        return plain(Shown(job=found.public(), events=jobs.events(ctx.store, found.job_id)))


def job(root: Path, job_id: str) -> tuple[PublicJob, bool]:
    """One job as `show` reports it, and whether it is in a final state."""
    if no_store_yet(root):
        raise InputError(f"job {job_id}: no such job")
    with open_context(root, need_remote=False) as ctx:
        found = jobs.require(ctx.store, job_id)
        return plain(found.public()), found.state.value in FINAL


def dry_run(root: Path, args: DryRunArgs) -> Previewed:
    """`git blogpub dry-run`: validated and refused as a submit would be, then prepared in
    throwaway state; the blog's store, job folders, refs and checkout stay as they are."""
    from gitpub.ops import dryrun  # the prepare pipeline: only this tool needs it

    repo = Repo.discover(root)
    cfg = config.load(repo.root)
    req = intake.check(cfg, repo.root, request(args, None, cfg))
    with dryrun.scratch_context(repo, cfg) as ctx:
        p = dryrun.preview(ctx, req.text, req.target, dict(req.assets))
    previewed: Previewed = {
        "outcome": p.outcome.value,
        "meaning": MEANING.get(p.outcome.value, p.outcome.value),
        "reason": p.reason,
        "base_commit": p.base_commit,
        "target": p.target,
        "decision": p.decision,
        "manifest_sha256": p.manifest_sha256,
        "files": [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in p.entries],
        "assets": [{"name": a.name, "path": a.path, "there": a.there} for a in p.assets],
        "diff": p.diff,
    }
    return plain(previewed)
