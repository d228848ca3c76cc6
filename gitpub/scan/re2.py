"""Go's RE2 syntax, as gitleaks writes its rules, in Python's `re` spelling."""

from __future__ import annotations

import re

_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
    "space": r" \t\r\n\f\v",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
}


def translate(pattern: str) -> str:
    """An RE2 pattern in Python's syntax.

    RE2 lets `(?i)` appear mid-pattern, meaning "from here to the end of the enclosing
    group"; Python only accepts global flags at the start, so the tail becomes a scoped
    `(?i:…)` group. `\\z` is Python's `\\Z`, and POSIX classes are spelled out."""
    pattern = pattern.replace(r"\z", r"\Z")
    pattern = re.sub(r"\[:(\w+):\]", lambda m: _POSIX[m.group(1)], pattern)
    out: list[str] = []
    closers: list[int] = []  # per open group: how many scoped flag groups to close with it
    closers.append(0)
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            if i < len(pattern) and pattern[i] == "]":  # a leading ] is a literal
                out.append("]")
                i += 1
            continue
        flags = re.match(r"\(\?(-?[imsU]+)\)", pattern[i:])
        if flags and (i > 0 or flags.group(1).startswith("-")):
            out.append(f"(?{flags.group(1)}:")
            closers[-1] += 1
            i += flags.end()
            continue
        if c == "(":
            closers.append(0)
        elif c == ")":
            out.append(")" * closers.pop())
        elif c == "|" and closers[-1]:
            # An alternative ends the scope of a mid-pattern flag too.
            out.append(")" * closers[-1])
            closers[-1] = 0
        out.append(c)
        i += 1
    out.append(")" * closers[-1])
    return "".join(out)


_LAZY_PREFIX = re.compile(r"^((?:\(\?i:?\)?)*)\[\\w\.-\]\{0,50\}\?")


def without_lazy_prefix(pattern: str) -> str:
    r"""Drop a leading `[\w.-]{0,50}?` (gitleaks writes one, sometimes two, before a keyword).

    It only widens the match to the left, never decides whether there is one or what the
    secret is; but Python's backtracking engine pays for it on every character, which makes
    a long line cost seconds. Where an allowlist looks at the whole match, the detector
    widens the match the same way by hand (`detect.widened`)."""
    while True:
        shorter = _LAZY_PREFIX.sub(lambda m: m.group(1), pattern)
        if shorter == pattern:
            return pattern
        pattern = shorter
