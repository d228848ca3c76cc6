"""Secret scanning: one ruleset (gitleaks' published rules, loaded as data) behind every check.

`scan` finds, `redact` replaces, `fingerprint` names a finding without revealing it. The
submit refusal, the `scan` step, the `scan` command and the sanitizer every persisted text
passes through all call these, so what one of them calls a secret, all of them do.

This room imports neither pygit2 nor fontTools: `submit` and `scan` stay fast."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from gitpub.core.ids import sha256_hex
from gitpub.scan import detect, rules

REDACTION_MARK = "[REDACTED:"
FINGERPRINT_CHARS = 20


class Finding(NamedTuple):
    """What may be said about a secret: where, what kind, and its fingerprint — never the
    secret itself."""

    kind: str
    line: int
    fingerprint: str

    def public(self) -> dict[str, object]:
        return {"kind": self.kind, "line": self.line, "fingerprint": self.fingerprint}


def fingerprint(kind: str, secret: str) -> str:
    """A stable, non-reversible name for one secret of one kind: the first 20 hex digits of
    a domain-separated SHA-256 (the practice of detect-secrets' baselines, which keep a
    hash of each secret so a person can mark it as no secret without writing it down)."""
    digest = sha256_hex(f"gitpub-scan/1\0{kind}\0{secret}".encode())
    return digest[:FINGERPRINT_CHARS]


class _Clean:
    """Texts the ruleset found clean, so that each is scanned once per process.

    Most of what the sanitizer sees repeats: field names, states, hashes, the same reason on
    every job, and an article is checked by its draft's answer, the scan step and the last
    word. Only clean texts are kept, so the memo never holds a secret; it is bounded by
    count and characters, and starts over when full."""

    MAX_TEXTS = 8192
    MAX_CHARS = 4 << 20

    def __init__(self) -> None:
        self.texts: set[str] = set()
        self.chars = 0

    def __contains__(self, text: str) -> bool:
        return text in self.texts

    def add(self, text: str) -> None:
        if len(text) > self.MAX_CHARS // 8:
            return
        if len(self.texts) >= self.MAX_TEXTS or self.chars + len(text) > self.MAX_CHARS:
            self.texts.clear()
            self.chars = 0
        self.texts.add(text)
        self.chars += len(text)


_clean = _Clean()


def _hits(text: str, path: str | None) -> list[detect.Hit]:
    if path is None and text in _clean:
        return []
    hits = detect.detect(text, rules.builtin(), path)
    if not hits and path is None:
        _clean.add(text)
    return hits


# In a name (an idempotency key, a target, a topic, a step's name) a credential word bound to
# a value is taken at its word: `--key password=aaaaaaaa1` names nothing a tutorial shows, and
# a display form that over-redacts costs nothing (the key itself is kept only as a hash).
_NAMED_CREDENTIAL = re.compile(
    r"(?i)(?:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|credential|authorization|auth(?![a-z]))[\w.-]*"
    r"\s*[:=：]\s*(?:(?:basic|bearer|token)\s+)?['\"]?([^\s'\"&;,]+)"
)
_REFERENCE = re.compile(r"^\$\{?\w+\}?$|^<[^<>]*>$")


def _name_hits(text: str, hits: list[detect.Hit]) -> list[detect.Hit]:
    """The scanner's hits in a short name, and every credential assignment in it."""
    extra = []
    for m in _NAMED_CREDENTIAL.finditer(text):
        start, end = m.span(1)
        if _REFERENCE.match(m.group(1)) or m.group(1).startswith(REDACTION_MARK):
            continue
        if not any(h.start < end and start < h.end for h in hits):
            line = text.count("\n", 0, start) + 1
            extra.append(detect.Hit("credential", line, start, end, m.group(1)))
    return sorted(hits + extra, key=lambda h: h.start)


def scan(
    text: str, *, path: str | None = None, allow: Iterable[str] = (), name: bool = False
) -> list[Finding]:
    """Every secret in `text` not allowed by fingerprint, in text order.

    `name=True` reads `text` as a short name or key rather than an article: a value bound
    to a credential word is a finding whatever it looks like (see `_NAMED_CREDENTIAL`)."""
    allowed = frozenset(allow)
    hits = _hits(text, path)
    if name:
        hits = _name_hits(text, hits)
    found = [Finding(h.kind, h.line, fingerprint(h.kind, h.secret)) for h in hits]
    return [f for f in found if f.fingerprint not in allowed]


def leaks(answer: object, allow: frozenset[str], field: str = "") -> list[dict[str, object]]:
    """Secrets in a JSON value (a step's raw answer), each named by the field that holds
    it, as the ruleset names them (never the text)."""
    if isinstance(answer, str):
        return [{"field": field, **f.public()} for f in scan(answer, allow=allow)]
    if isinstance(answer, dict):
        items = [(f"{field}.{k}" if field else str(k), v) for k, v in answer.items()]
        keys = [(f"{field} key", str(k)) for k in answer]
        return [leak for name, value in items + keys for leak in leaks(value, allow, name)]
    if isinstance(answer, (list, tuple)):
        return [leak for i, v in enumerate(answer) for leak in leaks(v, allow, f"{field}[{i}]")]
    return []


def redact(text: str, *, allow: Iterable[str] = (), name: bool = False) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`, except allowed ones
    (`name=True`: as `scan` reads a name)."""
    hits = _hits(text, None)
    if name:
        hits = _name_hits(text, hits)
    if not hits:
        return text
    allowed = frozenset(allow)
    out: list[str] = []
    pos = 0
    for h in hits:
        if allowed and fingerprint(h.kind, h.secret) in allowed:
            continue
        out.append(text[pos : h.start])
        out.append(f"{REDACTION_MARK}{h.kind}]")
        pos = h.end
    out.append(text[pos:])
    return "".join(out)


def markers(text: str) -> list[Finding]:
    """Redaction markers already in a text: a secret redacted upstream (in the source, or in
    a step's answer) leaves one, and publishing it would hide that something leaked."""
    found: list[Finding] = []
    start = text.find(REDACTION_MARK)
    while start != -1:
        kind = text[start + len(REDACTION_MARK) :].split("]", 1)[0][:60]
        line = text.count("\n", 0, start) + 1
        found.append(Finding(f"redacted {kind}", line, fingerprint("marker", kind)))
        start = text.find(REDACTION_MARK, start + 1)
    return found


def refuse(text: str, source: str, *, allow: Iterable[str] = ()) -> None:
    """The door: raise `SecretsFound` when `text` holds a secret that is not allowed.

    Runs the built-in ruleset whatever the configured `scan` step is, so the guarantee
    does not depend on a blog's own steps. A redaction marker counts too: a source that was
    redacted upstream would otherwise be published with the marker in place of its text."""
    found = scan(text, allow=allow) + markers(text)
    if found:
        from gitpub.core.errors import SecretsFound

        found.sort(key=lambda f: f.line)
        raise SecretsFound(source, found)


_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
"""Byte-order marks of the wider encodings a text editor may save in (UTF-32 first: its
little-endian mark begins with UTF-16's)."""


def as_text(data: bytes) -> str | None:
    """A file's bytes as the text a secret could be read from, or None for a binary file.

    UTF-8 first (a .txt, .svg, .json, .yaml, .md asset); UTF-16 or UTF-32 behind their
    byte-order mark (what some editors save); then whatever git itself calls text (no NUL
    byte in its first 8,000 bytes) read as Latin-1, since a token is ASCII whatever the rest
    of the file is written in. Anything else is binary (an image, a font, an archive) and is
    not scanned."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for mark, codec in _MARKS:
        if data.startswith(mark):
            try:
                return data[len(mark) :].decode(codec)
            except UnicodeDecodeError:
                break
    if b"\0" in data[:8000]:
        return None
    return data.decode("latin-1")


def refuse_file(data: bytes, source: str, *, allow: Iterable[str] = ()) -> None:
    """`refuse` for a file given as bytes (an `--asset`): text files are held to the same
    door as the source, binary ones pass."""
    text = as_text(data)
    if text is not None:
        refuse(text, source, allow=allow)


def ruleset() -> dict[str, object]:
    """What `doctor` shows: which ruleset, which version, how many rules."""
    return rules.builtin().describe()
