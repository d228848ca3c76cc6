"""Rebuild secrets.jsonl, and gitpub's copy of Nosey Parker's rules, from Nosey Parker's rule
files (run by hand, not by the tests).

    python tests/corpus/secrets/build.py NOSEYPARKER/crates/noseyparker/data/default/builtin/rules

Only rules Nosey Parker files under "secret" count, less those it also calls "hashed" (a
password hash), "identifier" (a bucket name, an account id) or "test" (a vendor's test-mode
key): those are not credentials a blog post must never carry.

Each rule's `examples` are its authors' true positives. For every example the line is kept as
written, and `bare` is the text Nosey Parker's own pattern matches in it: the token itself for
formats with a recognisable shape, the token with the words around it that make it one for the
others (a 40-character AWS secret key means nothing without `aws_secret_access_key`). The
examples are not edited; an example the pattern does not match in Python is left out and
counted."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

try:
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python < 3.11
    import sre_parse  # type: ignore[no-redef]

RULES_TOML = Path(__file__).parents[3] / "gitpub" / "scan" / "data" / "noseyparker.toml"


# Rules whose pattern backtracks exponentially in Python's engine (Rust's is linear-time):
# left out of gitpub's copy, their examples stay in the corpus and count as misses.
TOO_SLOW_FOR_PYTHON = {"np.phpmailer.1"}


def is_secret(rule: dict) -> bool:
    cats = set(rule.get("categories") or ())
    return "secret" in cats and not cats & {"hashed", "identifier", "test"}


def _required(items: object) -> list[str] | None:
    """Literal strings one of which every match must contain (lower case), or None."""
    options: list[list[str]] = []
    run = ""
    for op, arg in items:  # type: ignore[attr-defined]
        name = str(op)
        if name == "LITERAL":
            run += chr(arg)
            continue
        if len(run) >= 3:
            options.append([run])
        run = ""
        if name == "SUBPATTERN":
            inner = _required(arg[-1])
            if inner:
                options.append(inner)
        elif name in ("MAX_REPEAT", "MIN_REPEAT") and arg[0] >= 1:
            inner = _required(arg[2])
            if inner:
                options.append(inner)
        elif name == "BRANCH":
            branches = [_required(b) for b in arg[1]]
            if all(branches):
                options.append(sorted({w for b in branches for w in b}))  # type: ignore[union-attr]
    if len(run) >= 3:
        options.append([run])
    if not options:
        return None
    best = max(options, key=lambda o: min(len(w) for w in o))
    return [w.lower() for w in best]


# Where no literal of three characters or more is required, the prefilter is given by hand.
KEYWORDS_BY_HAND = {
    "np.github.3": ["ghu_", "ghs_"],
    "np.odbc.1": ["uid", "user"],
    "np.salesforce.1": ["00"],
}


def keywords(rule: dict) -> list[str]:
    if rule["id"] in KEYWORDS_BY_HAND:
        return KEYWORDS_BY_HAND[rule["id"]]
    found = _required(sre_parse.parse(rule["pattern"]))
    return sorted(set(found)) if found else []


def multiline(rule: dict) -> bool:
    """A vendor's rule may span lines where its pattern allows whitespace (a .netrc entry, a
    Gradle credentials block); a generic one never does."""
    generic = "generic" in (rule.get("categories") or ())
    return not generic and any(s in rule["pattern"] for s in (r"\s", r"\n"))


def toml_string(value: str) -> str:
    quotes = "'" * 3
    if quotes not in value and not value.endswith("'"):
        return quotes + value + quotes
    return json.dumps(value)


def write_rules(folder: Path) -> None:
    lines = [
        "# Nosey Parker's rules (those filed under \"secret\"), converted to gitleaks' schema by",
        "# tests/corpus/secrets/build.py. Patterns are Python syntax as written upstream",
        '# (regexSyntax = "python"); keywords are literals every match must contain, derived',
        "# from each pattern. Source, version and licence: NOTICE.md beside this file.",
        "",
    ]
    for path in sorted(folder.glob("*.yml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            if not is_secret(rule) or rule["id"] in TOO_SLOW_FOR_PYTHON:
                continue
            try:
                python_pattern(rule["pattern"])
            except re.error:
                continue
            lines += [
                "[[rules]]",
                f"id = {json.dumps(rule['id'])}",
                f"description = {json.dumps(rule['name'])}",
                f"regex = {toml_string(rule['pattern'].replace(chr(92) + 'z', chr(92) + 'Z'))}",
                'regexSyntax = "python"',
                *(["multiline = true"] if multiline(rule) else []),
                f"keywords = {json.dumps(keywords(rule), ensure_ascii=False)}",
                "",
            ]
    RULES_TOML.write_text("\n".join(lines), encoding="utf-8")


def python_pattern(pattern: str) -> re.Pattern[str]:
    # Rust's regex and Python's agree on everything these rules use but \z.
    return re.compile(pattern.replace(r"\z", r"\Z"))


def main(folder: Path) -> None:
    out = []
    skipped = 0
    for path in sorted(folder.glob("*.yml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            if not is_secret(rule):
                continue
            try:
                regex = python_pattern(rule["pattern"])
            except re.error:
                skipped += len(rule.get("examples") or [])
                continue
            for example in rule.get("examples") or []:
                m = regex.search(example)
                if m is None:
                    skipped += 1
                    continue
                out.append(
                    {
                        "source": "noseyparker",
                        "rule": rule["id"],
                        "name": rule["name"],
                        "example": example,
                        "bare": m.group(0).strip(),
                    }
                )
    target = Path(__file__).with_name("secrets.jsonl")
    with target.open("w", encoding="utf-8") as fh:
        for row in out:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    formats = len({r["rule"] for r in out})
    print(f"{len(out)} examples of {formats} formats written; {skipped} left out", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
    write_rules(Path(sys.argv[1]))
