"""Jobs: the row, its reads, and every change to it with its event (a new job comes from
`gitpub.intake`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, NamedTuple, TypedDict, cast

if TYPE_CHECKING:
    from typing_extensions import Unpack

from gitpub.core.errors import InputError, InternalError, Signal
from gitpub.core.ids import JobId, Sha256
from gitpub.core.jsonvalue import JSONObject
from gitpub.core.states import State, check_transition
from gitpub.scan.sanitize import sanitize, sanitize_obj
from gitpub.store import folders
from gitpub.store.db import Connection, Row, Store, now, parts

JobKind = Literal["article", "topic"]
"""A job publishes one article, or the article a topic's session closed into."""


class JobUpdate(TypedDict, total=False):
    """The fields a transition or a record may change, with their types: everything but the
    job's identity, its state (the transition's own argument) and its timestamps."""

    failure_code: str | None
    base_commit: str | None
    target_path: str | None
    target_blob_sha256: str | None
    artifact_dir: str | None
    artifact_sha256: str | None
    local_commit: str | None
    remote_commit: str | None
    attempt: int
    max_attempts: int
    next_retry_at: str | None
    last_recheck_head: str | None
    last_recheck_delta_sha: str | None
    lease_owner: str | None
    lease_token: str | None
    lease_expires_at: str | None
    requested_target: str | None
    withdrawn_at: str | None
    scheduled_at: str | None
    review: int
    review_branch: str | None


class PublicJob(TypedDict):
    """A job as `status --json`, `show --json`, the API and the MCP tools report it."""

    job_id: str
    state: str
    failure_code: str | None
    kind: JobKind
    idempotency_key: str
    key_sha256: str
    topic: str | None
    target_path: str | None
    base_commit: str | None
    local_commit: str | None
    remote_commit: str | None
    artifact_sha256: str | None
    attempt: int
    max_attempts: int
    next_retry_at: str | None
    created_at: str
    updated_at: str
    withdrawn: bool
    scheduled_at: str | None
    review: bool
    review_branch: str | None


class Event(TypedDict):
    """One line of a job's history: a state change, a step's result or a note."""

    seq: int
    from_state: str | None
    to_state: str | None
    step: str
    detail: JSONObject
    at: str


Detail = Mapping[str, object]
"""An event's detail as a caller gives it: stored as canonical JSON (a value JSON has no
form for is stored as its text)."""


class LeaseLost(Signal):
    """Another worker owns this job now: stop at this checkpoint, touch nothing."""


# Job and Move are NamedTuples, not frozen dataclasses: on Python 3.11 each frozen dataclass
# costs ~1 ms to create (its methods are compiled from source), and importing `dataclasses`
# (with `inspect`) ~10 ms of every `submit`. A changed copy is `job._replace(...)`.


class Job(NamedTuple):
    job_id: JobId
    idempotency_key: str
    kind: JobKind
    state: State
    failure_code: str | None
    source_sha256: Sha256
    source_path: str
    topic: str | None
    base_commit: str | None
    target_path: str | None
    target_blob_sha256: str | None
    artifact_dir: str | None
    artifact_sha256: str | None
    local_commit: str | None
    remote_commit: str | None
    attempt: int
    max_attempts: int
    next_retry_at: str | None
    last_recheck_head: str | None
    last_recheck_delta_sha: str | None
    lease_owner: str | None
    lease_token: str | None
    lease_expires_at: str | None
    requested_target: str | None
    created_at: str
    updated_at: str
    key_display: str
    key_legacy: int
    withdrawn_at: str | None = None
    scheduled_at: str | None = None  # `submit --at`: when a SCHEDULED job becomes due
    review: int = 0  # review mode: delivered to a review branch, published by a person's merge
    review_branch: str | None = None  # the branch on the remote it was pushed to

    @classmethod
    def from_row(cls, row: Row) -> Job:
        """The job of a whole row; a column it lacks is a bug, never a field's default."""
        try:
            values = {name: row[name] for name in cls._fields}
        except (IndexError, KeyError):
            missing = sorted(set(cls._fields) - set(row.keys()))
            raise InternalError(f"a job row without column(s) {', '.join(missing)}") from None
        values["state"] = State(values["state"])
        return cls(**values)

    def public(self) -> PublicJob:
        """The fields `status --json` and `show --json` report."""
        return {
            "job_id": self.job_id,
            "state": self.state.value,
            "failure_code": self.failure_code,
            "kind": self.kind,
            "idempotency_key": self.key_display,  # sanitized: the raw key is never stored
            "key_sha256": self.idempotency_key,
            "topic": self.topic,
            "target_path": self.target_path,
            "base_commit": self.base_commit,
            "local_commit": self.local_commit,
            "remote_commit": self.remote_commit,
            "artifact_sha256": self.artifact_sha256,
            "attempt": self.attempt,
            "max_attempts": self.max_attempts,
            "next_retry_at": self.next_retry_at,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "withdrawn": self.withdrawn_at is not None,
            "scheduled_at": self.scheduled_at,
            "review": bool(self.review),
            "review_branch": self.review_branch,
        }


# ------------------------------------------------------------------------------ reads


def get(store: Store, job_id: str) -> Job | None:
    row = store.conn.execute(
        "SELECT * FROM blog_publication WHERE job_id = ?", (job_id,)
    ).fetchone()
    return Job.from_row(row) if row else None


def get_many(store: Store, job_ids: Sequence[str]) -> dict[str, Job]:
    """The jobs of these ids that exist, by id: one statement per 500 (a round trip each on
    the shared store)."""
    found: dict[str, Job] = {}
    for part in parts(job_ids):
        marks = ", ".join("?" * len(part))
        rows = store.conn.execute(
            f"SELECT * FROM blog_publication WHERE job_id IN ({marks})", part
        ).fetchall()
        found.update((row["job_id"], Job.from_row(row)) for row in rows)
    return found


def require(store: Store, job_id: str) -> Job:
    """A job by id or a unique id prefix (like git's abbreviated hashes)."""
    job = get(store, job_id)
    if job:
        return job
    if len(job_id) < 4:
        raise InputError(f"job {job_id}: ids need 4+ characters")
    rows = store.conn.execute(
        "SELECT * FROM blog_publication WHERE job_id LIKE ? ESCAPE '\\' LIMIT 2",
        (job_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
    ).fetchall()
    if len(rows) == 1:
        return Job.from_row(rows[0])
    if len(rows) > 1:
        raise InputError(f"job {job_id}: ambiguous id prefix")
    raise InputError(f"job {job_id}: no such job")


def all_jobs(store: Store, state: State | None = None) -> list[Job]:
    if state is None:
        rows = store.conn.execute("SELECT * FROM blog_publication ORDER BY created_at, job_id")
    else:
        rows = store.conn.execute(
            "SELECT * FROM blog_publication WHERE state = ? ORDER BY created_at, job_id",
            (state.value,),
        )
    return [Job.from_row(r) for r in rows]


def events(store: Store, job_id: str) -> list[Event]:
    rows = store.conn.execute(
        "SELECT seq, from_state, to_state, step, detail, at FROM blog_publication_event "
        "WHERE job_id = ? ORDER BY seq",
        (job_id,),
    )
    return [_event(r) for r in rows]


def events_since(store: Store, job_ids: Sequence[str], since: str) -> dict[str, list[Event]]:
    """The events of these jobs recorded at or after the instant `since`, by job, each job's
    in order: one statement for a batch (`run` tells what a pass did with them)."""
    out: dict[str, list[Event]] = {job_id: [] for job_id in job_ids}
    for part in parts(list(job_ids)):
        marks = ", ".join("?" * len(part))
        rows = store.conn.execute(
            "SELECT job_id, seq, from_state, to_state, step, detail, at"
            f" FROM blog_publication_event WHERE job_id IN ({marks})"
            " AND at >= ? ORDER BY job_id, seq",
            (*part, since),
        )
        for r in rows:
            out[r["job_id"]].append(_event(r))
    return out


def _event(r: Row) -> Event:
    return {
        "seq": r["seq"],
        "from_state": r["from_state"],
        "to_state": r["to_state"],
        "step": r["step"],
        "detail": json.loads(r["detail"]),
        "at": r["at"],
    }


def step_results(store: Store, job_id: str) -> dict[str, JSONObject]:
    """The latest recorded result of every finished prepare step of a job (`steps_done`)."""
    return steps_done(events(store, job_id))


def steps_done(history: Iterable[Event]) -> dict[str, JSONObject]:
    """The latest recorded result of every finished prepare step in a job's history.

    An operator's retry or continue invalidates every step but the draft: the draft is the
    expensive, non-deterministic one, and what the person fixed lies downstream of it."""
    out: dict[str, JSONObject] = {}
    for ev in history:
        if ev["step"].startswith("step:"):
            out[ev["step"][5:]] = ev["detail"]
        elif ev["step"].startswith("operator:"):
            out = {k: v for k, v in out.items() if k == "draft"}
    return out


# ------------------------------------------------------------------------------ writes


def _canonical(detail: Detail | None) -> str:
    # Value by value (keys included), not the serialized string: our own field names are no
    # context for a secret rule, so `{"key": "<a request uuid>"}` stays readable while a
    # token inside any value is still redacted.
    plain = json.loads(json.dumps(detail or {}, default=str))
    return json.dumps(sanitize_obj(plain), sort_keys=True, ensure_ascii=False)


def append_event(
    conn: Connection,
    job_id: str,
    src: State | None,
    dst: State | None,
    step: str,
    detail: Detail | None,
) -> None:
    """One event, numbered after the job's last one, in one statement."""
    conn.execute(
        "INSERT INTO blog_publication_event (job_id, seq, from_state, to_state, step, detail, at)"
        " SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM blog_publication_event"
        " WHERE job_id = ?",
        (
            job_id,
            src.value if src else None,
            dst.value if dst else None,
            step,
            _canonical(detail),
            now(),
            job_id,
        ),
    )


class _Event(NamedTuple):
    job_id: str
    src: State | None
    dst: State | None
    step: str
    detail: Detail | None


_EVENT_ROWS = 500
"""Events per INSERT: 7 parameters each, well inside SQLite's limit on one statement's."""


def _append_events(conn: Connection, events: Sequence[_Event]) -> None:
    """Every event of a transaction in two statements whatever their number: the jobs' last
    numbers, then one INSERT. Only after each job's row was written in this transaction,
    which holds it: no other writer can number an event of these jobs meanwhile."""
    if len(events) == 1:
        append_event(conn, *events[0])
        return
    ids = sorted({e.job_id for e in events})
    last: dict[str, int] = dict.fromkeys(ids, 0)
    for start in range(0, len(ids), _EVENT_ROWS):
        part = ids[start : start + _EVENT_ROWS]
        marks = ", ".join("?" * len(part))
        rows = conn.execute(
            f"SELECT job_id, MAX(seq) FROM blog_publication_event WHERE job_id IN ({marks})"
            " GROUP BY job_id",
            part,
        ).fetchall()
        last.update({r[0]: int(r[1]) for r in rows})
    stamp = now()
    values: list[object] = []
    for event in events:
        last[event.job_id] += 1
        values += [
            event.job_id,
            last[event.job_id],
            event.src.value if event.src else None,
            event.dst.value if event.dst else None,
            event.step,
            _canonical(event.detail),
            stamp,
        ]
    for start in range(0, len(events), _EVENT_ROWS):
        chunk = values[start * 7 : (start + _EVENT_ROWS) * 7]
        rows_marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * (len(chunk) // 7))
        conn.execute(
            "INSERT INTO blog_publication_event"
            f" (job_id, seq, from_state, to_state, step, detail, at) VALUES {rows_marks}",
            chunk,
        )


def note(conn: Connection, job_id: str, step: str, detail: Detail) -> None:
    """An event without a state change, inside the caller's transaction. Its row is locked
    first (a no-op update), so two notes on a shared store never race for one `seq`."""
    conn.execute("UPDATE blog_publication SET updated_at = updated_at WHERE job_id = ?", (job_id,))
    append_event(conn, job_id, None, None, step, detail)


def _set_clause(values: Mapping[str, object]) -> tuple[str, list[object]]:
    allowed = set(Job._fields) - {"job_id", "state", "created_at", "updated_at"}
    parts: list[str] = []
    params: list[object] = []
    for name, value in values.items():
        if name not in allowed:
            raise ValueError(f"not a job field: {name}")
        parts.append(f"{name} = ?")
        params.append(sanitize(value) if isinstance(value, str) else value)
    return ", ".join(parts), params


def transition(
    store: Store,
    job: Job,
    to: State,
    step: str,
    detail: Detail | None = None,
    *,
    operator: bool = False,
    also: Callable[[Connection], None] | None = None,
    **values: Unpack[JobUpdate],
) -> Job:
    """Move job to `to` (one transaction with its event). The row must still be in job.state
    and, when job holds a lease, still under that lease; otherwise LeaseLost."""
    check_transition(job.state, to, operator=operator)
    fresh = _update(store, job, to, step, detail, values, also)
    folders.remember_state(store.job_dir(job.job_id), fresh, store.folders_durable)
    return fresh


def record(
    store: Store,
    job: Job,
    step: str,
    detail: Detail | None = None,
    **values: Unpack[JobUpdate],
) -> Job:
    """Record a step result (and field changes) without changing state."""
    return _update(store, job, None, step, detail, values)


def _update(
    store: Store,
    job: Job,
    to: State | None,
    step: str,
    detail: Detail | None,
    values: JobUpdate,
    also: Callable[[Connection], None] | None = None,
) -> Job:
    with store.transaction() as conn:
        row = _write(store, conn, job, to, values)
        append_event(conn, job.job_id, job.state if to else None, to, step, detail)
        store.keep_folder(conn, job.job_id)
        if to in WAKES and row["lease_token"] is None:
            store.announce(conn)
        if also is not None:
            also(conn)
    return Job.from_row(row)


def _write(
    store: Store, conn: Connection, job: Job, to: State | None, values: Mapping[str, object]
) -> Row:
    """The job's row changed (its state to `to` unless None, and `values`) and as it now is,
    provided it is still in job.state and, when job holds a lease, under that lease;
    otherwise LeaseLost."""
    return _write_all(store, conn, {job.job_id: _Plan(job, to, dict(values))})[job.job_id]


def _write_all(store: Store, conn: Connection, plans: Mapping[str, _Plan]) -> dict[str, Row]:
    """`_write` of every plan; the UPDATEs of one shape (the same columns set, a lease or
    none) go together (`Store.changed_each`: one round trip on the shared store)."""
    shapes: dict[str, list[tuple[Job, list[object]]]] = {}
    for plan in plans.values():
        sql, args = _update_sql(plan.job, plan.to, plan.values)
        shapes.setdefault(sql, []).append((plan.job, args))
    rows: dict[str, Row] = {}
    for sql, each in shapes.items():
        ids = [job.job_id for job, _ in each]
        answers = store.changed_each(conn, sql, [args for _, args in each], ids)
        for (job, _), row in zip(each, answers, strict=True):
            if row is None:
                raise LeaseLost(
                    f"job {job.job_id}: no longer {job.state} under this worker's lease"
                )
            rows[job.job_id] = row
    return {job_id: rows[job_id] for job_id in plans}


def _update_sql(
    job: Job, to: State | None, values: Mapping[str, object]
) -> tuple[str, list[object]]:
    """The UPDATE of `_write` and its parameters."""
    sets, params = _set_clause(values)
    state = to or job.state
    sql = "UPDATE blog_publication SET state = ?, updated_at = ?" + (f", {sets}" if sets else "")
    sql += " WHERE job_id = ? AND state = ?"
    args: list[object] = [state.value, now(), *params, job.job_id, job.state.value]
    if job.lease_token is not None:
        sql += " AND lease_token = ?"
        args.append(job.lease_token)
    return sql, args


WAKES = frozenset({State.RECEIVED, State.READY_TO_COMMIT, State.LOCAL_COMMITTED})
"""States a job enters with work another worker may take at once: received (a scheduled
job come due, an operator's retry), ready to commit and deliver. A change into one of them
with no lease held (an operator's), and a lease given up on a job in one of them
(`leases.release_many`), wake the waiting workers (`Store.announce`); a submission does too
(`insert`). A holder's own change does not: no other worker can take that job, and every
one it woke would make a pass for nothing."""

NO_VALUES = cast(JobUpdate, MappingProxyType({}))  # shared: never mutated
"""A Move's field changes when it has none: shared by every Move, so read-only."""


class Move(NamedTuple):
    """One change of a batch (see `transition_all`): a transition, or with `to=None` an
    event and field changes in the job's current state, like `record`."""

    job: Job
    to: State | None
    step: str
    detail: Detail | None = None
    values: JobUpdate = NO_VALUES


class _Plan(NamedTuple):
    job: Job  # as the batch found it: the state and lease its row must still have
    to: State | None  # where its moves leave it (None: the state it was in)
    values: dict[str, object]  # every move's field changes, the later ones winning


def transition_all(
    store: Store, moves: Sequence[Move], also: Callable[[Connection], None] | None = None
) -> dict[str, Job]:
    """Several changes committed together: each is checked against the table and gets its
    own event, and either all of them happen or none. For bookkeeping over many jobs (a
    delivered batch, start-up recovery), where one durable commit per change would dominate.
    Two moves of one job chain: the second starts from the state the first left, and the
    row is written once, as the last leaves it. Returns the jobs as they now are."""
    plans: dict[str, _Plan] = {}
    events: list[_Event] = []
    for move in moves:
        plan = plans.get(move.job.job_id)
        start = (plan.to or plan.job.state) if plan else move.job.state
        if move.to is not None:
            check_transition(start, move.to)
        to = move.to or (plan.to if plan else None)
        values = {**(plan.values if plan else {}), **move.values}
        plans[move.job.job_id] = _Plan(plan.job if plan else move.job, to, values)
        events.append(
            _Event(move.job.job_id, start if move.to else None, move.to, move.step, move.detail)
        )
    if not plans and also is None:
        return {}
    with store.transaction() as conn:
        rows = _write_all(store, conn, plans)
        _append_events(conn, events)
        for job_id in plans:
            store.keep_folder(conn, job_id)
        if any(p.to in WAKES and rows[i]["lease_token"] is None for i, p in plans.items()):
            store.announce(conn)
        if also is not None:
            also(conn)
    fresh = {job_id: Job.from_row(row) for job_id, row in rows.items()}
    for job_id, plan in plans.items():
        if plan.to is not None:
            folders.remember_state(store.job_dir(job_id), fresh[job_id], store.folders_durable)
    return fresh


def insert(store: Store, conn: Connection, values: Mapping[str, object]) -> None:
    """A new job row (from intake, or remade by a rebuild) with what its folder holds; every
    text is sanitized."""
    names = [name for name in Job._fields if name in values]
    conn.execute(
        f"INSERT INTO blog_publication ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        [_stored(n, values[n]) for n in names],
    )
    store.keep_folder(conn, str(values["job_id"]))
    store.announce(conn)  # a submitted job: the waiting workers take it at once


_DIGESTS = frozenset(
    {"job_id", "idempotency_key", "source_sha256", "target_blob_sha256", "artifact_sha256"}
)
"""Columns that hold ids and hashes, never a writer's text: nothing there to sanitize."""


def _stored(column: str, value: object) -> object:
    return sanitize(value) if isinstance(value, str) and column not in _DIGESTS else value


def remember_prepared(store: Store, job: Job) -> None:
    folders.remember_prepared(store.job_dir(job.job_id), job, store.folders_durable)
