"""The secrets corpus (tests/corpus/secrets): true positives from Nosey Parker's rule files."""

from __future__ import annotations

import json
import tarfile
from functools import lru_cache
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


@lru_cache(maxsize=1)
def secrets() -> list[dict[str, str]]:
    path = CORPUS / "secrets" / "secrets.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def tokens() -> list[dict[str, str]]:
    """The corpus rows of formats that name themselves (rules gitpub trusts by their shape).

    The others are Nosey Parker's password and generic-assignment examples, which its
    authors wrote with demo values (`super$ecret`, `thisismypassword`, `user:secret@localhost`):
    by the placeholder rule those are no findings (docs/security.md)."""
    from gitpub.scan import rules

    ruleset = rules.builtin()
    judged = {r.id for r in ruleset.rules if r.judge != "trusted"}
    return [r for r in secrets() if r["rule"] not in judged]


def one(rule: str, index: int = 0) -> str:
    """The bare secret of the corpus's `index`-th example of `rule`."""
    return [r["bare"] for r in secrets() if r["rule"] == rule][index]


def prose(bare: str) -> str:
    """A secret pasted into a sentence of an article."""
    return f"Here is what I used yesterday: {bare} and then it worked."


@lru_cache(maxsize=1)
def posts() -> list[tuple[str, str]]:
    """(name, text) of every real blog post in tests/corpus/posts (SOURCES.md there)."""
    with tarfile.open(CORPUS / "posts" / "posts.tar.xz") as tar:
        out = []
        for member in tar.getmembers():
            fh = tar.extractfile(member)
            if fh is not None:
                out.append((member.name, fh.read().decode("utf-8")))
        return out


def has_code(text: str) -> bool:
    """Whether a post shows code: a fenced block, or a block indented by four spaces."""
    return "```" in text or "~~~" in text or "\n    " in text or "\n\t" in text


@lru_cache(maxsize=1)
def markdown() -> list[tuple[str, str]]:
    """(name, text) of every real Markdown file in tests/corpus/markdown."""
    with tarfile.open(CORPUS / "markdown" / "markdown.tar.xz") as tar:
        out = []
        for member in tar.getmembers():
            fh = tar.extractfile(member)
            if fh is not None:
                out.append((member.name, fh.read().decode("utf-8")))
        return out
