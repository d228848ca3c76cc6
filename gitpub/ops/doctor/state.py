"""doctor's checks of the job state: the database, the locks, the leases and what jobs left in
the repository (worktrees, branches, job refs)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

from gitpub.config import Config
from gitpub.core import clock
from gitpub.core.states import State
from gitpub.git import trailers
from gitpub.git.locks import ORDER, Locks
from gitpub.git.repo import Repo
from gitpub.ops import cleanup, worker
from gitpub.ops.doctor import holders
from gitpub.ops.doctor.report import OK, PROBLEM, WARNING, Report, some
from gitpub.scan.sanitize import sanitize
from gitpub.store import leases, lost, reads
from gitpub.store.db import FILE, SCHEMA_VERSION, Connection, Row, database_file, now, parse_time
from gitpub.store.errors import StoreError, Unavailable


@contextlib.contextmanager
def shared_database(report: Report, repo: Repo, cfg: Config) -> Iterator[Connection | None]:
    """The shared store's view of this blog (every node's jobs); None when unreachable."""
    from gitpub.context import open_shared
    from gitpub.core.errors import GitpubError

    try:
        store = open_shared(repo, cfg)
    except GitpubError as exc:
        report.add("database", PROBLEM, exc.message, "check GITPUB_STORE or [store] url")
        yield None
        return
    try:
        count = reads.count(store.conn)
        blog = sanitize(store.blog.identity)  # the remote as git reads it: every spelling's
        report.add(
            "database", OK, f"shared store, blog {blog} (schema {store.schema}): {count} job(s)"
        )
        yield store.conn
    finally:
        store.close()


_REBUILD = "git blogpub reconcile --rebuild (rebuilds it from the job folders)"


@contextlib.contextmanager
def database(report: Report, repo: Repo) -> Iterator[Connection | None]:
    """The job database after `PRAGMA integrity_check`; None when absent or unusable.

    Opened without gitpub's Store: that would create a missing one and migrate an old one."""
    path = database_file(repo.state_dir)
    if not path.is_file():
        why = lost.why_lost(repo.state_dir, None)
        if why:
            report.add("database", PROBLEM, f"job database lost: {why}", _REBUILD)
        else:
            report.add("database", OK, "no job database yet (the first submit makes it)")
        yield None
        return
    conn = None
    try:
        try:
            conn = reads.open_raw(path)
            health = reads.health(conn)
        except StoreError as exc:
            _open_failed(report, repo, path, exc)
            yield None
            return
        yield conn if _usable(report, repo, path, conn, health) else None
    finally:
        if conn is not None:
            conn.close()


def _recover(path: Path) -> str:
    """How a person recovers what SQLite can still read of a damaged database."""
    return (
        f"stop every gitpub worker; in {path.parent}: `sqlite3 {FILE} .recover | sqlite3 "
        "recovered.sqlite3`, check it with `sqlite3 recovered.sqlite3 'PRAGMA integrity_check'`, "
        f"move {FILE} (and its -wal, -shm files) aside and recovered.sqlite3 in its place"
    )


def _open_failed(report: Report, repo: Repo, path: Path, exc: StoreError) -> None:
    """What stopped the database from being opened or read, and what to do about it."""
    if isinstance(exc, Unavailable):
        # The machine's trouble (a full disk, a failing filesystem): no rebuild, no
        # recovery of a database that is intact.
        words, fix = exc.message.split("; the database itself is not lost: ", 1)
        report.add("database", PROBLEM, f"{words}; not lost", fix)
        return
    report.add(
        "database",
        PROBLEM,
        f"{_lost(repo)}{path}: unusable: {exc.detail}",
        _fix(repo, _recover(path)),
    )


def _usable(
    report: Report,
    repo: Repo,
    path: Path,
    conn: Connection,
    health: tuple[list[str], list[object], int],
) -> bool:
    """Whether doctor reads on from the database: it passed its integrity check, is of a schema
    this gitpub reads and no stand-in for a lost one (`reads.health`); what is wrong with it is
    reported, and so are rows that refer to jobs that do not exist."""
    rows, broken_links, version = health
    if rows != ["ok"]:
        first = str(rows[0]).splitlines()
        detail = next((line for line in first if not line.startswith("***")), first[0])
        report.add(
            "database",
            PROBLEM,
            f"{_lost(repo)}{path}: integrity check failed: {detail}",
            _fix(repo, _recover(path)),
        )
        return False
    if version > SCHEMA_VERSION:
        report.add(
            "database",
            PROBLEM,
            f"{path}: schema {version} is newer than this gitpub's ({SCHEMA_VERSION})",
            "upgrade gitpub on this machine",
        )
        return False
    why = lost.why_lost(repo.state_dir, conn) if version >= 2 else None
    if why:
        report.add("database", PROBLEM, f"job database lost: {why}", _REBUILD)
        return False
    if broken_links:
        report.add(
            "database",
            PROBLEM,
            f"{path}: {len(broken_links)} row(s) refer to jobs that do not exist",
            _recover(path),
        )
    else:
        report.add("database", OK, f"{path}: integrity check ok (schema {version})")
    return True


def _lost(repo: Repo) -> str:
    return "job database lost: " if lost.job_folders(repo.state_dir) else ""


def _fix(repo: Repo, recover: str) -> str:
    """A broken database beside job folders can also be rebuilt from them."""
    if not lost.job_folders(repo.state_dir):
        return recover
    return f"{recover}; or rebuild it from the job folders: git blogpub reconcile --rebuild"


def check_locks(report: Report, repo: Repo, known: dict[str, Row]) -> None:
    folder = repo.state_dir / "locks"
    present = [n for n in ORDER if (folder / f"{n}.lock").is_file()]
    if not present:
        report.add("locks", OK, "no lock taken yet")
        return
    locks = Locks(folder)
    db_file = database_file(repo.state_dir)
    expired = _expired_leases(known)
    for name in present:
        if locks.is_free(name):
            continue
        who = holders.holder(locks.path(name), db_file)
        _report_holder(report, name, who, expired)
    if not any(f.check == "locks" for f in report.findings):
        report.add(
            "locks", OK, f"free: {', '.join(present)} (lock files stay on disk; that is normal)"
        )


def _report_holder(
    report: Report, name: str, who: holders.Holder | None, expired: dict[int, str]
) -> None:
    lock = f"the {name} lock"
    if who is None or who.pid is None:
        where = "on this platform" if who is None else "from here (another host or container?)"
        report.add(
            "locks",
            WARNING,
            f"{lock} is held by a process that cannot be seen {where}",
            f"if no gitpub command runs anywhere, find the process holding {name}.lock and stop it",
        )
        return
    ps = f"ps -o pid,etime,args -p {who.pid}"
    args = f" ({who.args})" if who.args else ""
    if who.pid in expired:
        report.add(
            "locks",
            PROBLEM,
            f"{lock} is held by pid {who.pid}{args}, which stopped renewing its lease on job "
            f"{expired[who.pid]}: it looks stuck",
            f"check it with `{ps}`; if it hangs, `kill {who.pid}` (the next worker takes over)",
        )
    elif who.gitpub is False:
        report.add(
            "locks",
            PROBLEM,
            f"{lock} is held by pid {who.pid}{args}, which is not a gitpub process: gitpub "
            "commands that need it wait for it",
            f"see what it is with `{ps}`; stop it (`kill {who.pid}`) if it should not hold "
            f"{name}.lock",
        )
    else:
        report.add("locks", OK, f"{lock} is held by pid {who.pid}{args}, at work")


def _expired_leases(known: dict[str, Row]) -> dict[int, str]:
    """Local pid → a job whose lease that (live) process holds but no longer renews."""
    out: dict[int, str] = {}
    stamp, host = now(), socket.gethostname()
    for job_id, row in known.items():
        owner = row["lease_owner"] or ""
        if row["lease_token"] and row["lease_expires_at"] and row["lease_expires_at"] < stamp:
            owner_host, _, pid = owner.rpartition(":")
            if owner_host == host and pid.isdigit():
                out[int(pid)] = job_id
    return out


_DRIVEN = frozenset(worker.ACTIVE) | {State.RETRY_WAIT, State.FAILED}
"""States a worker still moves a job out of: a stale lease there holds the job up."""


def check_withdrawn(report: Report, known: dict[str, Row]) -> None:
    """Publications taken off the remote branch since (a takedown): never pushed back."""
    # A row: `in` looks at values, keys() at columns (an old schema has no such column).
    gone = [i for i, r in known.items() if "withdrawn_at" in r.keys() and r["withdrawn_at"]]  # noqa: SIM118
    if gone:
        report.add(
            "withdrawn",
            WARNING,
            f"{len(gone)} published job(s) were taken off the remote branch since "
            f"({', '.join(i[:8] for i in gone[:5])}); gitpub will not push them back",
            "nothing to do for a takedown; `git blogpub retry JOB` publishes one again",
        )


def check_leases(report: Report, known: dict[str, Row]) -> None:
    stamp, bad = now(), 0
    take_over = "git blogpub run --until-idle (or git blogpub reconcile) takes the job over"
    for job_id, row in known.items():
        owner, expires = row["lease_owner"], row["lease_expires_at"]
        if not row["lease_token"] or State(row["state"]) not in _DRIVEN:
            continue
        job = f"job {job_id} ({row['state']})"
        if leases.lease_holder_dead(owner):
            report.add(
                "leases",
                PROBLEM,
                f"{job}: leased by {owner}, a process that no longer runs",
                take_over,
            )
        elif expires and expires < stamp:
            ago = clock.time() - parse_time(expires)
            host, _, pid = (owner or "").rpartition(":")
            look = (
                f"ps -o pid,etime,args -p {pid}"
                if host == socket.gethostname()
                else f"the worker on {host or 'its host'}"
            )
            report.add(
                "leases",
                PROBLEM,
                f"{job}: the lease of {owner} expired {ago:.0f} s ago and no worker took it over",
                f"check {look}: it may hang; {take_over}",
            )
        else:
            continue
        bad += 1
    if not bad:
        report.add("leases", OK, "no stale job lease")


def check_leftovers(report: Report, repo: Repo, cfg: Config, known: dict[str, Row]) -> None:
    """Orphan job worktrees and branches, finished jobs' leftovers, job refs without a job."""
    inv = cleanup.inventory(repo, repo.state_dir)
    infos = {i: cleanup.JobInfo(State(r["state"]), r["updated_at"]) for i, r in known.items()}
    p = cleanup.plan(repo, repo.state_dir, inv, infos, cfg.gc.keep_days, clock.time())
    orphans = sorted(i for i, why in p.worktrees.items() if i not in known)
    finished = sorted(i for i in p.worktrees if i in known)
    if orphans:
        report.add(
            "worktrees",
            PROBLEM,
            f"job worktrees or branches of jobs the database does not know: {some(orphans)}",
            "git blogpub gc (removes them; their commits stay in refs/blog-jobs/ if any)",
        )
    if finished:
        report.add(
            "worktrees",
            WARNING,
            f"finished jobs still have a worktree or branch: {some(finished)}",
            "git blogpub gc",
        )
    if not orphans and not finished:
        report.add("worktrees", OK, f"{len(p.kept)} unfinished job(s) with a worktree, no orphans")
    if any(i not in known for i in p.folders):
        report.add(
            "worktrees",
            WARNING,
            f"job folders without a job (a submit died before its row): {some(p.folders)}",
            "git blogpub gc",
        )
    stray = sorted(i for i in inv.refs if i not in known)
    if stray:
        report.add(
            "job refs",
            PROBLEM,
            f"{len(stray)} job ref(s) whose job is not in the database: "
            + some([trailers.job_ref(i) for i in stray]),
            f"was the database replaced? inspect with `git log -1 {trailers.job_ref(stray[0])}`; "
            f"git blogpub gc removes such refs once their commit is {cfg.gc.keep_days:g} days old "
            "(cleanup.keep_days)",
        )
    else:
        report.add("job refs", OK, f"{len(inv.refs)} job ref(s), each with its job")
