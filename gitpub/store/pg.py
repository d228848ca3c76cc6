"""The shared store on PostgreSQL (SPEC §13): the same rows, queries and promises as the
embedded store, for fleets of disposable workers.

One database may serve several blogs: each blog (its remote URL without credentials, and its
branch) has a schema of its own, listed in `public.gitpub_blog`, created and migrated on
first use. The queries of `gitpub.store` are written once, in the SQL SQLite speaks; this
connection translates the few spellings PostgreSQL says otherwise, and PostgreSQL's
exceptions into the DB-API types the rooms above already handle.

What is not a row lives here too (`gitpub.store.mirror`): each job's folder — source, assets,
step answers, manifest, artifacts — so a worker in a fresh clone can drive any job."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from gitpub.core import clock
from gitpub.core.errors import GitpubError
from gitpub.core.ids import sha256_hex
from gitpub.scan.sanitize import sanitize
from gitpub.store import mirror
from gitpub.store.db import HISTORY_TABLES, Store, at, now, parse_time
from gitpub.store.leases import lease_holder_dead

_JSON_FIELD = re.compile(r"json_extract\((\w+), '\$\.(\w+)'\)")
IDLE_IN_TRANSACTION = "10s"
_REGISTRY_LOCK = 0x67697470  # pg_advisory_xact_lock key while a blog's schema is made


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """A query of `gitpub.store` as PostgreSQL reads it."""
    sql = sql.replace("%", "%%").replace("?", "%s")
    sql = _JSON_FIELD.sub(r"(\1::jsonb ->> '\2')", sql)
    if sql.startswith("INSERT OR IGNORE "):
        sql = "INSERT " + sql[len("INSERT OR IGNORE ") :] + " ON CONFLICT DO NOTHING"
    return sql


class Row:
    """A result row read by name or by position, as `sqlite3.Row` is."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: Sequence[Any]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        return self._values[self._index[key] if isinstance(key, str) else key]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def _rows(cursor: Any) -> Any:
    description = cursor.description
    if description is None:
        return tuple
    index = {column.name: i for i, column in enumerate(description)}
    return lambda values: Row(index, values)


def _param(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


class Connection:
    """The psycopg connection, speaking to `gitpub.store` as an `sqlite3.Connection` does."""

    def __init__(self, pg: Any) -> None:
        self.pg = pg

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with _translated_errors():
            return self.pg.execute(translate(sql), [_param(p) for p in params])

    def executemany(self, sql: str, seq: Sequence[Sequence[Any]]) -> Any:
        with _translated_errors():
            cursor = self.pg.cursor()
            cursor.executemany(translate(sql), [[_param(p) for p in ps] for ps in seq])
            return cursor


@contextlib.contextmanager
def _translated_errors() -> Iterator[None]:
    import psycopg

    try:
        yield
    except psycopg.IntegrityError as exc:
        raise sqlite3.IntegrityError(sanitize(str(exc))) from None
    except psycopg.OperationalError as exc:
        raise sqlite3.OperationalError(sanitize(str(exc))) from None


def blog_identity(remote_url: str, branch: str) -> str:
    """The blog as every node names it: the remote's URL without credentials or a trailing
    slash, and the published branch."""
    parts = urlsplit(remote_url)
    if parts.scheme and parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        remote_url = urlunsplit((parts.scheme, host, parts.path, parts.query, ""))
    return f"{remote_url.rstrip('/')}#{branch}"


def schema_name(identity: str) -> str:
    return "blog_" + sha256_hex(identity.encode("utf-8"))[:20]


_SCHEMA: tuple[str, ...] = (
    # version 1: the embedded store's schema 5, plus what a disposable worker needs from the
    # store rather than from its disk. `rowid` orders rows as SQLite's does.
    """
    CREATE TABLE blog_publication (
        job_id TEXT PRIMARY KEY,
        idempotency_key TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('article', 'topic')),
        state TEXT NOT NULL,
        failure_code TEXT,
        source_sha256 TEXT NOT NULL,
        source_path TEXT NOT NULL,
        topic TEXT,
        base_commit TEXT,
        target_path TEXT,
        target_blob_sha256 TEXT,
        artifact_dir TEXT,
        artifact_sha256 TEXT,
        local_commit TEXT,
        remote_commit TEXT,
        attempt INTEGER NOT NULL DEFAULT 0,
        max_attempts INTEGER NOT NULL,
        next_retry_at TEXT,
        last_recheck_head TEXT,
        last_recheck_delta_sha TEXT,
        lease_owner TEXT,
        lease_token TEXT,
        lease_expires_at TEXT,
        requested_target TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        key_display TEXT NOT NULL DEFAULT '',
        key_legacy INTEGER NOT NULL DEFAULT 0,
        withdrawn_at TEXT,
        scheduled_at TEXT,
        review INTEGER NOT NULL DEFAULT 0,
        review_branch TEXT,
        rowid BIGSERIAL NOT NULL
    );
    CREATE INDEX blog_publication_source ON blog_publication (source_sha256);
    CREATE INDEX blog_publication_state ON blog_publication (state, next_retry_at);
    CREATE INDEX blog_publication_state_updated ON blog_publication (state, updated_at, rowid);
    CREATE INDEX blog_publication_updated ON blog_publication (updated_at, rowid);
    CREATE INDEX blog_publication_scheduled ON blog_publication (state, scheduled_at);
    """
    + HISTORY_TABLES
    + """
    CREATE TABLE store_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE SEQUENCE blog_lease_token;
    CREATE TABLE blog_job_file (
        job_id TEXT NOT NULL REFERENCES blog_publication (job_id),
        name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        data BYTEA NOT NULL,
        PRIMARY KEY (job_id, name)
    );
    CREATE TABLE blog_fleet_lock (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    CREATE TABLE blog_step_spool (
        job_id TEXT NOT NULL,
        name TEXT NOT NULL,
        owner TEXT NOT NULL,
        started_at TEXT NOT NULL,
        status TEXT,
        answer BYTEA,
        PRIMARY KEY (job_id, name)
    );
    """,
)

SCHEMA_VERSION = len(_SCHEMA)


class PgStore(Store):
    """One connection to the shared store, scoped to one blog. One per process or thread."""

    shared = True
    skip_locked = " FOR UPDATE SKIP LOCKED"
    lock_seconds = 60.0
    """How long a fleet lock holds without its holder: the node's `[retry] lease_seconds`."""

    def __init__(self, url: str, state_dir: Path, identity: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise GitpubError(
                "GITPUB_STORE names PostgreSQL, but psycopg is not installed "
                "(pip install 'git-blogpub[postgresql]')"
            ) from None
        self.identity = identity
        self.schema = schema_name(identity)
        # Never opened: it anchors this node's copies of the blog's job folders, apart from
        # the embedded store's (a node may leave the shared store and come back).
        self.path = state_dir / "shared" / self.schema / "store"
        try:
            pg = psycopg.connect(url, autocommit=True, row_factory=_rows, connect_timeout=30)
        except psycopg.Error as exc:
            why = " ".join(sanitize(str(exc)).split())  # libpq's hint line: one line
            raise GitpubError(f"shared store: cannot connect: {why}") from None
        self.conn = Connection(pg)
        # A worker stopped inside a transaction (SIGSTOP, a paused container) would hold its
        # row locks for as long as it stays stopped, and a claim skips locked rows: the
        # server ends such a session instead (our transactions never wait on anything), and
        # the zombie, resumed, finds its connection gone and changes nothing.
        pg.execute(f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION}'")
        self.opened_at = time.time()
        self._files = mirror.Mirror(self.conn, self.path.parent / "jobs", self.opened_at)
        self._touched: set[str] = set()
        try:
            self._migrate()
            _align_clock(self.conn)
        except BaseException:
            pg.close()
            raise

    def _migrate(self) -> None:
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(?)", (_REGISTRY_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS public.gitpub_blog (schema_name TEXT PRIMARY KEY,"
                " blog TEXT NOT NULL, created_at TEXT NOT NULL)"
            )
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
            conn.execute(f"SET search_path TO {self.schema}")
            known = conn.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = ?"
                " AND table_name = 'store_meta'",
                (self.schema,),
            ).fetchone()
            version = 0
            if known:
                row = conn.execute(
                    "SELECT value FROM store_meta WHERE name = 'schema_version'"
                ).fetchone()
                version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise GitpubError(
                    f"shared store: schema {version} of {self.schema} is newer than this "
                    f"gitpub ({SCHEMA_VERSION}); upgrade gitpub"
                )
            for target in range(version, SCHEMA_VERSION):
                for statement in _SCHEMA[target].split(";"):
                    if statement.strip():
                        conn.execute(statement)
            if version == 0:
                stamp = now()
                conn.execute(
                    "INSERT INTO store_meta (name, value) VALUES ('created_at', ?)", (stamp,)
                )
                conn.execute(
                    "INSERT INTO public.gitpub_blog (schema_name, blog, created_at)"
                    " VALUES (?, ?, ?) ON CONFLICT (schema_name) DO NOTHING",
                    (self.schema, sanitize(self.identity), stamp),
                )
            conn.execute(
                "INSERT INTO store_meta (name, value) VALUES ('schema_version', ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        committed = False
        try:
            with _translated_errors(), self.conn.pg.transaction():
                yield self.conn
                # Once per job, however many of its changes the transaction holds.
                for job_id in sorted(self._touched):
                    self._files.keep(self.conn, job_id)
            committed = True
        finally:
            self._touched.clear()
            self._files.settle(committed)

    def lease_token(self, conn: Any) -> str:
        """From a sequence: a later claim always holds a larger token (`%020d`, so the text
        sorts as the number)."""
        value = conn.execute("SELECT nextval('blog_lease_token')").fetchone()[0]
        return f"{int(value):020d}"

    def keep_folder(self, conn: Any, job_id: str) -> None:
        self._touched.add(job_id)  # sent when the transaction ends, in it

    def fetch_folder(self, job_id: str) -> None:
        self._files.fetch(job_id)

    @contextlib.contextmanager
    def fleet(self, name: str) -> Iterator[None]:
        """Lock `name` (`delivery`: one pusher of the blog's branch at a time) among the
        nodes, as a lease that runs out: a node stopped while holding it (not dead, so its
        connection lives on) holds up the others for one lease at most. Only `delivery` is
        fleet-wide; the other locks guard this clone alone."""
        if name != "delivery":
            yield
            return
        # "host:pid token": a holder that died on this host is overridden at once, as a
        # job's lease is (a crashed worker cannot release it).
        token = f"{socket.gethostname()}:{os.getpid()} {uuid.uuid4().hex}"
        while True:
            stamp = now()
            with self.transaction() as conn:
                conn.execute(
                    "INSERT INTO blog_fleet_lock (name, holder, expires_at) VALUES (?, '', '')"
                    " ON CONFLICT (name) DO NOTHING",
                    (name,),
                )
                holder = conn.execute(
                    "SELECT holder FROM blog_fleet_lock WHERE name = ?" + self.skip_locked,
                    (name,),
                ).fetchone()
                dead = holder is not None and lease_holder_dead(holder[0].partition(" ")[0])
                got = conn.execute(
                    "UPDATE blog_fleet_lock SET holder = ?, expires_at = ?"
                    " WHERE name = ? AND (expires_at < ? OR holder = ?)",
                    (
                        token,
                        at(parse_time(stamp) + self.lock_seconds),
                        name,
                        stamp,
                        holder[0] if dead else None,  # a dead holder's row, else no row
                    ),
                ).rowcount
            if got == 1:
                break
            time.sleep(0.05)
        try:
            yield
        finally:
            with self.transaction() as conn:
                conn.execute(
                    "UPDATE blog_fleet_lock SET expires_at = '' WHERE name = ? AND holder = ?",
                    (name, token),
                )

    def close(self) -> None:
        self.conn.pg.close()


def _align_clock(conn: Connection) -> None:
    """Leases expire by the database's clock: gitpub's clock in this process follows it, so
    nodes whose clocks disagree still agree on when a lease ran out."""
    before = time.time()
    value = conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()[0]
    after = time.time()
    clock.align(float(value) - (before + after) / 2)
