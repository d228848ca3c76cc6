"""The embedded store speaks only the store's own language to the rooms above it: its failures
are `gitpub.store.errors`, never sqlite3's, and a row is read whole or not at all. In
process, on real SQLite files in a temporary folder; no git."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gitpub.core.errors import GitpubError, InternalError
from gitpub.core.states import State
from gitpub.store import jobs, reads
from gitpub.store.db import FILE, SqliteStore, connect, now
from gitpub.store.errors import Damaged, Duplicate, StoreError, Unavailable
from gitpub.store.jobs import Job, JobUpdate
from gitpub.store.schema import JOB_COLUMNS


def _job(job_id: str, key: str) -> dict[str, Any]:
    stamp = now()
    return {
        "job_id": job_id,
        "idempotency_key": key,
        "kind": "article",
        "state": State.RECEIVED.value,
        "source_sha256": "0" * 64,
        "source_path": f"jobs/{job_id}/source.txt",
        "max_attempts": 3,
        "created_at": stamp,
        "updated_at": stamp,
    }


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / FILE)


def test_a_second_row_with_one_key_is_a_duplicate(store: SqliteStore) -> None:
    with store.transaction() as conn:
        jobs.insert(store, conn, _job("a" * 8, "k" * 64))
    with pytest.raises(Duplicate) as raised, store.transaction() as conn:
        jobs.insert(store, conn, _job("b" * 8, "k" * 64))
    assert str(store.path) in raised.value.message
    assert [j.job_id for j in jobs.all_jobs(store)] == ["a" * 8]  # rolled back, nothing kept


def test_a_database_another_process_holds_is_unavailable_not_damaged(store: SqliteStore) -> None:
    other = connect(store.path)
    other.execute("BEGIN IMMEDIATE")
    try:
        mine = connect(store.path)
        mine.execute("PRAGMA busy_timeout = 0")
        with pytest.raises(Unavailable, match="locked by another process") as raised:
            mine.execute("BEGIN IMMEDIATE")
        assert "not lost" in raised.value.message
        mine.close()
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_file_that_is_no_database_is_damaged_and_says_how_to_recover(tmp_path: Path) -> None:
    path = tmp_path / FILE
    path.write_bytes(b"not a database at all, " * 200)
    with pytest.raises(Damaged, match="unusable job database: file is not a database"):
        SqliteStore(path)
    raw = reads.open_raw(path)
    with pytest.raises(Damaged) as raised:
        reads.health(raw)
    raw.close()
    assert "git blogpub doctor" in raised.value.message
    assert raised.value.detail == "file is not a database"


def test_no_sqlite3_exception_leaves_the_store(store: SqliteStore) -> None:
    """Every failure is a StoreError: a GitpubError the command line prints as one line."""
    rows = store.conn.execute("SELECT * FROM blog_publication")
    store.close()
    for attempt in (rows.fetchall, lambda: store.conn.execute("SELECT 1")):
        with pytest.raises(StoreError) as raised:
            attempt()
        assert isinstance(raised.value, GitpubError)
        assert not isinstance(raised.value, sqlite3.Error)
        assert "\n" not in raised.value.message


def test_a_row_without_a_column_is_refused_loudly(store: SqliteStore) -> None:
    with store.transaction() as conn:
        jobs.insert(store, conn, _job("a" * 8, "k" * 64))
    partial = store.conn.execute(
        "SELECT job_id, idempotency_key, kind, state FROM blog_publication"
    ).fetchone()
    assert partial is not None
    with pytest.raises(InternalError, match="without column.*source_sha256"):
        Job.from_row(partial)


def test_the_job_is_the_column_list(store: SqliteStore) -> None:
    """Job, JobUpdate and both stores' tables come from one list (gitpub.store.schema)."""
    names = tuple(c.name for c in JOB_COLUMNS)
    assert Job._fields == names
    assert set(JobUpdate.__annotations__) <= set(names)
    table = [r[1] for r in store.conn.execute("PRAGMA table_info(blog_publication)")]
    assert tuple(table) == names
