"""Redaction of every text gitpub persists, built on the one secret ruleset (`gitpub.scan`).

Event details, errors, logs, status output, step answers and stored sources all pass
through `sanitize`; a secret a person allowed by fingerprint is the only thing let through,
and only where the caller passes that allow list (the job's own source and article)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar, cast

from gitpub.core.jsonvalue import JSON
from gitpub.scan import REDACTION_MARK, redact

J = TypeVar("J", bound=JSON)

__all__ = ["REDACTION_MARK", "sanitize", "sanitize_name", "sanitize_obj"]


def sanitize(text: str, allow: Iterable[str] = ()) -> str:
    """Return text with every detected secret replaced by `[REDACTED:<kind>]`."""
    return redact(text, allow=allow)


def sanitize_name(name: str, allow: Iterable[str] = ()) -> str:
    """`sanitize` for a short name or key (an idempotency key, a target, a topic): a value
    bound to a credential word (`password=…`, `token:…`) is redacted whatever it looks
    like, where an article's demo values would be let through."""
    return redact(name, allow=allow, name=True)


def sanitize_obj(value: J, allow: Iterable[str] = ()) -> J:
    """`sanitize` applied to every string inside a JSON value (keys included); the value keeps
    its shape, so an object stays an object."""
    return cast(J, _sanitized(value, allow))


def _sanitized(value: object, allow: Iterable[str]) -> object:
    if isinstance(value, str):
        return sanitize(value, allow)
    if isinstance(value, dict):
        return {sanitize(str(k), allow): _sanitized(v, allow) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitized(v, allow) for v in value]
    return value
