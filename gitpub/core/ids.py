"""Typed identifiers, so a SHA-1 object id can never stand where a SHA-256 is expected; and
the one function that makes a SHA-256 the short commands write down."""

from __future__ import annotations

from typing import NewType

try:
    # CPython's own SHA-256 (3.9-3.11: _sha256, 3.12+: _sha2): the digest hashlib gives,
    # without loading OpenSSL's libcrypto, which costs `submit` ~4 ms of a start that hashes
    # a key, a source and the rule files. A build without them (some FIPS setups) uses hashlib.
    from _sha256 import sha256 as _sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the interpreter build
    try:
        from _sha2 import sha256 as _sha256  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha256 as _sha256

JobId = NewType("JobId", str)
"""uuid4 text of one publication job."""

Oid = NewType("Oid", str)
"""A git object id (hex SHA-1), e.g. a commit or blob id."""

Sha256 = NewType("Sha256", str)
"""Hex SHA-256 of some bytes (file content, manifest, source text)."""


LARGE = 1 << 20
"""Bytes from which OpenSSL's SHA-256 is worth importing: it hashes ~8x faster than CPython's
own, which spends ~4 ms more per MiB, as much as the import costs."""


def sha256_hex(data: bytes) -> Sha256:
    """The hex SHA-256 of `data`, as `hashlib.sha256(data).hexdigest()` gives it."""
    if len(data) >= LARGE:
        import hashlib

        return Sha256(hashlib.sha256(data).hexdigest())
    return Sha256(_sha256(data).hexdigest())
