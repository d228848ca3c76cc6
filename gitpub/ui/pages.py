"""What the job list and the fleet page show, read from the store: plain values for the
templates, each read bounded (a page of jobs, counts from an index)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import NamedTuple, TypedDict
from urllib.parse import urlencode

from gitpub.context import Context
from gitpub.core.states import NEEDS_PERSON, State
from gitpub.core.timespec import parse_since
from gitpub.ops.doctor import holders
from gitpub.ops.worker import ACTIVE
from gitpub.store import listing, outbox, views
from gitpub.store.db import at, now, parse_time
from gitpub.store.jobs import Job
from gitpub.sync import held

S = State


class Tab(NamedTuple):
    name: str
    title: str
    states: tuple[State, ...]


TABS = (
    Tab("needs", "needs a person", (S.REVIEW, S.CONFLICT, S.FAILED)),
    Tab(
        "flight",
        "in flight",
        (*ACTIVE, S.RETRY_WAIT),
    ),
    Tab("scheduled", "scheduled", (S.SCHEDULED,)),
    Tab("review", "in review", (S.IN_REVIEW,)),
    Tab("done", "done", (S.PUBLISHED, S.SKIPPED)),
    Tab("all", "all", ()),
)
PAGE = 50
FILTERS = ("state", "key", "node", "target", "since", "text")


class Row(TypedDict):
    """One job of the list, as the template shows it."""

    id: str
    short: str
    state: str
    withdrawn: bool
    target: str
    key: str
    updated: str
    age: str
    created_age: str
    attempt: int
    reason: str
    scheduled: str | None
    review_branch: str | None
    lease: str | None


class TabCount(TypedDict):
    name: str
    title: str
    count: int


class TabLink(TabCount):
    current: bool
    href: str


class JobsPage(TypedDict):
    tab: str
    tabs: list[TabLink]
    query: dict[str, str]
    states: list[str]
    errors: list[str]
    rows: list[Row]
    total: int
    first: int
    last_shown: int
    prev: str | None
    next: str | None
    page: int
    pages: int


class LeaseShown(TypedDict):
    id: str
    short: str
    state: str
    target: str
    until: str


class LockHolder(TypedDict):
    fleet: str
    here: str
    shared: bool


class HeldFile(TypedDict):
    path: str
    findings: list[dict[str, str]]


class FleetPage(TypedDict):
    workers: list[tuple[str, list[LeaseShown]]]
    lock: LockHolder
    oldest_due: str
    edits_waiting: int
    edits_conflict: int
    held: list[HeldFile]
    node: str
    store: str


def age(stamp: str | None, moment: float | None = None) -> str:
    """`3m`, `2h`, `5d`: how long ago (or, ahead, in how long) a stamp of the store is."""
    if not stamp:
        return ""
    seconds = (moment if moment is not None else time.time()) - parse_time(stamp)
    ahead, seconds = seconds < 0, abs(seconds)
    text = f"{int(seconds)}s"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            text = f"{int(seconds // size)}{unit}"
            break
    return f"in {text}" if ahead else text


def _filters(query: Mapping[str, str], tab: Tab) -> tuple[views.Filters, list[str]]:
    """The store's filters from the URL's query, and what in it could not be read."""
    errors: list[str] = []
    states: tuple[State, ...] = tab.states
    wanted = query.get("state", "").strip().upper()
    if wanted:
        if wanted in S.__members__:
            states = (S(wanted),)
        else:
            errors.append(f"state {wanted!r} is not a state")
    since = ""
    if query.get("since", "").strip():
        try:
            since = at(parse_since(query["since"]))
        except ValueError as exc:
            errors.append(f"since: {exc}")
    got = views.Filters(
        states=states,
        key=query.get("key", "").strip(),
        node=query.get("node", "").strip(),
        target=query.get("target", "").strip(),
        since=since,
        text=query.get("text", "").strip(),
        withdrawn=query.get("withdrawn") == "1",
    )
    return got, errors


def link(query: Mapping[str, str], **changes: str | int | None) -> str:
    """The list's URL with `changes` applied to the current query (None drops a field)."""
    merged: dict[str, str] = {k: v for k, v in query.items() if v}
    for key, value in changes.items():
        if value is None or value == "":
            merged.pop(key, None)
        else:
            merged[key] = str(value)
    return "/" + (f"?{urlencode(sorted(merged.items()))}" if merged else "")


def row(ctx: Context, job: Job, moment: float) -> Row:
    waiting = job.state in NEEDS_PERSON or job.state is S.RETRY_WAIT
    why = listing.reason(ctx.store, job.job_id) if waiting else ""
    return {
        "id": job.job_id,
        "short": job.job_id[:8],
        "state": job.state.value,
        "withdrawn": job.withdrawn_at is not None,
        "target": job.target_path or job.requested_target or "",
        "key": job.key_display,
        "updated": job.updated_at,
        "age": age(job.updated_at, moment),
        "created_age": age(job.created_at, moment),
        "attempt": job.attempt,
        "reason": (f"{job.failure_code}: " if job.failure_code else "") + why,
        "scheduled": job.scheduled_at if job.state is S.SCHEDULED else None,
        "review_branch": job.review_branch if job.state is S.IN_REVIEW else None,
        "lease": job.lease_owner if job.lease_token else None,
    }


def jobs_page(ctx: Context, query: Mapping[str, str]) -> JobsPage:
    """The job list: tabs with their counts, the filters, one page of rows. Without a tab
    asked for, the first one (what needs a person), or every job when nothing does."""
    chosen = next((t for t in TABS if t.name == query.get("tab")), None)
    filters, errors = _filters(query, chosen or TABS[0])
    tabs = _tabs(ctx, filters._replace(states=()))
    if chosen is None:
        chosen = TABS[0] if tabs[0]["count"] or query.get("state") else TABS[-1]
        filters, errors = _filters(query, chosen)
    try:
        number = max(1, int(query.get("page", "1")))
    except ValueError:
        number = 1
    total = views.count(ctx.store, filters)
    jobs = views.page(ctx.store, filters, PAGE, (number - 1) * PAGE)
    moment = time.time()
    last = max(1, -(-total // PAGE))
    kept = _kept(query)
    return {
        "tab": chosen.name,
        "tabs": [
            {**t, "current": t["name"] == chosen.name, "href": link({"tab": t["name"]}, **kept)}
            for t in tabs
        ],
        "query": {k: query.get(k, "") for k in FILTERS},
        "states": [s.value for s in S],
        "errors": errors,
        "rows": [row(ctx, j, moment) for j in jobs],
        "total": total,
        "first": (number - 1) * PAGE + 1 if jobs else 0,
        "last_shown": (number - 1) * PAGE + len(jobs),
        "prev": link(query, page=number - 1 if number > 2 else None) if number > 1 else None,
        "next": link(query, page=number + 1) if number < last else None,
        "page": number,
        "pages": last,
    }


def _tabs(ctx: Context, others: views.Filters) -> list[TabCount]:
    """Each tab with how many jobs it holds under the other filters: without any, one
    GROUP BY of the state index."""
    counts = views.by_state(ctx.store) if others == views.Filters() else None
    out: list[TabCount] = []
    for t in TABS:
        if counts is not None:
            n = sum(counts.values()) if not t.states else sum(counts.get(s, 0) for s in t.states)
        else:
            n = views.count(ctx.store, others._replace(states=t.states))
        out.append({"name": t.name, "title": t.title, "count": n})
    return out


def _kept(query: Mapping[str, str]) -> dict[str, str | None]:
    """The filters a tab link carries over (not the state: the tab is the state)."""
    return {k: query.get(k) or None for k in FILTERS if k != "state"}


def _lock_holder(ctx: Context, stamp: str) -> LockHolder:
    """Who holds the delivery lock: on a shared store the fleet's lock (any node), and this
    clone's lock file (this machine)."""
    fleet = views.fleet_lock(ctx.store, "delivery", stamp)
    local = holders.holder(ctx.locks.path("delivery"), ctx.store.path)
    if local is None:  # this platform cannot say who; it can still say whether
        taken = not ctx.locks.is_free("delivery")
        here = "held (this platform cannot say by whom)" if taken else ""
    elif local.pid is None:
        here = ""
    else:
        here = f"pid {local.pid}" + (f": {local.args}" if local.args else "")
    return {
        "fleet": f"{fleet[0]} (until {fleet[1][:19]}Z)" if fleet else "",
        "here": here,
        "shared": ctx.store.shared,
    }


def fleet_page(ctx: Context) -> FleetPage:
    """Workers and their leases, the delivery lock, the oldest due job, hand edits."""
    stamp = now()
    moment = parse_time(stamp)
    workers: dict[str, list[LeaseShown]] = {}
    for lease in views.live_leases(ctx.store, stamp):
        workers.setdefault(lease.owner, []).append(
            {
                "id": lease.job_id,
                "short": lease.job_id[:8],
                "state": lease.state.value,
                "target": lease.target_path or "",
                "until": age(lease.expires_at, moment),
            }
        )
    oldest = views.oldest_due(ctx.store, ACTIVE, stamp)
    secret = held.recorded(ctx.state_dir, ctx.repo.root)
    return {
        "workers": sorted(workers.items()),
        "lock": _lock_holder(ctx, stamp),
        "oldest_due": age(oldest, moment) if oldest else "",
        "edits_waiting": len(outbox.external_events(ctx.store, outbox.PENDING)),
        "edits_conflict": len(outbox.external_events(ctx.store, outbox.CONFLICT)),
        "held": [
            {"path": path, "findings": [_finding(f) for f in found]}
            for path, found in sorted(secret.items())
        ],
        "node": ctx.config.node,
        "store": "shared (PostgreSQL)" if ctx.store.shared else "embedded (SQLite)",
    }


def _finding(found: Mapping[str, object]) -> dict[str, str]:
    """Kind, line and fingerprint: what a person needs to judge a finding, never its text."""
    return {k: str(found.get(k, "")) for k in ("kind", "line", "fingerprint")}
