#!/usr/bin/env python3
"""gitpub judge step backed by an OpenAI-compatible chat endpoint (standard library only).

gitpub runs it with one JSON request on stdin and reads one JSON answer from stdout:

  prepare: {"mode": "prepare", "candidate": {"path", "text"}, "existing": [{"path", "text"}]}
        -> {"decision": "NEW" | "UPDATE" | "SKIP", "target"?, "reason"?}
  recheck: {"mode": "recheck", "candidate": {"path", "text"}, "delta": [{"path", "text"}]}
        -> {"decision": "SKIP" | "KEEP", "reason"?}

The model is asked for a strict JSON object; an answer outside that contract (not JSON, an
unknown decision or field, an UPDATE of an article that was not offered) ends this process
with status 1 and one line on stderr, and gitpub then sends the job to REVIEW (fail closed).

Environment:
  GITPUB_JUDGE_URL          base URL of the API, e.g. http://127.0.0.1:8080/v1 (required);
                            `/chat/completions` is appended unless already there
  GITPUB_JUDGE_MODEL        model name (required)
  GITPUB_JUDGE_API_KEY      bearer token (optional; sent only to GITPUB_JUDGE_URL, never printed)
  GITPUB_JUDGE_TIMEOUT      seconds for the HTTP request (default 60; keep it under steps.timeout)
  GITPUB_JUDGE_JSON_MODE    "1" (default) asks for response_format json_object; "0" for servers
                            that reject that parameter
  GITPUB_JUDGE_MAX_ARTICLES existing articles offered to the model, most similar first (default 20)
  GITPUB_JUDGE_MAX_CHARS    characters kept of each article text (default 6000)
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.error
import urllib.request
from typing import Any

PROG = "judge_openai"

DECISIONS = {"prepare": ("NEW", "UPDATE", "SKIP"), "recheck": ("SKIP", "KEEP")}

SYSTEM = {
    "prepare": (
        "You decide whether a candidate blog article duplicates articles the blog already has.\n"
        "Answer with one JSON object and nothing else:\n"
        '{"decision": "NEW" | "UPDATE" | "SKIP", "target": "<path>", "reason": "<one sentence>"}\n'
        "NEW: the candidate says something the existing articles do not.\n"
        "UPDATE: the candidate is a newer version of one existing article; `target` is that\n"
        "article's path, copied exactly from the list. Only UPDATE has a target.\n"
        "SKIP: an existing article already says what the candidate says."
    ),
    "recheck": (
        "Articles were published while a candidate blog article waited to be delivered. "
        "Decide whether one of them already says what the candidate says.\n"
        "Answer with one JSON object and nothing else:\n"
        '{"decision": "SKIP" | "KEEP", "reason": "<one sentence>"}\n'
        "SKIP: a newly published article makes the candidate redundant.\n"
        "KEEP: the candidate still adds something."
    ),
}


class JudgeError(Exception):
    """Anything that keeps this judge from answering inside the contract."""


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise JudgeError(f"{name} must be an integer, got {raw!r}") from None
    if value < 1:
        raise JudgeError(f"{name} must be at least 1")
    return value


# ------------------------------------------------------------------------ the request


def _article(item: Any, where: str) -> dict[str, str]:
    if not isinstance(item, dict):
        raise JudgeError(f"request field {where} is not an object")
    path, text = item.get("path"), item.get("text")
    if not isinstance(path, str) or not isinstance(text, str):
        raise JudgeError(f"request field {where} needs string path and text")
    return {"path": path, "text": text}


def read_request(raw: str) -> tuple[str, dict[str, str], list[dict[str, str]]]:
    """The mode, the candidate and the articles to compare it with (existing or delta)."""
    try:
        request = json.loads(raw)
    except json.JSONDecodeError:
        raise JudgeError("request on stdin is not JSON") from None
    if not isinstance(request, dict):
        raise JudgeError("request is not a JSON object")
    mode = request.get("mode")
    if mode not in DECISIONS:
        raise JudgeError(f"request mode must be prepare or recheck, got {mode!r}")
    others_key = "existing" if mode == "prepare" else "delta"
    others = request.get(others_key, [])
    if not isinstance(others, list):
        raise JudgeError(f"request field {others_key} is not a list")
    candidate = _article(request.get("candidate"), "candidate")
    return mode, candidate, [_article(o, f"{others_key}[{i}]") for i, o in enumerate(others)]


def _shingles(text: str) -> set[str]:
    flat = re.sub(r"[\W_]+", "", text.lower())
    return {flat[i : i + 3] for i in range(max(1, len(flat) - 2))}


def most_similar(
    candidate: dict[str, str], others: list[dict[str, str]], keep: int
) -> list[dict[str, str]]:
    """The `keep` articles closest to the candidate (character 3-gram Jaccard), so a large
    blog still fits the model's context; the model decides among these."""
    if len(others) <= keep:
        return others
    mine = _shingles(candidate["text"])

    def score(other: dict[str, str]) -> float:
        theirs = _shingles(other["text"])
        union = len(mine | theirs)
        return len(mine & theirs) / union if union else 0.0

    return sorted(others, key=score, reverse=True)[:keep]


def messages(
    mode: str, candidate: dict[str, str], others: list[dict[str, str]], max_chars: int
) -> list[dict[str, str]]:
    def clip(article: dict[str, str]) -> dict[str, str]:
        return {"path": article["path"], "text": article["text"][:max_chars]}

    label = "existing" if mode == "prepare" else "newly_published"
    user = {"candidate": clip(candidate), label: [clip(o) for o in others]}
    return [
        {"role": "system", "content": SYSTEM[mode]},
        {"role": "user", "content": json.dumps(user, ensure_ascii=False)},
    ]


# ---------------------------------------------------------------------- the endpoint


def endpoint() -> tuple[str, str, str | None]:
    base = os.environ.get("GITPUB_JUDGE_URL", "").strip()
    model = os.environ.get("GITPUB_JUDGE_MODEL", "").strip()
    if not base or not model:
        raise JudgeError("set GITPUB_JUDGE_URL and GITPUB_JUDGE_MODEL")
    if not base.startswith(("http://", "https://")):
        raise JudgeError("GITPUB_JUDGE_URL must start with http:// or https://")
    url = base.rstrip("/")
    if not url.endswith("/chat/completions"):
        url += "/chat/completions"
    return url, model, os.environ.get("GITPUB_JUDGE_API_KEY") or None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect would carry the Authorization header to wherever it points: refuse it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def ask(url: str, key: str | None, body: dict[str, Any], timeout: float) -> str:
    """POST the chat request; the assistant message's content."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(
        url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
    )
    try:
        with urllib.request.build_opener(_NoRedirect).open(req, timeout=timeout) as resp:
            payload = resp.read()
    except urllib.error.HTTPError as exc:
        # The status only: an error body may echo request headers back.
        raise JudgeError(f"endpoint answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise JudgeError(f"endpoint unreachable: {reason}") from None
    try:
        content = json.loads(payload)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise JudgeError("endpoint answer is not an OpenAI-style chat completion") from None
    if not isinstance(content, str):
        raise JudgeError("chat completion has no text content")
    return content


def verdict(mode: str, content: str, offered: list[dict[str, str]]) -> dict[str, str]:
    """The model's answer, checked against the step contract; JudgeError when outside it."""
    try:
        answer = json.loads(content)
    except json.JSONDecodeError:
        raise JudgeError("model answer is not a JSON object") from None
    if not isinstance(answer, dict):
        raise JudgeError("model answer is not a JSON object")
    extra = sorted(set(answer) - {"decision", "target", "reason"})
    if extra:
        raise JudgeError(f"model answer has fields outside the contract: {', '.join(extra)[:80]}")
    decision = answer.get("decision")
    if decision not in DECISIONS[mode]:
        shown = repr(decision)[:40]
        raise JudgeError(f"model decision {shown} is not one of {'/'.join(DECISIONS[mode])}")
    reason = answer.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise JudgeError("model reason is not a string")
    reason = " ".join((reason or "").split())
    target = answer.get("target")
    paths = {o["path"] for o in offered}
    if target not in (None, "") and target not in paths:
        # A path the model was never shown is a guess, whatever the decision.
        raise JudgeError("model answered a target that is not one of the offered articles")
    out = {"decision": decision}
    if decision == "UPDATE":
        if not target:
            raise JudgeError("model answered UPDATE without a target")
        out["target"] = target
    elif decision == "SKIP" and target:
        reason = f"duplicate of {target}" + (f": {reason}" if reason else "")
    elif target:
        raise JudgeError(f"model answered a target with {decision}")
    if reason:
        out["reason"] = reason[:500]
    return out


def main() -> int:
    try:
        mode, candidate, others = read_request(sys.stdin.read())
        url, model, key = endpoint()
        offered = most_similar(candidate, others, _env_int("GITPUB_JUDGE_MAX_ARTICLES", 20))
        body: dict[str, Any] = {
            "model": model,
            "messages": messages(
                mode, candidate, offered, _env_int("GITPUB_JUDGE_MAX_CHARS", 6000)
            ),
            "temperature": 0,
        }
        if os.environ.get("GITPUB_JUDGE_JSON_MODE", "1").strip() != "0":
            body["response_format"] = {"type": "json_object"}
        timeout = _env_int("GITPUB_JUDGE_TIMEOUT", 60)
        answer = verdict(mode, ask(url, key, body, timeout), offered)
    except JudgeError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug here must still be one line, and still fail closed
        print(f"{PROG}: internal error: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        return 1
    json.dump(answer, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
