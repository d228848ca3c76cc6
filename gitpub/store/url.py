"""The shared store's URL is a secret: its user part or its query string may hold a password,
and libpq and psycopg quote the URL, whole or in part, when they cannot read it or connect
(`invalid percent-encoded token: "<the password>"`). Every message that can carry it passes
`mask` before it is raised, printed, logged or answered: the password of the user part and
every credential of the query string are masked where the text spells them, and each
password is masked wherever it appears, as written, percent-decoded or half of each, and
in the pieces a parser may have cut it into. `where` names the store for a person (host and
database, nothing else of the URL)."""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote

MASK = "***"
_SHORTEST = 4
"""A password (or a piece of one) shorter than this is masked where the text spells it as
one, not everywhere it occurs: masking every `a` would leave a message no one can read."""

_CREDENTIAL = re.compile(r"(?i)(password|secret|token)")
"""Keys whose value is a credential: `password`, `sslpassword`, `oauth_client_secret`, …"""
_KEY_VALUE = re.compile(
    r"(?i)\b([\w-]*(?:password|secret|token)[\w-]*)(\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&'\"]*)"
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@\"']*:)[^\s\"']*@")
_PIECES = re.compile(r"[/@?#:&=\[\]]")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def mask(text: str, url: str | None) -> str:
    """`text` with every credential of `url` (and any URL's user password) masked."""
    pattern = _secrets_pattern(url) if url else None
    if pattern is not None:
        text = pattern.sub(MASK, text)
    text = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    return _KEY_VALUE.sub(lambda m: m.group(1) + m.group(2) + MASK, text)


@lru_cache(maxsize=8)
def _secrets_pattern(url: str) -> re.Pattern[str] | None:
    variants = sorted({v for s in _secrets(url) for v in _spellings(s)}, key=len, reverse=True)
    return re.compile("|".join(variants)) if variants else None


def _secrets(url: str) -> set[str]:
    """Each password the URL holds, read as libpq reads it and as generously as can be,
    with the pieces a parser may show alone."""
    found: set[str] = set()
    rest = url.partition("://")[2]
    at, slash = rest.find("@"), rest.find("/")
    # libpq: the user part ends at the first `@` before any `/`; generously: at the last `@`
    # before the query, or at all (a password holding `/`, `@` or `?` unencoded).
    first = at if at >= 0 and (slash < 0 or at < slash) else -1
    ends = {first, rest.partition("?")[0].rfind("@"), rest.rfind("@")}
    for end in ends:
        if end > 0:
            _, colon, password = rest[:end].partition(":")
            if colon and password:
                found.add(password)
    for pair in url.partition("?")[2].split("&"):
        key, equals, value = pair.partition("=")
        if equals and value and _CREDENTIAL.search(unquote(key)):
            found.add(value)
    for m in _KEY_VALUE.finditer(url):
        found.add(m.group(3).strip("'"))
    pieces = {p for s in found for p in _PIECES.split(s)}
    return {s for s in found | pieces if len(s) >= _SHORTEST}


def _spellings(secret: str) -> set[str]:
    """Regular expressions matching the secret as written, decoded, or partly decoded."""
    parts, last = [], 0
    for m in _ESCAPE.finditer(secret):
        parts.append(re.escape(secret[last : m.start()]))
        code = int(m.group(1), 16)
        spelled = f"%(?i:{m.group(1)})"
        decoded = chr(code) if code < 0x80 and chr(code).isprintable() else None
        parts.append(f"(?:{spelled}|{re.escape(decoded)})" if decoded else spelled)
        last = m.end()
    parts.append(re.escape(secret[last:]))
    return {"".join(parts), re.escape(unquote(secret))}


def where(url: str) -> str:
    """`database D on H[:P]` of a libpq URL (read leniently: it may not even parse)."""
    rest = url.partition("://")[2]
    head, _, query = rest.partition("?")
    head = head[head.rfind("@") + 1 :] if "@" in head else head
    hostport, _, path = head.partition("/")
    params = dict(p.partition("=")[::2] for p in query.split("&") if "=" in p)
    name, colon, port = hostport.rpartition(":")
    if not colon or name.count("[") != name.count("]"):
        name, port = hostport, ""  # no port, or one inside an IPv6 address's brackets
    host = unquote(params.get("host", "")) or name
    port = params.get("port") or port
    if host.startswith("/"):
        host = f"the socket in {host}"
    elif port:
        host = f"{host}:{port}"
    database = unquote(params.get("dbname", "") or path) or "(libpq's default)"
    return mask(f"database {database} on {host or 'the local socket'}", url)
