"""One job's page: its history as a timeline, its manifest, its article against what the
remote holds, where the remote shows it, and what a person can do about it."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from typing import TypedDict

from gitpub.context import Context
from gitpub.core.errors import GitpubError
from gitpub.core.jsonvalue import JSON, as_list
from gitpub.core.states import NEEDS_PERSON, State
from gitpub.store import jobs, listing
from gitpub.store.db import parse_time
from gitpub.store.jobs import Event, Job, PublicJob
from gitpub.ui import weblinks
from gitpub.ui.pages import age

S = State
PHASES = {
    "submit": "submitted",
    "prepare:start": "prepare",
    "commit:start": "commit",
    "recover:start": "recovery",
    "schedule:due": "its scheduled time came",
    "operator:retry": "a person retried it",
    "operator:continue": "a person continued it",
    "operator:abandon": "a person abandoned it",
    "withdrawn": "taken off the remote branch",
}
"""Events that open a phase of the timeline (a delivery attempt opens at relay:start)."""
_FINDING = re.compile(r"([\w.-]+) \(fingerprint ([0-9a-f]{6,})\)(?: \(line (\d+)\))?")
DIFF_LINES = 400  # a page stays small: a longer diff is cut, and says so


class Entry(TypedDict):
    """One event of the timeline, as the page shows it."""

    seq: int
    at: str
    duration: str
    step: str
    move: str
    to: str
    attempt: int | str
    holder: JSON
    reason: str
    detail: list[tuple[str, str]]


class Group(TypedDict, total=False):
    """A phase of the timeline: its events, and how many retries were folded into it."""

    title: str
    kind: str
    events: list[Entry]
    retries: int
    open: bool


class DiffLine(TypedDict):
    text: str
    kind: str


class Diff(TypedDict):
    lines: list[DiffLine]
    note: str


class FileRow(TypedDict):
    path: str
    size: int
    sha256: str


class JobPage(TypedDict):
    job: PublicJob
    short: str
    lease: str | None
    lease_until: str
    reason: str
    findings: list[dict[str, str]]
    groups: list[Group]
    count: int
    manifest: list[FileRow]
    diff: Diff
    links: list[tuple[str, str]]
    commands: list[tuple[str, str]]
    acts: list[tuple[str, str]]


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _entry(ev: Event, before: float | None, attempt: int) -> Entry:
    detail = dict(ev["detail"]) if isinstance(ev["detail"], dict) else {}
    reason = detail.pop("reason", "") or detail.pop("why", "")
    holder = detail.get("previous_owner", "")
    when = parse_time(ev["at"])
    return {
        "seq": ev["seq"],
        "at": ev["at"][:23].replace("T", " "),
        "duration": _duration(when - before if before is not None else None),
        "step": ev["step"],
        "move": f"{ev['from_state'] or '·'} → {ev['to_state']}" if ev["to_state"] else "",
        "to": ev["to_state"] or "",
        "attempt": attempt or "",
        "holder": holder,
        "reason": str(reason),
        "detail": [(k, _plain(v)) for k, v in sorted(detail.items()) if k != "previous_owner"],
    }


def _plain(value: JSON) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def timeline(events: Sequence[Event]) -> list[Group]:
    """The events in order, in phases; delivery attempts that ended waiting to retry are
    folded together, so twenty retries are one line until someone opens them."""
    groups: list[Group] = []
    before: float | None = None
    attempt = 0
    for ev in events:
        step = str(ev["step"])
        if step == "relay:start":
            given = ev["detail"].get("attempt")
            attempt = int(given) if isinstance(given, (int, float, str)) and given else attempt + 1
            groups.append({"title": f"delivery, attempt {attempt}", "kind": "delivery"})
        elif step in PHASES or not groups:
            groups.append({"title": PHASES.get(step, step), "kind": step})
        groups[-1].setdefault("events", []).append(_entry(ev, before, attempt))
        before = parse_time(ev["at"])
    return _folded(groups)


def _folded(groups: list[Group]) -> list[Group]:
    out: list[Group] = []
    for group in groups:
        retried = group["kind"] == "delivery" and group["events"][-1]["step"] == "retry:wait"
        previous = out[-1] if out else None
        if retried and previous is not None and previous.get("retries"):
            previous["events"] += group["events"]
            previous["retries"] += 1
            previous["title"] = f"{previous['retries']} delivery attempts, each waited to retry"
            continue
        if retried:
            group = {**group, "retries": 1, "title": group["title"] + ", waited to retry"}
        out.append({**group, "open": not retried})
    return out


def findings(events: Sequence[Event], reason: str) -> list[dict[str, str]]:
    """Secrets found in the job's text or a step's answer: kind, line and fingerprint."""
    found: dict[str, dict[str, str]] = {}
    for ev in events:
        for leak in as_list(ev["detail"].get("leaks")):
            if isinstance(leak, dict) and leak.get("fingerprint"):
                item = {k: str(leak.get(k, "")) for k in ("kind", "line", "fingerprint")}
                found.setdefault(item["fingerprint"], item)
    for kind, fingerprint, line in _FINDING.findall(reason):
        found.setdefault(fingerprint, {"kind": kind, "line": line, "fingerprint": fingerprint})
    return list(found.values())


def manifest(ctx: Context, job: Job) -> list[FileRow]:
    """The files the job writes, with their sizes and hashes (empty until it is prepared)."""
    path = ctx.job_dir(job.job_id) / "manifest.json"
    if job.artifact_sha256 and not path.is_file() and ctx.store.shared:
        ctx.store.fetch_folder(job.job_id)  # prepared on another node: its folder is stored
    try:
        rows = json.loads(path.read_bytes()) if job.artifact_sha256 else []
    except (OSError, ValueError):
        return []
    return [
        {"path": str(r["path"]), "size": int(r["size"]), "sha256": str(r["sha256"])}
        for r in rows
        if isinstance(r, dict)
    ]


def _article(ctx: Context, job: Job) -> bytes | None:
    if not (job.artifact_dir and job.target_path):
        return None
    try:
        return (ctx.state_dir / job.artifact_dir / job.target_path).read_bytes()
    except OSError:
        return None


def diff(ctx: Context, job: Job) -> Diff:
    """The job's article against the remote branch as this clone last fetched it."""
    mine = _article(ctx, job)
    if mine is None or not job.target_path:
        return {"lines": [], "note": "no article yet: the job has not been prepared"}
    tip = ctx.repo.resolve(ctx.tracking_ref)
    theirs = ctx.repo.blob_at(str(tip), job.target_path) if tip is not None else None
    if theirs == mine:
        return {"lines": [], "note": "the remote branch holds exactly this article"}
    old = (theirs or b"").decode("utf-8", "replace").splitlines()
    new = mine.decode("utf-8", "replace").splitlines()
    lines = list(
        difflib.unified_diff(
            old,
            new,
            f"remote {job.target_path}" if theirs is not None else "/dev/null",
            f"job {job.target_path}",
            lineterm="",
        )
    )
    kinds = [("add" if ln[:1] == "+" else "del" if ln[:1] == "-" else "ctx") for ln in lines]
    rows: list[DiffLine] = [{"text": t, "kind": k} for t, k in zip(lines, kinds, strict=True)]
    note = "" if theirs is not None else "the remote branch has no such file"
    if len(rows) > DIFF_LINES:
        note = f"the first {DIFF_LINES} of {len(rows)} lines"
    return {"lines": rows[:DIFF_LINES], "note": note}


def commands(job: Job) -> list[tuple[str, str]]:
    """(the exact command, what it does) for what a person can do in the job's state."""
    jid = job.job_id
    withdrawn = job.state is S.PUBLISHED and job.withdrawn_at is not None
    if job.state in NEEDS_PERSON:
        out = [(f"git blogpub retry {jid}", "prepare it again (the draft is reused)")]
        if job.state is not S.FAILED or job.target_path:
            out.append(
                (
                    f"git blogpub resolve {jid} --continue",
                    "deliver the article as fixed on its branch",
                )
            )
        return out + [(f"git blogpub resolve {jid} --abandon", "give it up (SKIPPED)")]
    if job.state is S.SCHEDULED:
        return [
            (f"git blogpub retry {jid}", "publish it now"),
            (f"git blogpub resolve {jid} --abandon", "drop it"),
        ]
    if withdrawn:
        return [(f"git blogpub retry {jid}", "publish it again")]
    if job.state is S.IN_REVIEW:
        return [("git blogpub run --until-idle", f"notice a merge of {job.review_branch}")]
    if job.state is S.RETRY_WAIT:
        return [(f"git blogpub relay {jid}", "deliver it now instead of at its retry time")]
    if job.state in (S.PUBLISHED, S.SKIPPED):
        return [(f"git blogpub show {jid}", "its record, as text")]
    return [("git blogpub run --until-idle", "drive it (and every due job) on")]


def actions(job: Job) -> list[tuple[str, str]]:
    """(action, label) of the buttons the page offers with `--actions`: the commands above
    that the page can run, through the functions those commands call."""
    offered = dict(commands(job))
    verbs = {
        "retry": f"git blogpub retry {job.job_id}",
        "continue": f"git blogpub resolve {job.job_id} --continue",
        "abandon": f"git blogpub resolve {job.job_id} --abandon",
    }
    return [(verb, offered[command]) for verb, command in verbs.items() if command in offered]


def job_page(ctx: Context, job_id: str) -> JobPage:
    try:
        job = jobs.require(ctx.store, job_id)
    except GitpubError as exc:
        raise LookupError(exc.message) from None
    history = jobs.events(ctx.store, job.job_id)
    reason = listing.reason(ctx.store, job.job_id)
    remote = ctx.repo.remote_url(ctx.config.publish.remote)
    web = weblinks.web_base(remote or "")
    return {
        "job": job.public(),
        "short": job.job_id[:8],
        "lease": job.lease_owner if job.lease_token else "",
        "lease_until": age(job.lease_expires_at) if job.lease_token else "",
        "reason": reason if job.state in NEEDS_PERSON or job.state is S.RETRY_WAIT else "",
        "findings": findings(history, reason),
        "groups": timeline(history),
        "count": len(history),
        "manifest": manifest(ctx, job),
        "diff": diff(ctx, job),
        "links": weblinks.links(web, job, ctx.config.publish.branch) if web else [],
        "commands": commands(job),
        "acts": actions(job),
    }
