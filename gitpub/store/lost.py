"""Is the job database lost? Asked by every command before it trusts the database.

Each job folder (`jobs/<job_id>/` with its `source.txt`, and `job.json` since records exist)
is written before its row, and outlives it. A database that is missing, unreadable, or knows
no job at all while job folders older than the database itself lie beside it has lost them —
truncated, replaced, or deleted. Reading it as an empty store would let the same key be
submitted again and orphan every job in flight, so every command refuses instead and names
the one fix: `git blogpub reconcile --rebuild`, which rebuilds it from those folders.

A first submit writes its folder after the new database exists, so a database merely
younger than nothing, or a submit in progress, is never mistaken for a loss."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gitpub.core.errors import GitpubError
from gitpub.store.db import FILE, Connection, at, database_file, scalar
from gitpub.store.errors import StoreError, Unavailable

FIX = "run `git blogpub reconcile --rebuild`"
_JOB_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class DatabaseLost(GitpubError):
    """The job database lost the jobs whose folders remain."""

    def __init__(self, why: str) -> None:
        super().__init__(f"job database lost; {FIX} ({why})")
        self.why = why


def job_folders(state_dir: Path) -> list[Path]:
    """Every job folder holding a job's durable record (its source at least)."""
    root = state_dir / "jobs"
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.iterdir()
        if _JOB_ID.match(p.name) and ((p / "job.json").is_file() or (p / "source.txt").is_file())
    )


def folder_time(folder: Path) -> str:
    """When the job was submitted: its record's created_at, else its source file's mtime."""
    try:
        stamp = json.loads((folder / "job.json").read_bytes()).get("created_at")
        if isinstance(stamp, str) and stamp:
            return stamp
    except (OSError, ValueError, AttributeError):
        pass
    try:
        return at((folder / "source.txt").stat().st_mtime)
    except OSError:
        return ""


def why_lost(state_dir: Path, conn: Connection | None) -> str | None:
    """Why the database at `state_dir` counts as lost, or None when it does not.

    `conn` is an open connection to it, or None when it could not be opened (or is absent).
    Raises Unavailable when the machine, not the database, fails the read."""
    failure, row = None, None
    if conn is not None:
        try:
            # The common case, answered by one indexed read: a database that knows jobs.
            if scalar(conn, "SELECT EXISTS (SELECT 1 FROM blog_publication)"):
                return None
            row = conn.execute("SELECT value FROM store_meta WHERE name = 'created_at'").fetchone()
        except Unavailable:
            raise  # a full disk, a failing filesystem: says nothing of the database
        except StoreError as exc:
            failure = f"{FILE} unreadable: {exc.detail}"
    folders = job_folders(state_dir)
    if not folders:
        return None
    count = f"{len(folders)} job folder(s) remain"
    if conn is None:
        return f"no usable {FILE}, {count}"
    if failure:
        return f"{failure}, {count}"
    born = row[0] if row else ""
    older = [f for f in folders if born and folder_time(f) < born]
    if not older:
        return None  # a first submit under way (or one that died before its row): not a loss
    return f"{FILE} knows no job, {len(older)} older job folder(s) remain"


def check_absent(state_dir: Path) -> None:
    """Before a command would create a database: refuse when job folders say one existed."""
    if not database_file(state_dir).exists():
        why = why_lost(state_dir, None)
        if why:
            raise DatabaseLost(why)


def check(state_dir: Path, conn: Connection) -> None:
    why = why_lost(state_dir, conn)
    if why:
        raise DatabaseLost(why)
