"""Whether a value a rule matched is a secret or a placeholder a tutorial shows.

A rule that recognises a token by its own prefix and length (`ghp_…`, `sk-or-v1-…`) is
trusted, except for a masked body (`sk_live_xxxxxxxx…`). A rule that only recognises a
value by the word in front of it (`password:`, `api_key =`, a URL's userinfo, `密码：`) sees
demo values as often as secrets: `123456`, `mypassword`, `dev:dev`, `{{user:pass}}`. For
those the value itself decides, as gitleaks' generic rule decides with entropy and stop
words:

- a placeholder is a reference or template (`${X}`, `{{…}}`, `<…>`, `%X%`), a masked run
  (`xxxx`, `****`), a value holding a stop word (also written in leetspeak: `s3cr3t`),
  words only (`YOUR_ACCESS_TOKEN`, `America/Chicago`, `BASE64`), digits only, mostly
  keyboard runs (`abc123efg456`), a user name given again (`dev:dev`), code
  (`getpass()`), an address (a URL, a path, a mail address), or a publishable key
  (`pk_test_…`, `pk_live_…`);
- a password (what a person chose) must in addition look chosen to resist guessing: eight
  characters or more of three classes (lower, upper, digit, symbol), twelve or more of two
  with an entropy of at least 3.3 bits per character, or sixteen or more of any with 3.5
  (an app password `vzihlaquknriqlht`, a passphrase).

docs/security.md states the rule and what it was measured on."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

# Words a demo value is made of. A stop word matches anywhere in the lower-cased value, also
# after undoing leetspeak; each has four letters or more, so a random 40-character token
# holds one by chance about once in 20,000.
STOPWORDS = (
    "password", "passwd", "passw0rd", "secret", "changeme", "change_me", "example", "sample",
    "dummy", "placeholder", "your", "mypass", "test", "demo", "fake", "editor", "admin",
    "root", "user", "guest", "postgres", "mysql", "redis", "elastic", "docker", "mongo",
    "qwerty", "letmein", "welcome", "default", "token", "apikey", "api_key", "api-key",
    "strapi", "hello", "foobar", "sekret", "insecure", "local", "random", "todo", "replace",
    "redacted", "xxxx", "1234", "abcd",
)  # fmt: skip
_LEET = str.maketrans("013457@$", "oleastas")

_TEMPLATE = re.compile(r"\{\{|\}\}|\$\{|^\$\w+$|^<.*>$|^%\w+%$|^\[[^]]*\]$")
_MASK = re.compile(r"([xX*•#._])\1{5,}|^(.)\2+$")
_WORDS = re.compile(r"[A-Za-z]+(?:[/_.\- ][A-Za-z]+)*")
_PUBLISHABLE = re.compile(r"^(?:pk_(?:test|live)_|NEXT_PUBLIC_)")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{4,}={0,2}")
_CONSTANT = re.compile(r"[A-Z]+[0-9]*(?:_[A-Z]+[0-9]*)*")  # BASE64, SPRING2024, MY_API_KEY
# where a value points rather than what it is: a URL, a path, a mail address
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|~?/|\.\.?/)|^[\w.+-]+@[\w-]+\.[\w.-]+$")
_CALL = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(")  # code: getpass(, cfg.get(
_USERINFO = re.compile(r"^[^:@/\s]*:([^@\s]*)(?:@.*)?$")


def entropy(text: str) -> float:
    """Shannon entropy in bits per character (gitleaks' measure)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def masked(value: str) -> bool:
    """A value (or a token's body) written as a mask or a template: `sk-xxxxxxxx…`,
    `{{ token }}`, `${TOKEN}`."""
    return bool(_MASK.search(value) or _TEMPLATE.search(value))


def _runs(value: str) -> float:
    """The share of a value made of runs of three or more consecutive characters
    (`abc`, `123`, `cba`): keyboard walks, not chosen secrets."""
    if len(value) < 3:
        return 0.0
    inside = [False] * len(value)
    for i in range(len(value) - 2):
        a, b, c = (ord(ch) for ch in value[i : i + 3])
        if b - a == c - b and abs(b - a) == 1:
            inside[i] = inside[i + 1] = inside[i + 2] = True
    return sum(inside) / len(value)


def _twice(value: str) -> bool:
    """`dev:dev`, `chat2db/chat2db`: a user name given again as its password."""
    for sep in ":/":
        left, mid, right = value.partition(sep)
        if mid and left == right:
            return True
    return False


def _basic(value: str) -> str | None:
    """The password inside a base64 `user:password` (HTTP Basic, a registry's `auth`)."""
    if not _BASE64.fullmatch(value) or len(value) % 4:
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return None
    if ":" not in decoded or not decoded.strip().isprintable():
        return None
    return decoded.strip().split(":", 1)[1]


def placeholder(value: str) -> bool:
    """A value no reader would take for a secret (see the module's docstring)."""
    v = value.strip().strip("'\"`“”‘’")
    if len(v) < 4 or masked(v) or _PUBLISHABLE.match(v):
        return True
    words = _WORDS.fullmatch(v) and (len(v) < 16 or not v.isalpha())
    if v.isdigit() or words or _CONSTANT.fullmatch(v) or _CALL.match(v) or _ADDRESS.match(v):
        return True
    if _runs(v) >= 0.5 or _twice(v):
        return True
    lowered = v.lower()
    leet = lowered.translate(_LEET)
    if any(w in lowered or w in leet for w in STOPWORDS):
        return True
    inner = _basic(v)
    return inner is not None and not password(inner)


def _classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def password(value: str) -> bool:
    """A password a person would have to guess: no placeholder, and chosen to resist it."""
    v = value.strip().strip("'\"`“”‘’")
    if len(v) < 8 or placeholder(v):
        return False
    classes, bits = _classes(v), entropy(v)
    return (
        classes >= 3
        or (classes == 2 and len(v) >= 12 and bits >= 3.3)
        or (len(v) >= 16 and bits >= 3.5)
    )


def userinfo_password(secret: str) -> str:
    """The password of `user:password` or `user:password@host`; the secret itself when it
    is not written that way."""
    m = _USERINFO.match(secret)
    return m.group(1) if m else secret


def pem_body(secret: str) -> bool:
    """Whether the text between a PEM header and its footer is a key's base64, not a
    sentence that names the header (`… starts with -----BEGIN PRIVATE KEY----- and …`)."""
    body = re.sub(r"-----[A-Z0-9 _-]*-----", " ", secret)
    body = re.sub(r"^[A-Za-z-]+: .*$", " ", body, flags=re.M)  # Proc-Type:, DEK-Info:
    body = body.replace("\\n", " ").replace("\\r", " ")
    chunks = body.split()
    packed = "".join(chunks).strip("\"',")
    if len(packed) < 64 or max((len(c) for c in chunks), default=0) < 40:
        return False
    share = sum(c.isalnum() or c in "+/=" for c in packed) / len(packed)
    return share >= 0.95 and entropy(packed) >= 4.5
