"""Typed identifiers, so a SHA-1 object id can never stand where a SHA-256 is expected."""

from __future__ import annotations

from typing import NewType

JobId = NewType("JobId", str)
"""uuid4 text of one publication job."""

Oid = NewType("Oid", str)
"""A git object id (hex SHA-1), e.g. a commit or blob id."""

Sha256 = NewType("Sha256", str)
"""Hex SHA-256 of some bytes (file content, manifest, source text)."""
