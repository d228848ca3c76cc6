"""Typed identifiers, so a SHA-1 object id can never stand where a SHA-256 is expected; and
the one function that makes a SHA-256 the short commands write down."""

from __future__ import annotations

from hashlib import sha256 as _sha256
from typing import NewType

JobId = NewType("JobId", str)
"""uuid4 text of one publication job."""

Oid = NewType("Oid", str)
"""A git object id (hex SHA-1), e.g. a commit or blob id."""

Sha256 = NewType("Sha256", str)
"""Hex SHA-256 of some bytes (file content, manifest, source text)."""


def sha256_hex(data: bytes) -> Sha256:
    """The hex SHA-256 of `data`."""
    return Sha256(_sha256(data).hexdigest())
