"""`git blogpub submit` and `git blogpub topic close|reopen`."""

from __future__ import annotations

import sys
from pathlib import Path

from gitpub import config, crash, jobs, scan, topics
from gitpub.commands.output import emit_json, say
from gitpub.config import Config
from gitpub.context import Context, open_context
from gitpub.errors import InputError
from gitpub.gitrepo import Repo
from gitpub.jobs import Job


def read_source(cfg: Config, source: str) -> str:
    """The submitted text from a file or `-` (stdin), validated before anything is written."""
    limit = cfg.publish.max_source_bytes
    if source == "-":
        data = sys.stdin.buffer.read(limit + 1)
        name = "<stdin>"
    else:
        path = Path(source)
        name = source
        try:
            with path.open("rb") as fh:
                data = fh.read(limit + 1)
        except FileNotFoundError:
            raise InputError(f"{source}: no such source file") from None
        except IsADirectoryError:
            raise InputError(f"{source}: is a directory, not a source file") from None
        except OSError as exc:
            raise InputError(f"{source}: cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise InputError(
            f"{name}: source is over the limit of {limit} bytes (publish.max_source_bytes)"
        )
    return jobs.decode_source(data, name, limit)


def submit(
    ctx: Context,
    *,
    key: str,
    text: str,
    target: str | None,
    topic: str | None,
    allow: tuple[str, ...] = (),
) -> tuple[Job, bool]:
    job, created = jobs.submit(ctx, key=key, text=text, target=target, topic=topic, allow=allow)
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
) -> None:
    allow = jobs.check_allow(allow)
    text = _checked_source(path, source, target, allow)
    with open_context(path) as ctx:
        job, created = submit(ctx, key=key, text=text, target=target, topic=topic, allow=allow)
        _report(job, created, as_json)


def topic_close(
    path: Path, *, session: str, source: str, as_json: bool, allow: tuple[str, ...] = ()
) -> None:
    allow = jobs.check_allow(allow)
    text = _checked_source(path, source, None, allow)
    with open_context(path) as ctx:
        job, created = topics.topic_close(ctx, session, text, allow=allow)
        _report(job, created, as_json)


def _checked_source(
    path: Path, source: str, target: str | None, allow: tuple[str, ...] = ()
) -> str:
    """Reject bad input before the store is opened: a refused submit leaves no trace, not
    even an empty job database. A source holding a secret nobody allowed is bad input: the
    built-in ruleset decides, whatever the blog's `scan` step is."""
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    text = read_source(cfg, source)
    if target is not None:
        jobs.check_target(cfg, repo.root, target)
    name = "<stdin>" if source == "-" else source
    scan.refuse(text, name, allow=cfg.scan.allow | frozenset(allow))
    return text


def topic_reopen(path: Path, *, session: str) -> None:
    with open_context(path) as ctx:
        topics.topic_reopen(ctx.store, session)
        say(f"topic {session} reopened")
