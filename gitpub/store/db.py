"""The job store's interface, and the embedded one: SQLite, its connection settings and
forward-only migrations.

No business logic lives here; `jobs` and `outbox` own the meaning of the rows."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from gitpub.core import clock
from gitpub.core.errors import GitpubError
from gitpub.core.ids import sha256_hex
from gitpub.store import unavailable
from gitpub.store.errors import Damaged, Duplicate, StoreError, Unavailable
from gitpub.store.schema import (
    HISTORY_TABLES,
    JOB_INDEXES,
    STORE_META,
    add_job_columns,
    create_job_table,
    statements,
)

FILE = "state.sqlite3"
"""The embedded store's database, in the node's state dir beside the job folders."""


def database_file(state_dir: Path) -> Path:
    return state_dir / FILE


class Row(Protocol):
    """A result row, read by column name or by position, as both stores hand them out."""

    def __getitem__(self, key: int | str, /) -> Any: ...
    def keys(self) -> list[str]: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Row | None: ...
    def fetchall(self) -> list[Row]: ...
    def __iter__(self) -> Iterator[Row]: ...


class Connection(Protocol):
    """What the queries of `gitpub.store` are run on, whichever store: SQLite's SQL with `?`
    parameters; every failure is a `gitpub.store.errors.StoreError`.

    `statements` counts what was sent on it (one per `execute`, one per row of an
    `executemany`, and a transaction's BEGIN and COMMIT): on a shared store each is a round
    trip to the server, the cost a fleet pays per job (tests/store/test_statements.py)."""

    statements: int

    def execute(self, sql: str, params: Sequence[object] = (), /) -> Cursor: ...
    def executemany(self, sql: str, seq: Iterable[Sequence[object]], /) -> Cursor: ...


def parts(values: Sequence[str], size: int = 500) -> Iterator[Sequence[str]]:
    """`values` in slices of at most `size`: one `IN (…)` list each, within what both stores
    take as a statement's parameters."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def scalar(conn: Connection, sql: str, params: Sequence[object] = ()) -> Any:
    """The first value of the one row `sql` answers (an aggregate, a PRAGMA, a sequence)."""
    row = conn.execute(sql, params).fetchone()
    if row is None:
        raise StoreError(f"no row for {sql!r}")  # every caller asks what always has one
    return row[0]


def _hash_keys(conn: Connection) -> None:
    """Version 3: idempotency keys become the SHA-256 of the raw key.

    Versions 1 and 2 stored keys sanitized, so two secret-looking keys could collide. Those rows'
    raw keys are unknown: each keeps its sanitized key for display, hashed as its key, and is
    marked legacy — a lookup of a raw key whose sanitized form differs from it falls back to
    legacy rows by display, so a client resubmitting an old key still finds its job.

    store_meta.created_at says when this database began: jobs older than it that it does not
    know betray a lost database (see gitpub.ops.rebuild)."""
    for statement in [*add_job_columns(3), STORE_META]:
        conn.execute(statement)
    rows = conn.execute("SELECT job_id, idempotency_key, created_at FROM blog_publication")
    earliest = ""
    for job_id, key, created_at in rows.fetchall():
        conn.execute(
            "UPDATE blog_publication SET idempotency_key = ?, key_display = ?, key_legacy = 1"
            " WHERE job_id = ?",
            (sha256_hex(key.encode("utf-8")), key, job_id),
        )
        earliest = min(earliest or created_at, created_at)
    conn.execute("INSERT INTO store_meta (name, value) VALUES ('created_at', ?)", (earliest,))


_MIGRATIONS: tuple[str | Callable[[Connection], None], ...] = (
    # version 1
    create_job_table(1) + ";" + JOB_INDEXES + HISTORY_TABLES,
    # version 2: `status` reads the newest finished jobs per state and jobs changed since a
    # moment through these, so its time does not grow with years of finished jobs. Additive
    # and idempotent: it only adds indexes.
    """
    CREATE INDEX IF NOT EXISTS blog_publication_state_updated
        ON blog_publication (state, updated_at);
    CREATE INDEX IF NOT EXISTS blog_publication_updated ON blog_publication (updated_at);
    """,
    # version 3
    _hash_keys,
    # version 4 (the columns each version adds: gitpub.store.schema.JOB_COLUMNS)
    ";".join(add_job_columns(4)),
    # version 5
    ";".join(add_job_columns(5))
    + """;
    CREATE INDEX IF NOT EXISTS blog_publication_scheduled
        ON blog_publication (state, scheduled_at);
    """,
)

SCHEMA_VERSION = len(_MIGRATIONS)


def migrate(conn: Connection, version: int, target: int) -> None:
    """Inside a transaction: the embedded schema from `version` to `target`, step by step."""
    for done in range(version, target):
        step = _MIGRATIONS[done]
        if callable(step):
            step(conn)
        else:
            for statement in statements(step):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {done + 1}")


def now() -> str:
    """UTC timestamp text that sorts lexicographically in time order (gitpub's clock)."""
    return at(clock.time())


def at(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> float:
    """Seconds since the epoch of a timestamp as `now` and `at` write it."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def _identity(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


class Claimed(NamedTuple):
    """A job's row just claimed, and the lease it had (a takeover when it had one)."""

    row: Row
    previous_owner: str | None
    previous_token: str | None


_LEASE_OF = (
    "SELECT lease_owner, lease_token, lease_expires_at FROM blog_publication WHERE job_id = ?"
)


class Store:
    """What every job store offers the rooms above it: a connection for reads, one
    transaction per unit of work, claims and fencing lease tokens, and the job folders kept.

    `SqliteStore` (the embedded default, `FILE` beside the job folders) and
    `gitpub.store.pg.PgStore` (a shared PostgreSQL store for fleets of workers) implement it;
    the queries of `gitpub.store` are written once, in the SQL both speak, and each store
    raises only `gitpub.store.errors`. `path` anchors the node's job folders
    (`path.parent / "jobs"`) whichever store holds the rows."""

    path: Path
    conn: Connection
    shared = False
    """True when other nodes share the rows: the job folders here are a cache of the store."""
    clone: str | None = None
    """On a shared store, this clone's id: hand edits (external_sync rows) are a checkout's
    own, registered and delivered by the clone they were made in, invisible to the others."""

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def twin(self) -> Store:
        """A shared store's other connection, for another thread of this process (one is
        never shared between threads); an embedded store is opened again instead
        (`context.sibling`)."""
        raise NotImplementedError

    def job_dir(self, job_id: str) -> Path:
        """The job's folder on this node (`Context.job_dir` for those holding a context)."""
        return self.path.parent / "jobs" / job_id

    @property
    def folders_durable(self) -> bool:
        """Whether this node's job folders are what survives a crash, so their records are
        synced to disk before they count. Not on a shared store: the transaction that refers
        to a file keeps it in the store, and a claim checks this disk's copy against it by
        hash (`gitpub.store.mirror`), so a sync here would buy nothing."""
        return not self.shared

    def lease_of(self, conn: Connection, job_id: str) -> Row | None:
        """Inside a claim's transaction: the job's lease columns, the row held for this
        claim; None when the job is gone. (SQLite's writers take turns, so the row is this
        transaction's anyway.)"""
        return conn.execute(_LEASE_OF, (job_id,)).fetchone()

    returning = True
    """Whether an UPDATE can hand back the rows it changed (`RETURNING`, SQLite 3.35 on)."""

    def changed_row(
        self, conn: Connection, sql: str, params: Sequence[object], job_id: str
    ) -> Row | None:
        """Inside a transaction: run `sql`, an UPDATE of the job's row, and answer the row as
        it now is (None: the UPDATE matched nothing), in one statement where the database
        can: a worker's every change would otherwise read the row it just wrote."""
        if self.returning:
            rows = conn.execute(sql + " RETURNING *", params).fetchall()
            return rows[0] if rows else None
        if conn.execute(sql, params).rowcount != 1:
            return None
        return conn.execute("SELECT * FROM blog_publication WHERE job_id = ?", (job_id,)).fetchone()

    def changed_each(
        self,
        conn: Connection,
        sql: str,
        params: Sequence[Sequence[object]],
        job_ids: Sequence[str],
    ) -> list[Row | None]:
        """`changed_row` of one UPDATE run once per job, each with its own parameters; the
        shared store sends them all in one round trip."""
        return [self.changed_row(conn, sql, p, j) for p, j in zip(params, job_ids, strict=True)]

    def changed_rows(
        self, conn: Connection, sql: str, params: Sequence[object], job_ids: Sequence[str]
    ) -> list[Row]:
        """`changed_row` for an UPDATE of several jobs' rows: those it changed, as they now
        are (without `RETURNING`: every row of `job_ids`, for the caller to tell apart)."""
        if self.returning:
            return conn.execute(sql + " RETURNING *", params).fetchall()
        if conn.execute(sql, params).rowcount == 0:
            return []
        marks = ", ".join("?" * len(job_ids))
        return conn.execute(
            f"SELECT * FROM blog_publication WHERE job_id IN ({marks})", job_ids
        ).fetchall()

    def lease_token(self, conn: Connection) -> str:
        """A fresh token for a claim, inside the claim's transaction."""
        import uuid  # here: `submit` and `status` never claim

        return uuid.uuid4().hex

    def claim_rows(
        self,
        conn: Connection,
        where: str,
        params: Sequence[object],
        lease: tuple[str, str],
        limit: int,
    ) -> list[Claimed]:
        """Inside a transaction: the lease `(owner, expires)` on the first `limit` jobs (oldest
        first) that `where` (a WHERE clause) picks, each with a fresh token; the rows as they
        now are, with the lease each one had. SQLite's writers take turns (BEGIN
        IMMEDIATE), so what the SELECT picked is still free when it is written."""
        picked = conn.execute(
            f"SELECT job_id, lease_owner, lease_token FROM blog_publication {where}"
            " ORDER BY created_at, job_id LIMIT ?",
            [*params, limit],
        ).fetchall()
        claimed: list[Claimed] = []
        for job_id, owner, token in picked:
            row = self.changed_row(
                conn,
                "UPDATE blog_publication SET lease_owner = ?, lease_token = ?,"
                " lease_expires_at = ? WHERE job_id = ?",
                (lease[0], self.lease_token(conn), lease[1], job_id),
                job_id,
            )
            if row is not None:
                claimed.append(Claimed(row, owner, token))
        return claimed

    def keep_folder(self, conn: Connection, job_id: str) -> None:
        """Inside a transaction that changes the job: make what its folder holds as durable as
        the change (the folder itself is the record on the embedded store)."""

    def fetch_folder(self, job_id: str) -> None:
        """Before a worker drives a job: its folder as the store last recorded it."""

    def fetch_folders(self, job_ids: Sequence[str]) -> None:
        """`fetch_folder` for several jobs at once (a batch of claims)."""

    def replaced(self) -> bool:
        return False

    def delivering_elsewhere(self) -> bool:
        """Whether another node holds the delivery lock right now (`fleet`), as a hint: a
        worker that finds it taken leaves its committed jobs to that node."""
        return False

    def announce(self, conn: Connection) -> None:
        """Inside a transaction that gives the fleet work (a job submitted, one due or ready
        again): wake the workers waiting for work (`wait`) once it commits."""

    def wait(self, timeout: float) -> bool:
        """Between two passes of a long-running worker: return once work may have come
        (True), or after `timeout` seconds (False). Only the shared store is told of work;
        here it is the pause itself."""
        time.sleep(timeout)
        return False

    def fleet(self, name: str) -> contextlib.AbstractContextManager[None]:
        """Lock `name` among every node of the store (only the shared store has others)."""
        return contextlib.nullcontext()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# SQLite's codes of a unique key's violation, and of a damaged file (its words: Python 3.10).
_UNIQUE = frozenset({2067, 1555})
_DAMAGED = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_DAMAGED_WORDS = ("malformed", "not a database", "file is encrypted")


def wrapped(exc: sqlite3.Error, path: Path) -> StoreError:
    """SQLite's failure as the store's own: a unique key's violation, the machine's trouble
    (full, failing, locked), or damage `doctor` knows how to recover."""
    words = str(exc)
    where = f"job database {path}"
    if isinstance(exc, sqlite3.IntegrityError):
        unique = getattr(exc, "sqlite_errorcode", None) in _UNIQUE or words.startswith("UNIQUE")
        return (Duplicate if unique else StoreError)(f"{where}: {words}", words)
    if not isinstance(exc, sqlite3.DatabaseError):
        return StoreError(f"{where}: {words}", words)  # a closed connection, a misuse
    fault = unavailable.classify(exc, path)
    if fault is not None:
        return fault
    code = getattr(exc, "sqlite_errorcode", None)
    if (code & 0xFF if isinstance(code, int) else None) in _DAMAGED or any(
        w in words for w in _DAMAGED_WORDS
    ):
        return Damaged(f"{where}: {words} (`git blogpub doctor` says how to recover it)", words)
    return StoreError(f"{where}: {words}", words)  # a query this database refuses


class _Cursor:
    __slots__ = ("_cursor", "_path")

    def __init__(self, cursor: sqlite3.Cursor, path: Path) -> None:
        self._cursor = cursor
        self._path = path

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    def fetchone(self) -> Row | None:
        try:
            row: Row | None = self._cursor.fetchone()
        except sqlite3.Error as exc:  # a damaged page is found while reading on
            raise wrapped(exc, self._path) from None
        return row

    def fetchall(self) -> list[Row]:
        try:
            rows: list[Row] = self._cursor.fetchall()
        except sqlite3.Error as exc:
            raise wrapped(exc, self._path) from None
        return rows

    def __iter__(self) -> Iterator[Row]:
        try:
            yield from self._cursor
        except sqlite3.Error as exc:
            raise wrapped(exc, self._path) from None


class SqliteConnection:
    """An `sqlite3` connection whose failures are the store's own exceptions."""

    __slots__ = ("path", "raw", "statements")

    def __init__(self, raw: sqlite3.Connection, path: Path) -> None:
        raw.row_factory = sqlite3.Row
        self.raw = raw
        self.path = path
        self.statements = 0

    def execute(self, sql: str, params: Sequence[object] = (), /) -> _Cursor:
        self.statements += 1
        try:
            return _Cursor(self.raw.execute(sql, params), self.path)
        except sqlite3.Error as exc:
            raise wrapped(exc, self.path) from None

    def executemany(self, sql: str, seq: Iterable[Sequence[object]], /) -> _Cursor:
        rows = list(seq)
        self.statements += len(rows)
        try:
            return _Cursor(self.raw.executemany(sql, rows), self.path)
        except sqlite3.Error as exc:
            raise wrapped(exc, self.path) from None

    def close(self) -> None:
        self.raw.close()


def connect(path: Path, *, create: bool = True) -> SqliteConnection:
    """A connection to the database file, without gitpub's settings or migrations: what
    `doctor` and a rebuild read before they trust it (`create=False`: never makes one)."""
    target, uri = (str(path), False) if create else (f"file:{path}?mode=rw", True)
    try:
        # isolation_level=None: transactions are explicit, one per unit of work.
        raw = sqlite3.connect(target, timeout=30.0, isolation_level=None, uri=uri)
    except sqlite3.Error as exc:
        raise wrapped(exc, path) from None
    return SqliteConnection(raw, path)


class SqliteStore(Store):
    """One connection to the embedded database. Open one per process or thread; never share."""

    conn: SqliteConnection
    returning = sqlite3.sqlite_version_info >= (3, 35, 0)

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unavailable.classify(exc, path) or exc from None
        self.conn = connect(path)
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA busy_timeout=30000")
            self._migrate()
            self._identity = _identity(path)
        except Unavailable:
            # A full disk or a failing filesystem is named as such, never as an unusable
            # (then "lost") database: the file is intact and must stay where it is.
            self.conn.close()
            raise
        except StoreError as exc:
            self.conn.close()
            raise Damaged(f"{path}: unusable job database: {exc.detail}", exc.detail) from None
        except BaseException:
            self.conn.close()
            raise

    def replaced(self) -> bool:
        """Whether the file this connection reads is no longer the one at its path (deleted
        with its state dir, or put back by someone): a long-running worker would otherwise
        keep working on an unlinked database no new submit ever reaches."""
        try:
            return _identity(self.path) != self._identity
        except OSError:
            return True

    def _migrate(self) -> None:
        with self.transaction():
            version = scalar(self.conn, "PRAGMA user_version")
            if version > SCHEMA_VERSION:
                raise GitpubError(
                    f"{self.path}: job database schema {version} is newer than this gitpub "
                    f"({SCHEMA_VERSION}); upgrade gitpub"
                )
            migrate(self.conn, version, SCHEMA_VERSION)
            if version == 0:
                # A new database: it knows every job from now on.
                self.conn.execute(
                    "UPDATE store_meta SET value = ? WHERE name = 'created_at'", (now(),)
                )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        """BEGIN IMMEDIATE … COMMIT: a writer's unit of work, rolled back on any error."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            if self.conn.raw.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()
