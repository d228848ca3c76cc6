"""`git blogpub submit` and `git blogpub topic close|reopen`."""

from __future__ import annotations

import sys
from pathlib import Path

from gitpub import config, intake
from gitpub.cli.commands.output import emit_json, say
from gitpub.config import Config
from gitpub.context import no_store_yet, open_context
from gitpub.core.errors import InputError
from gitpub.core.states import State
from gitpub.git.repo import Repo
from gitpub.intake import checks, topics
from gitpub.store.jobs import Job


def read_source(cfg: Config, source: str) -> str:
    """The submitted text from a file or `-` (stdin), validated before anything is written."""
    limit = cfg.publish.max_source_bytes
    if source == "-":
        data = sys.stdin.buffer.read(limit + 1)
        name = "<stdin>"
    else:
        name = checks.text_argument(source, "--source")
        data = _read(Path(source), source, "source file", limit + 1)
    if len(data) > limit:
        raise InputError(
            f"{name}: source is over the limit of {limit} bytes (publish.max_source_bytes)"
        )
    return checks.decode_source(data, name, limit)


def _report(job: Job, created: bool, as_json: bool) -> None:
    if as_json:
        emit_json({"job_id": job.job_id, "state": job.state.value, "created": created})
    else:
        how = "created" if created else "existing job for this key"
        when = f", due {job.scheduled_at}" if job.state is State.SCHEDULED else ""
        say(f"{job.job_id} {job.state.value} ({how}{when})")


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
    at: str | None = None,
    review: bool = False,
) -> None:
    if at is not None:
        intake.scheduled_at(at)  # a usage error, said before any file is read
    cfg = config.load(Repo.discover(path).root)
    text = read_source(cfg, source)
    files, labels = read_assets(assets, cfg.publish.max_asset_bytes)
    source = "<stdin>" if source == "-" else source
    request = intake.Request(key, text, target, topic, allow, files, source, labels, at, review)
    job, created = intake.accept(path, request, cfg)
    _report(job, created, as_json)


def read_assets(args: tuple[str, ...], limit: int) -> tuple[dict[str, bytes], dict[str, str]]:
    """Each `--asset FILE[=REL]` read before anything is recorded: FILE's bytes, to go at REL
    beside the article (by default FILE's own name), and FILE as errors name it; the door
    checks REL and scans the text. At most `limit` bytes each, counted while reading: a file
    that never ends (`/dev/zero`, a pipe someone keeps writing) is refused, not read until
    memory runs out."""
    out: dict[str, bytes] = {}
    labels: dict[str, str] = {}
    for arg in args:
        checks.text_argument(arg, "--asset")
        file, sep, rel = arg.rpartition("=")
        if not sep or not file:
            file, rel = arg, Path(arg).name
        if rel in out:
            raise InputError(f"--asset {arg}: another asset also goes to {rel}")
        data = _read(Path(file), f"--asset {file}", "file", limit + 1)
        if len(data) > limit:
            raise InputError(checks.asset_too_big(f"--asset {file}", limit))
        out[rel] = data
        labels[rel] = f"--asset {file}"
    return out, labels


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
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    text = read_source(cfg, source)
    name = "<stdin>" if source == "-" else source
    request = intake.check(
        cfg, repo.root, intake.Request("topic", text, None, session, allow, source=name)
    )
    with open_context(path) as ctx:
        job, created = topics.topic_close(ctx, session, text, allow=request.allow)
        _report(job, created, as_json)


def topic_reopen(path: Path, *, session: str) -> None:
    if no_store_yet(path):  # never closed on this node: refused without leaving a store
        raise InputError(topics.never_closed(session))
    with open_context(path) as ctx:
        topics.topic_reopen(ctx.store, session)
        say(f"topic {session} reopened")
