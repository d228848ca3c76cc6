"""Built-in steps: passthrough draft, similarity judge, secrets scan, MDX validation.

Each takes the request object of the step protocol and returns its answer object, so a
built-in and an external command are interchangeable behind `steps.run_step`."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from gitpub import scan
from gitpub.site import validate
from gitpub.site.frontmatter import body_start


def passthrough(request: Mapping[str, Any]) -> dict[str, Any]:
    """The source already is the article."""
    return {"text": request["source"]}


# ----------------------------------------------------------------------- similarity

_SHINGLE = 3


def _body(text: str) -> str:
    lines = text.split("\n")[body_start(text) - 1 :]
    body = unicodedata.normalize("NFKC", "\n".join(lines)).lower()
    return re.sub(r"[\W_]+", "", body)  # whitespace and punctuation carry no meaning here


def shingles(text: str) -> frozenset[str]:
    """The character 3-grams of the body (front matter left out, case, whitespace and
    punctuation ignored)."""
    body = _body(text)
    if len(body) < _SHINGLE:
        return frozenset({body}) if body else frozenset()
    return frozenset(body[i : i + _SHINGLE] for i in range(len(body) - _SHINGLE + 1))


class _Grams:
    """Each text's 3-grams as a bitset over one vocabulary of 3-grams, kept per process.

    A prepare compares its article with every other article of the blog: a blog of a
    thousand posts would otherwise be read again for every job, and comparing two bitsets
    (`&`, then counting bits) costs a few word operations where comparing two sets costs a
    hash lookup per 3-gram. Bounded: past its limits it starts over, but only between two
    comparisons (`bound`), never amid one: bitsets of two vocabularies do not compare."""

    MAX_GRAMS = 1 << 22
    MAX_TEXTS = 16384

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.texts: dict[str, tuple[int, int]] = {}

    def of(self, text: str) -> tuple[int, int]:
        """(bitset, number of 3-grams) of a text."""
        known = self.texts.get(text)
        if known is not None:
            return known
        grams = shingles(text)
        index = self.index
        positions = [index.setdefault(g, len(index)) for g in grams]
        bits = bytearray((max(positions, default=0) >> 3) + 1)
        for i in positions:
            bits[i >> 3] |= 1 << (i & 7)
        known = self.texts[text] = (int.from_bytes(bits, "little"), len(positions))
        return known


    def bound(self) -> None:
        if len(self.index) > self.MAX_GRAMS or len(self.texts) > self.MAX_TEXTS:
            self.index.clear()
            self.texts.clear()


_grams = _Grams()


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of character 3-gram sets (works for CJK and for spaced languages)."""
    _grams.bound()
    (sa, na), (sb, nb) = _grams.of(a), _grams.of(b)
    return _jaccard(sa, na, sb, nb)


def _jaccard(sa: int, na: int, sb: int, nb: int) -> float:
    if not na or not nb:
        return 0.0
    common = (sa & sb).bit_count()  # the union's size follows from it
    return common / (na + nb - common)


def _best(candidate: str, others: list[Mapping[str, Any]]) -> tuple[float, str | None]:
    """The most similar article and its score, exactly. An article whose 3-gram count is so
    far from the candidate's that even sharing every 3-gram of the smaller set could not
    beat the best so far is passed over without comparing the sets."""
    _grams.bound()
    mine, count = _grams.of(candidate)
    best, path = 0.0, None
    for other in others:
        theirs, n = _grams.of(str(other.get("text", "")))
        small, large = (count, n) if count <= n else (n, count)
        if not small or small <= best * large:
            continue
        score = _jaccard(mine, count, theirs, n)
        if score > best:
            best, path = score, str(other.get("path"))
    return best, path


def judge(request: Mapping[str, Any], skip_at: float, update_at: float) -> dict[str, Any]:
    """The writer's path decides; similarity only names near-exact duplicates.

    The candidate is compared with every OTHER article: its own path is the one it may write,
    so a revision is never measured against the version it replaces (a long post revised by
    a line is 0.99 similar to itself). A score never moves the job onto another path."""
    candidate = request["candidate"]
    mine = candidate["path"]
    pool = request.get("delta" if request.get("mode") == "recheck" else "existing", [])
    own = next((e for e in pool if e.get("path") == mine), None)
    others = [e for e in pool if e.get("path") != mine]
    score, path = _best(candidate["text"], others)
    if request.get("mode") == "recheck":
        if own is not None and own.get("text") == candidate["text"]:
            return {"decision": "SKIP", "reason": f"no change: {mine} already holds this text"}
        if score >= skip_at:
            return {"decision": "SKIP", "reason": f"{score:.2f} similar to {path}"}
        return {"decision": "KEEP", "reason": f"best similarity {score:.2f}"}
    if own is not None:
        if own.get("text") == candidate["text"]:
            return {"decision": "SKIP", "reason": "no change"}
        return {"decision": "UPDATE", "target": mine, "reason": "revision of its own path"}
    if score >= skip_at:
        return {"decision": "SKIP", "reason": f"{score:.2f} similar to {path}"}
    answer: dict[str, Any] = {"decision": "NEW", "reason": f"best similarity {score:.2f}"}
    if score >= update_at and path is not None:
        # Recorded for a person to see (`show`); `[steps] similar = "review"` acts on it.
        answer.update(similar=path, score=round(score, 4))
    return answer


# -------------------------------------------------------------------------- secrets


def secrets(request: Mapping[str, Any], allow: Iterable[str] = ()) -> dict[str, Any]:
    text = str(request["text"])
    found = scan.scan(text, path=request.get("path"), allow=allow) + scan.markers(text)
    if not found:
        return {"ok": True}
    first = min(found, key=lambda f: f.line)
    return {
        "ok": False,
        "reason": f"{first.kind}-like secret (fingerprint {first.fingerprint})",
        "line": first.line,
    }


# ----------------------------------------------------------------------- validation


def mdx(request: Mapping[str, Any]) -> dict[str, Any]:
    """Validation by the article's file type (`gitpub.site.validate`)."""
    problem = validate.check(str(request["path"]), str(request["text"]))
    if problem is None:
        return {"ok": True}
    return {"ok": False, "reason": problem.reason, "line": problem.line}
