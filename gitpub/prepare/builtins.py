"""Built-in steps: passthrough draft, similarity judge, secrets scan, MDX validation.

Each takes the request object of the step protocol and returns its answer object, so a
built-in and an external command are interchangeable behind `steps.run_step`."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from gitpub import scan
from gitpub.site import validate
from gitpub.site.frontmatter import parse


def passthrough(request: Mapping[str, Any]) -> dict[str, Any]:
    """The source already is the article."""
    return {"text": request["source"]}


# ----------------------------------------------------------------------- similarity

_SHINGLE = 3


def _body(text: str) -> str:
    fm = parse(text)
    lines = text.split("\n")[fm.body_start_line - 1 :]
    body = unicodedata.normalize("NFKC", "\n".join(lines)).lower()
    return re.sub(r"[\W_]+", "", body)  # whitespace and punctuation carry no meaning here


@functools.lru_cache(maxsize=512)
def shingles(text: str) -> frozenset[str]:
    """Kept for the last 512 texts: a batch judges each candidate against the same articles,
    which would otherwise be parsed again for every job (a few hundred kB per long article,
    so the cache stays bounded)."""
    body = _body(text)
    if len(body) < _SHINGLE:
        return frozenset({body}) if body else frozenset()
    return frozenset(body[i : i + _SHINGLE] for i in range(len(body) - _SHINGLE + 1))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of character 3-gram sets (works for CJK and for spaced languages)."""
    return _jaccard(shingles(a), shingles(b))


def _jaccard(sa: frozenset[str], sb: frozenset[str]) -> float:
    if not sa or not sb:
        return 0.0
    common = len(sa & sb)  # the union's size follows from it: no third set is built
    return common / (len(sa) + len(sb) - common)


def _best(candidate: str, others: list[Mapping[str, Any]]) -> tuple[float, str | None]:
    """The most similar article and its score, exactly. An article whose 3-gram count is so
    far from the candidate's that even sharing every 3-gram of the smaller set could not
    beat the best so far is passed over without comparing the sets."""
    mine = shingles(candidate)
    best, path = 0.0, None
    for other in others:
        theirs = shingles(str(other.get("text", "")))
        small, large = sorted((len(mine), len(theirs)))
        if not small or small <= best * large:
            continue
        score = _jaccard(mine, theirs)
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
