"""`git blogpub submit` and `git blogpub topic close|reopen`."""

from __future__ import annotations

import sys
from pathlib import Path

from gitpub import config, intake, scan
from gitpub.cli.commands.output import emit_json, say
from gitpub.config import Config
from gitpub.context import Context, open_context
from gitpub.core import crash
from gitpub.core.errors import InputError
from gitpub.git.repo import Repo
from gitpub.intake import topics
from gitpub.store.jobs import Job


def read_source(cfg: Config, source: str) -> str:
    """The submitted text from a file or `-` (stdin), validated before anything is written."""
    limit = cfg.publish.max_source_bytes
    if source == "-":
        data = sys.stdin.buffer.read(limit + 1)
        name = "<stdin>"
    else:
        name = source
        data = _read(Path(source), source, "source file", limit + 1)
    if len(data) > limit:
        raise InputError(
            f"{name}: source is over the limit of {limit} bytes (publish.max_source_bytes)"
        )
    return intake.decode_source(data, name, limit)


def submit(
    ctx: Context,
    *,
    key: str,
    text: str,
    target: str | None,
    topic: str | None,
    allow: tuple[str, ...] = (),
    assets: dict[str, bytes] | None = None,
) -> tuple[Job, bool]:
    job, created = intake.submit(
        ctx, key=key, text=text, target=target, topic=topic, allow=allow, assets=assets
    )
    if created:
        crash.point("after_received")
    return job, created


def _report(job: Job, created: bool, as_json: bool) -> None:
    if as_json:
        emit_json({"job_id": job.job_id, "state": job.state.value, "created": created})
    else:
        how = "created" if created else "existing job for this key"
        say(f"{job.job_id} {job.state.value} ({how})")


def main(
    path: Path,
    *,
    key: str,
    source: str,
    target: str | None,
    topic: str | None,
    as_json: bool,
    allow: tuple[str, ...] = (),
    assets: tuple[str, ...] = (),
) -> None:
    allow = intake.check_allow(allow)
    text, files = _checked_source(path, source, target, allow, assets)
    with open_context(path) as ctx:
        job, created = submit(
            ctx, key=key, text=text, target=target, topic=topic, allow=allow, assets=files
        )
        _report(job, created, as_json)


def read_assets(names: tuple[str, ...], *, allow: frozenset[str]) -> dict[str, bytes]:
    """Each `--asset` file by its file name, read before anything is recorded, and refused
    like the source when it is text holding a secret nobody allowed: it is published in the
    same commit, and kept in the job folder as submitted."""
    out: dict[str, bytes] = {}
    for name in names:
        path = Path(name)
        intake.check_asset_name(path.name)
        if path.name in out:
            raise InputError(f"--asset {name}: another asset is also named {path.name}")
        out[path.name] = _read(path, f"--asset {name}", "file")
        scan.refuse_file(out[path.name], f"--asset {name}", allow=allow)
    return out


def _read(path: Path, label: str, noun: str, size: int = -1) -> bytes:
    """Up to `size` bytes of a file the user named, or the one line that says why not."""
    try:
        with path.open("rb") as fh:
            return fh.read(size)
    except FileNotFoundError:
        raise InputError(f"{label}: no such {noun}") from None
    except IsADirectoryError:
        raise InputError(f"{label}: is a directory, not a {noun}") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {exc.strerror}") from None


def topic_close(
    path: Path, *, session: str, source: str, as_json: bool, allow: tuple[str, ...] = ()
) -> None:
    allow = intake.check_allow(allow)
    text, _ = _checked_source(path, source, None, allow)
    with open_context(path) as ctx:
        job, created = topics.topic_close(ctx, session, text, allow=allow)
        _report(job, created, as_json)


def _checked_source(
    path: Path,
    source: str,
    target: str | None,
    allow: tuple[str, ...] = (),
    assets: tuple[str, ...] = (),
) -> tuple[str, dict[str, bytes]]:
    """Reject bad input before the store is opened: a refused submit leaves no trace, not
    even an empty job database. A source or a text asset holding a secret nobody allowed is
    bad input: the built-in ruleset decides, whatever the blog's `scan` step is."""
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    text = read_source(cfg, source)
    if target is not None:
        intake.check_target(cfg, repo.root, target)
    name = "<stdin>" if source == "-" else source
    allowed = cfg.scan.allow | frozenset(allow)
    scan.refuse(text, name, allow=allowed)
    return text, read_assets(assets, allow=allowed)


def topic_reopen(path: Path, *, session: str) -> None:
    with open_context(path) as ctx:
        topics.topic_reopen(ctx.store, session)
        say(f"topic {session} reopened")
