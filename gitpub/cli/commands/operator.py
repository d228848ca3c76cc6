"""`git blogpub retry` and `git blogpub resolve`."""

from __future__ import annotations

from pathlib import Path

from gitpub.cli.commands.output import say
from gitpub.context import no_store_yet, open_context
from gitpub.core.errors import InputError
from gitpub.ops import actions


def _known(path: Path, job_id: str) -> None:
    """Refuse a job of a node that never stored one before opening the store: a refusal must
    not leave an empty job database behind."""
    if no_store_yet(path):
        raise InputError(f"job {job_id}: no such job")


def retry(path: Path, *, job_id: str) -> None:
    _known(path, job_id)
    with open_context(path) as ctx:
        job = actions.retry(ctx, job_id)
        say(f"{job.job_id} {job.state.value}: will be prepared again (draft reused)")


def resolve(path: Path, *, job_id: str, abandon: bool, allow: tuple[str, ...] = ()) -> None:
    _known(path, job_id)
    with open_context(path) as ctx:
        if abandon:
            job = actions.abandon(ctx, job_id)
            say(f"{job.job_id} {job.state.value}: abandoned")
        else:
            job = actions.resume(ctx, job_id, allow=allow)
            say(f"{job.job_id} {job.state.value}: the fixed article will be delivered")
