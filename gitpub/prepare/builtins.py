"""Built-in steps: passthrough draft, similarity judge, secrets scan, MDX validation.

Each takes the request object of the step protocol and returns its answer object, so a
built-in and an external command are interchangeable behind `steps.run_step`."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from gitpub import scan
from gitpub.prepare.frontmatter import parse


def passthrough(request: Mapping[str, Any]) -> dict[str, Any]:
    """The source already is the article."""
    return {"text": request["source"]}


# ----------------------------------------------------------------------- similarity

_SHINGLE = 3


def _body(text: str) -> str:
    fm = parse(text)
    lines = text.split("\n")[fm.body_start_line - 1 :] if fm.fields else text.split("\n")
    body = unicodedata.normalize("NFKC", "\n".join(lines)).lower()
    return re.sub(r"[\W_]+", "", body)  # whitespace and punctuation carry no meaning here


def shingles(text: str) -> frozenset[str]:
    body = _body(text)
    if len(body) < _SHINGLE:
        return frozenset({body}) if body else frozenset()
    return frozenset(body[i : i + _SHINGLE] for i in range(len(body) - _SHINGLE + 1))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of character 3-gram sets (works for CJK and for spaced languages)."""
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def _best(candidate: str, others: list[Mapping[str, Any]]) -> tuple[float, str | None]:
    best, path = 0.0, None
    for other in others:
        score = similarity(candidate, str(other.get("text", "")))
        if score > best:
            best, path = score, str(other.get("path"))
    return best, path


def judge(request: Mapping[str, Any], skip_at: float, update_at: float) -> dict[str, Any]:
    candidate = request["candidate"]
    if request.get("mode") == "recheck":
        score, path = _best(candidate["text"], list(request.get("delta", [])))
        if score >= skip_at:
            return {"decision": "SKIP", "reason": f"{score:.2f} similar to {path}"}
        return {"decision": "KEEP", "reason": f"best similarity {score:.2f}"}
    existing = list(request.get("existing", []))
    score, path = _best(candidate["text"], existing)
    if score >= skip_at:
        return {"decision": "SKIP", "reason": f"{score:.2f} similar to {path}"}
    if score >= update_at and path is not None:
        return {"decision": "UPDATE", "target": path, "reason": f"{score:.2f} similar"}
    if any(e.get("path") == candidate["path"] for e in existing):
        return {"decision": "UPDATE", "target": candidate["path"], "reason": "same path"}
    return {"decision": "NEW", "reason": f"best similarity {score:.2f}"}


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


# ------------------------------------------------------------------------------ MDX

REQUIRED_KEYS = ("title",)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TAG = re.compile(r"<(/?)([A-Za-z][\w.\-]*)((?:\s+[^<>]*?)?)(/?)>")
_VOID = frozenset(
    {
        "br",
        "hr",
        "img",
        "input",
        "meta",
        "link",
        "area",
        "base",
        "col",
        "embed",
        "source",
        "track",
        "wbr",
    }
)
_INLINE_CODE = re.compile(r"(`+).*?\1")


def mdx(request: Mapping[str, Any]) -> dict[str, Any]:
    """Front matter parses with the required keys, fences close, tags balance outside code."""
    text = str(request["text"])
    fm = parse(text)
    if fm.error:
        return {"ok": False, "reason": f"front matter: {fm.error}", "line": fm.body_start_line}
    for key in REQUIRED_KEYS:
        if not fm.fields.get(key):
            return {"ok": False, "reason": f"front matter lacks {key!r}", "line": 1}
    lines = text.split("\n")
    fence: tuple[str, int] | None = None
    stack: list[tuple[str, int]] = []
    for number in range(fm.body_start_line, len(lines) + 1):
        line = lines[number - 1]
        m = _FENCE.match(line)
        if fence is not None:
            if (
                m
                and m.group(1)[0] == fence[0][0]
                and len(m.group(1)) >= len(fence[0])
                and not line.strip()[len(m.group(1)) :].strip()
            ):
                fence = None
            continue
        if m:
            fence = (m.group(1), number)
            continue
        for tag in _TAG.finditer(_INLINE_CODE.sub("", line)):
            closing, name, _, selfclosing = tag.groups()
            if selfclosing or name.lower() in _VOID:
                continue
            if not closing:
                stack.append((name, number))
            elif not stack or stack[-1][0] != name:
                return {
                    "ok": False,
                    "reason": f"closing tag </{name}> does not match",
                    "line": number,
                }
            else:
                stack.pop()
    if fence is not None:
        return {"ok": False, "reason": "code fence is never closed", "line": fence[1]}
    if stack:
        name, number = stack[-1]
        return {"ok": False, "reason": f"tag <{name}> is never closed", "line": number}
    return {"ok": True}
