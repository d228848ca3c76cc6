"""The ruleset: gitpub's rules for tokens that name themselves, gitleaks' published rules,
Nosey Parker's secret rules and gitpub's credential forms, loaded as data (gitpub/scan/data,
one schema: gitleaks'), with how each rule's value is judged (`judge`).

gitleaks writes Go's RE2, which `re2.translate` turns into Python's syntax. A rule is built,
and its regex compiled, the first time its keywords appear in a text: a process that only
sanitizes short status lines, or submits an article without a secret, builds almost nothing
of the ~400 rules."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from gitpub.core import userdirs
from gitpub.core.ids import sha256_hex
from gitpub.scan.re2 import translate, without_lazy_prefix

# The files under gitpub/scan/data, in the order their rules are tried. NOTICE.md there says
# where each comes from, at which version, under which licence.
RULE_FILES = ("tokens.toml", "gitleaks.toml", "noseyparker.toml", "gitpub.toml")
GITLEAKS_VERSION = "v8.30.0-27-gb58d3f10"
NOSEYPARKER_VERSION = "v0.24.0-31-g2e6e7f36"


class RuleError(ValueError):
    pass


class LazyRegex:
    """A pattern compiled on first use; RE2 patterns are translated first."""

    def __init__(self, pattern: str, where: str, re2: bool = True, trim: bool = False) -> None:
        self.pattern = pattern
        self.where = where
        self.re2 = re2
        self.trim = trim
        self._compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self._compiled is None:
            pattern = translate(self.pattern) if self.re2 else self.pattern
            if self.trim:
                pattern = without_lazy_prefix(pattern)
            try:
                self._compiled = re.compile(pattern, re.ASCII)
            except re.error as exc:
                raise RuleError(f"{self.where}: regex does not translate: {exc}") from None
        return self._compiled

    def search(self, text: str) -> bool:
        return self.get().search(text) is not None


# Allowlist and Rule are NamedTuples, not dataclasses: a frozen dataclass costs every process
# ~1 ms to create on Python 3.11 (its methods are compiled from source), a NamedTuple a sixth.


class Allowlist(NamedTuple):
    regexes: tuple[LazyRegex, ...] = ()
    stopwords: tuple[str, ...] = ()
    target: str = "secret"  # "secret" | "match" | "line"
    condition_and: bool = False

    def allows(self, secret: str, match: str, line: str) -> bool:
        value = {"match": match, "line": line}.get(self.target, secret)
        by_regex = any(r.search(value) for r in self.regexes)
        lowered = secret.lower()
        by_word = any(w in lowered for w in self.stopwords)
        if self.condition_and:
            checks = ([by_regex] if self.regexes else []) + ([by_word] if self.stopwords else [])
            return bool(checks) and all(checks)
        return by_regex or by_word


class Rule(NamedTuple):
    id: str
    source: str  # which rule file it came from
    lazy: LazyRegex
    keywords: tuple[str, ...]
    entropy: float = 0.0
    secret_group: int = 0
    path: str | None = None
    allowlists: tuple[Allowlist, ...] = ()
    # Only a rule that names a newline itself (a key block, a continued curl command) may
    # match across lines; every other rule is run line by line.
    multiline: bool = False
    generic: bool = False
    all_groups: bool = False  # the secret spans every capture group, not the first one
    # How the matched value is judged (gitpub/scan/judge.py): "trusted" (only a masked
    # value is no secret), "placeholder", "password" or "pem".
    judge: str = "trusted"
    password_group: int = 0  # for "password": the group holding it (0: the secret)

    @property
    def regex(self) -> re.Pattern[str]:
        return self.lazy.get()

    def path_allows(self, path: str | None) -> bool:
        return self.path is None or (path is not None and bool(re.search(self.path, path)))


class Ruleset:
    """The rules, specific ones first, built one by one as a text needs them."""

    def __init__(
        self,
        raw: Sequence[tuple[dict[str, Any], str]],
        allowlists: tuple[Allowlist, ...],
        judges: dict[str, tuple[str, int]] | None = None,
    ) -> None:
        self.raw = tuple(raw)  # (rule table as written, rule file), in the order rules run
        self.allowlists = allowlists
        self.judges = judges or {}  # rule id -> (judge, password group), gitpub.toml [judge]
        self.name = "gitleaks + noseyparker"
        self.version = f"gitleaks {GITLEAKS_VERSION}, noseyparker {NOSEYPARKER_VERSION}"
        self._built: list[Rule | None] = [None] * len(self.raw)
        # The keyword prefilter: each keyword once, and which rules (by index) it wakes.
        by_keyword: dict[str, list[int]] = {}
        for i, (r, _) in enumerate(self.raw):
            for k in r.get("keywords", ()):
                by_keyword.setdefault(k.lower(), []).append(i)
        self.keywords = tuple(sorted(by_keyword))
        self.by_keyword = {k: tuple(v) for k, v in by_keyword.items()}
        self.keyword_set = frozenset(self.keywords)
        # Keywords by their first two characters: a short text looks up the pairs it holds
        # instead of searching itself for every keyword (a shorter keyword, which no rule
        # file has today, would be searched for on its own).
        by_pair: dict[str, list[str]] = {}
        for k in self.keywords:
            by_pair.setdefault(k[:2], []).append(k)
        self._by_pair = {p: tuple(ks) for p, ks in by_pair.items() if len(p) == 2}
        self._single = tuple(k for k in self.keywords if len(k) < 2)
        self.always = tuple(i for i, (r, _) in enumerate(self.raw) if not r.get("keywords"))
        self._finder: re.Pattern[str] | None = None

    def rule(self, index: int) -> Rule:
        built = self._built[index]
        if built is None:
            built = self._built[index] = _rule(*self.raw[index], self.judges)
        return built

    @property
    def rules(self) -> tuple[Rule, ...]:
        """Every rule, built (doctor and the tests look at all of them)."""
        return tuple(self.rule(i) for i in range(len(self.raw)))

    def present(self, lowered: str) -> set[str]:
        """The keywords occurring in a lower-cased text.

        One scan with a trie-shaped pattern instead of a substring search per keyword (there
        are hundreds). At each position the pattern reports the longest keyword starting
        there; the shorter keywords that are its prefixes are added from a table. Short
        texts (status lines, event details) skip the pattern, whose compilation costs more
        than they do: only the keywords starting with a pair of characters they hold are
        searched for."""
        if self._finder is None:
            if len(lowered) < 2000:
                pairs = {lowered[i : i + 2] for i in range(len(lowered) - 1)}
                found = {k for p in pairs for k in self._by_pair.get(p, ()) if k in lowered}
                return found.union(k for k in self._single if k in lowered)
            self._finder = re.compile(f"(?=({_trie_pattern(list(self.keywords))}))", re.S)
        found = set(self._finder.findall(lowered))
        for k in list(found):
            found.update(k[:i] for i in range(1, len(k)) if k[:i] in self.keyword_set)
        return found

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "rules": len(self.raw)}


def _allowlist(raw: dict[str, Any], where: str) -> Allowlist:
    return Allowlist(
        regexes=tuple(LazyRegex(r, where) for r in raw.get("regexes", ())),
        stopwords=tuple(w.lower() for w in raw.get("stopwords", ())),
        target=raw.get("regexTarget", "secret"),
        condition_and=raw.get("condition", "OR").upper() == "AND",
    )


# gitleaks ends a token at a backtick, quote, white space or semicolon (or an escaped newline
# in a string); a token glued to Chinese text (`令牌是sk_live_…，请保管`) or closing an English
# sentence (`…the key was AKIA….`) then goes unseen. A rule that names a token by its own
# shape ends it at any character its body cannot hold; a generic rule, whose value may hold
# dots and slashes, also at any non-ASCII character (full-width punctuation, CJK text).
_GITLEAKS_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
_TOKEN_END = r"(?:[^A-Za-z0-9_-]|$)"
_GENERIC_END = r"""(?:[\x60'"\s;]|[^\x00-\x7f]|\\[nr]|$)"""
# …and it accepts `=`, `:`, `=>` between a keyword and its value, not their full-width forms.
_GITLEAKS_BINDER = r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)"
_WIDE_BINDER = r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,|：|＝)"


def widened_ends(pattern: str, generic: bool) -> str:
    """A gitleaks pattern whose token may end at full-width punctuation and CJK text."""
    pattern = pattern.replace(_GITLEAKS_BINDER, _WIDE_BINDER)
    return pattern.replace(_GITLEAKS_END, _GENERIC_END if generic else _TOKEN_END)


def _rule(raw: dict[str, Any], source: str, judges: dict[str, tuple[str, int]]) -> Rule:
    pattern = raw["regex"]
    generic = "generic" in raw["id"]
    if source == "gitleaks.toml":
        pattern = widened_ends(pattern, generic)
    judge, group = judges.get(raw["id"], ("placeholder" if generic else "trusted", 0))
    where = f"{source}: rule {raw['id']}"
    lists = raw.get("allowlists", [])
    if "allowlist" in raw:
        lists = [*lists, raw["allowlist"]]
    return Rule(
        id=raw["id"],
        source=source,
        lazy=LazyRegex(
            pattern,
            where,
            re2=raw.get("regexSyntax", "re2") == "re2",
            trim=True,
        ),
        keywords=tuple(k.lower() for k in raw.get("keywords", ())),
        entropy=float(raw.get("entropy", 0.0)),
        secret_group=int(raw.get("secretGroup", 0)),
        path=raw.get("path"),
        allowlists=tuple(_allowlist(a, where) for a in lists),
        multiline=bool(raw.get("multiline")) or any(s in pattern for s in (r"\n", r"[\s\S", "(?s")),
        generic=generic,
        all_groups=raw.get("regexSyntax") == "python",
        judge=judge,
        password_group=group,
    )


def _load_file(name: str) -> dict[str, Any]:
    """One rule file, parsed. Python's TOML parser needs ~0.1 s for gitleaks' 200 kB, which
    every command would pay (every printed line is sanitized); so the parsed form is kept in
    the user cache as JSON, named after the file's hash, and parsed again only when the
    shipped file changes."""
    # Beside this module, not through importlib.resources, whose import (zipfile, tempfile,
    # shutil) would cost each command more than reading the file.
    data = (Path(__file__).parent / "data" / name).read_bytes()
    digest = sha256_hex(data)[:16]
    cached = _cache_dir() / f"{Path(name).stem}-{digest}.json"
    try:
        loaded: dict[str, Any] = json.loads(cached.read_bytes())
        return loaded
    except (OSError, ValueError):
        pass
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    loaded = tomllib.loads(data.decode("utf-8"))
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(loaded), encoding="utf-8")
        os.replace(tmp, cached)
    except OSError:
        pass  # a read-only home: parse each time, still correct
    return loaded


def _cache_dir() -> Path:
    return userdirs.cache_dir() / "scan"


def _trie_pattern(words: list[str]) -> str:
    """An alternation of `words` shaped as a trie, longest match first: the regex engine
    then tests one character class per position instead of every word."""
    trie: dict[str, Any] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(ch) + render(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return render(trie)


@functools.lru_cache(maxsize=1)
def builtin() -> Ruleset:
    """The shipped ruleset, read once per process; each rule is built when first needed."""
    raw: list[tuple[dict[str, Any], str]] = []
    allowlists: list[Allowlist] = []
    judges: dict[str, tuple[str, int]] = {}
    for name in RULE_FILES:
        data = _load_file(name)
        table = data.get("judge", {})
        for kind in ("placeholder", "pem"):
            judges.update((rule_id, (kind, 0)) for rule_id in table.get(kind, ()))
        judges.update(
            (rule_id, ("password", g)) for rule_id, g in table.get("password", {}).items()
        )
        for a in [data["allowlist"]] if "allowlist" in data else []:
            allowlists.append(_allowlist(a, f"{name}: global allowlist"))
        for a in data.get("allowlists", []):
            allowlists.append(_allowlist(a, f"{name}: global allowlist"))
        # A rule without a regex names a whole file type (a path-only rule): nothing to scan.
        raw.extend((r, name) for r in data.get("rules", []) if r.get("regex"))
    # Specific rules first: where a vendor rule and a generic one see the same secret, the
    # finding is named after the vendor.
    raw.sort(key=lambda pair: "generic" in pair[0]["id"])
    return Ruleset(raw, tuple(allowlists), judges)
