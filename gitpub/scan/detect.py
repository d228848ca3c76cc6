"""Finding secrets in a text with a ruleset: keyword prefilter, regex, entropy, allowlists.

The semantics are gitleaks' (a rule runs only where one of its keywords occurs; a match
whose secret is too uniform, or that an allowlist names, is no finding), with one change:
only a rule that names a newline itself may match across lines, so `password:` at the end of
one line never pairs with a word three lines down."""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from gitpub.scan.rules import Rule, Ruleset


class Hit(NamedTuple):
    """One secret found: `start`/`end` delimit the secret itself, `line` is 1-based."""

    kind: str
    line: int
    start: int
    end: int
    secret: str


class _Lines:
    """The text's lines and where each keyword occurs, computed once per text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts: list[int] = []
        pos = 0
        for line in self.lines:
            self.starts.append(pos)
            pos += len(line) + 1
        lowered = text.lower()
        # Lower-casing keeps offsets for nearly every text; where it does not (a few
        # characters grow), keywords are looked up line by line instead.
        self.lowered = lowered if len(lowered) == len(text) else None
        self._by_keyword: dict[str, set[int]] = {}

    def with_keyword(self, keyword: str) -> set[int]:
        """Indexes of the lines holding `keyword` (lower case)."""
        found = self._by_keyword.get(keyword)
        if found is not None:
            return found
        found = set()
        if self.lowered is None:
            found = {i for i, line in enumerate(self.lines) if keyword in line.lower()}
        else:
            at = self.lowered.find(keyword)
            while at != -1:
                i = bisect.bisect_right(self.starts, at) - 1
                found.add(i)
                at = self.lowered.find(keyword, self.starts[i] + len(self.lines[i]) + 1)
        self._by_keyword[keyword] = found
        return found

    def number(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def line_at(self, offset: int) -> str:
        return self.lines[bisect.bisect_right(self.starts, offset) - 1]


def _secret_span(rule: Rule, m: re.Match[str]) -> tuple[int, int]:
    """Where the secret is in a match: the rule's `secretGroup`, else (gitleaks) the first
    non-empty group; a rule written with several groups (Nosey Parker's: user, password,
    host…) gets the span from its first to its last non-empty group, all of it redacted."""
    if not m.re.groups:
        return m.span()
    if rule.secret_group and rule.secret_group <= m.re.groups and m.group(rule.secret_group):
        return m.span(rule.secret_group)
    spans = [m.span(g) for g in range(1, m.re.groups + 1) if m.group(g)]
    if not spans:
        return m.span()
    if rule.secret_group or not rule.all_groups:
        return spans[0]
    return spans[0][0], max(end for _, end in spans)


_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
WINDOW = 4096  # longer lines are scanned in overlapping windows of this many characters
OVERLAP = 512


def widened(chunk: str, start: int, floor: int) -> int:
    r"""Where the match would start with gitleaks' leading `[\w.-]{0,50}?`, which the
    compiled pattern leaves out for speed: up to 50 such characters to the left."""
    i = start
    while i > floor and start - i < 50 and chunk[i - 1] in _WORD:
        i -= 1
    return i


def _windows(offset: int, line: str) -> list[tuple[int, str]]:
    """A line cut into overlapping windows: Python's regex engine backtracks, so a rule's
    cost on one 200 kB line (an inlined image) grows faster than its length; windows keep it
    linear. A secret longer than the overlap could be cut, and no rule's secret is."""
    if len(line) <= WINDOW:
        return [(offset, line)]
    step = WINDOW - OVERLAP
    return [(offset + i, line[i : i + WINDOW]) for i in range(0, len(line) - OVERLAP, step)]


_CROSSES_LINES = re.compile(r"\\[sSWDn]|\[\^|(?<!\\)\.")


def _on_one_line(rule: Rule) -> bool:
    """Whether no match of the rule's pattern can hold a newline: it names no class that
    holds one (white space, a negated class or set, an unescaped dot)."""
    return not _CROSSES_LINES.search(re.sub(r"\\\\", "", rule.lazy.pattern))


def _judged_secret(rule: Rule, m: re.Match[str], secret: str) -> bool:
    """Whether the value is a secret by its rule's entropy floor and its judge (see
    gitpub/scan/judge.py)."""
    # Imported for a match only: most texts have none (every line `submit` and `status`
    # print is sanitized), and the judge compiles a dozen patterns and loads base64.
    from gitpub.scan import judge

    if rule.entropy and judge.entropy(secret) <= rule.entropy:
        return False
    if rule.judge == "trusted":
        return not judge.masked(secret)
    if rule.judge == "pem":
        return judge.pem_body(secret)
    if rule.judge == "password":
        group = rule.password_group
        value = m.group(group) if 0 < group <= m.re.groups and m.group(group) else secret
        return judge.password(judge.userinfo_password(value))
    return not judge.placeholder(judge.userinfo_password(secret))


def _hits_for(rule: Rule, ruleset: Ruleset, lines: _Lines, path: str | None) -> list[Hit]:
    if not rule.path_allows(path):
        return []
    found: list[Hit] = []
    if rule.multiline:
        chunks = [(0, lines.text)]
    elif rule.keywords:
        wanted = set().union(*(lines.with_keyword(k) for k in rule.keywords))
        chunks = [w for i in sorted(wanted) for w in _windows(lines.starts[i], lines.lines[i])]
    elif _on_one_line(rule) and max(map(len, lines.lines)) <= WINDOW:
        # A rule run on every line that cannot match across one is run once over the whole
        # text: the same matches, without a regex call per line.
        chunks = [(0, lines.text)]
    else:
        chunks = [
            w for pair in zip(lines.starts, lines.lines, strict=True) for w in _windows(*pair)
        ]
    for offset, chunk in chunks:
        previous_end = 0
        for m in rule.regex.finditer(chunk):
            start, end = _secret_span(rule, m)
            secret = chunk[start:end].strip("\n")
            match = chunk[widened(chunk, m.start(), previous_end) : m.end()]
            previous_end = m.end()
            if not secret:
                continue
            if not _judged_secret(rule, m, secret):
                continue
            line = lines.line_at(offset + start)
            if any(a.allows(secret, match, line) for a in ruleset.allowlists):
                continue
            if any(a.allows(secret, match, line) for a in rule.allowlists):
                continue
            found.append(
                Hit(rule.id, lines.number(offset + start), offset + start, offset + end, secret)
            )
    return found


def detect(text: str, ruleset: Ruleset, path: str | None = None) -> list[Hit]:
    """Every secret in `text`, in text order, each span reported once (the most specific
    rule that saw it names it)."""
    lowered = text.lower()
    present = ruleset.present(lowered)
    wanted = set(ruleset.always).union(*(ruleset.by_keyword[k] for k in present))
    if not wanted:
        return []
    candidates = [ruleset.rule(i) for i in sorted(wanted)]
    lines = _Lines(text)
    hits: list[Hit] = []
    for rule in candidates:  # specific rules come first in the ruleset
        for hit in _hits_for(rule, ruleset, lines, path):
            if not any(h.start < hit.end and hit.start < h.end for h in hits):
                hits.append(hit)
    hits.sort(key=lambda h: h.start)
    return hits
