"""The shared store on PostgreSQL (SPEC §13): the same rows, queries and promises as the
embedded store, for fleets of disposable workers.

One database may serve several blogs: each blog (its remote's repository, however a node's
remote URL spells it, and its branch) has a schema of its own, listed in
`public.gitpub_blog`, created and migrated on first use. The queries of `gitpub.store` are
written once, in the SQL SQLite speaks, and translated (`gitpub.store.dialect`); psycopg's
failures become the store's own (`gitpub.store.errors`), each one line that names the host
and the database, never the URL, which is a secret (`gitpub.store.url`).

What is not a row lives here too (`gitpub.store.mirror`): each job's folder — source, assets,
step answers, manifest, artifacts — so a worker in a fresh clone can drive any job."""

from __future__ import annotations

import contextlib
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union, cast

from gitpub.core import clock
from gitpub.core.errors import GitpubError
from gitpub.core.ids import sha256_hex
from gitpub.scan.sanitize import sanitize
from gitpub.store import mirror, url
from gitpub.store.blogs import Blog, find_schema, registry
from gitpub.store.db import Claimed, Cursor, Row, Store, at, now, parse_time, scalar
from gitpub.store.db import Connection as StoreConnection
from gitpub.store.dialect import translate
from gitpub.store.errors import Duplicate, StoreError, Unavailable
from gitpub.store.leases import lease_holder_dead

if TYPE_CHECKING:  # psycopg is imported when a shared store opens
    import psycopg
from gitpub.store.schema import PG_SCHEMA, PG_SCHEMA_VERSION, statements

IDLE_IN_TRANSACTION = "10s"
_REGISTRY_LOCK = 0x67697470  # pg_advisory_xact_lock key while a blog's schema is made
SCHEMA_VERSION = PG_SCHEMA_VERSION

_AGAIN = "run the command again once it is reachable (nothing uncommitted was kept)"
_CHECK_URL = "check GITPUB_STORE (or [store] url) and that the server accepts connections"
_ENCODE = "percent-encode what the password holds (% as %25, @ as %40, / as %2F, : as %3A)"
_SHAPE = "libpq reads postgresql://USER:PASSWORD@HOST:PORT/DATABASE?KEY=VALUE"


class PgRow:
    """A result row read by name or by position, as `sqlite3.Row` is."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: Sequence[Any]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, key: int | str, /) -> Any:
        return self._values[self._index[key] if isinstance(key, str) else key]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


DriverRow = Union[PgRow, "tuple[object, ...]"]
"""What the driver hands out: a PgRow for a query that answers columns, a tuple otherwise."""


def _rows(cursor: psycopg.Cursor[object]) -> Callable[[Sequence[object]], DriverRow]:
    # The names from the result itself: `cursor.description` would make a Column (and look
    # up its type) for every column of every statement's answer.
    result = cursor.pgresult
    if result is None or not result.nfields:
        return tuple
    index = {(result.fname(i) or b"").decode(): i for i in range(result.nfields)}
    return lambda values: PgRow(index, values)


def _param(value: object) -> object:
    return int(value) if isinstance(value, bool) else value


def _first_line(exc: BaseException) -> str:
    """libpq's message without its hint lines ("Is the server running …")."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def failure(exc: BaseException, dsn: str, *, opening: bool = False) -> StoreError:
    """psycopg's failure as the store's own, in one line naming the host and the database,
    with the advice for this store; every word of it masked."""
    import psycopg

    said = url.mask(_first_line(exc), dsn)
    store = f"shared store ({url.where(dsn)})"
    if opening and isinstance(exc, psycopg.ProgrammingError):
        # libpq could not even read the URL (it quotes the part it choked on).
        advice = _ENCODE if "percent" in said else _SHAPE
        message = f"{store}: GITPUB_STORE is not a URL libpq can read: {said}; {advice}"
        return StoreError(message, said)
    if opening:
        return Unavailable(f"{store}: cannot connect: {said}; {_CHECK_URL}", said)
    if isinstance(exc, psycopg.errors.UniqueViolation):
        return Duplicate(f"{store}: {said}", said)
    if isinstance(exc, psycopg.OperationalError):
        return Unavailable(f"{store}: {said}; {_AGAIN}", said)
    return StoreError(f"{store}: {said}", said)


class PgCursor:
    __slots__ = ("_conn", "_cursor")

    def __init__(self, cursor: psycopg.Cursor[DriverRow], conn: PgConnection) -> None:
        self._cursor = cursor
        self._conn = conn

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    def fetchone(self) -> Row | None:
        with self._conn.errors():
            row = self._cursor.fetchone()
        # Only a query that answers columns is fetched from: its rows are PgRows.
        return cast("Row | None", row)

    def fetchall(self) -> list[Row]:
        with self._conn.errors():
            rows = self._cursor.fetchall()
        return cast("list[Row]", rows)

    def __iter__(self) -> Iterator[Row]:
        with self._conn.errors():
            yield from self._cursor


class PgConnection:
    """The psycopg connection, speaking to `gitpub.store` as the embedded store's does."""

    def __init__(self, pg: psycopg.Connection[DriverRow], dsn: str) -> None:
        self.pg = pg
        self._dsn = dsn
        self.statements = 0

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            raise failure(exc, self._dsn) from None

    def execute(self, sql: str, params: Sequence[object] = (), /) -> Cursor:
        self.statements += 1
        with self.errors():
            return PgCursor(self.pg.execute(translate(sql), [_param(p) for p in params]), self)

    def returning_each(self, sql: str, seq: Sequence[Sequence[object]]) -> list[Row | None]:
        """`sql` (which returns rows) run once per parameter set, pipelined: one round trip
        for all; the first row each run returned, or None."""
        rows = [[_param(p) for p in ps] for ps in seq]
        self.statements += len(rows)
        answers: list[Row | None] = []
        with self.errors():
            cursor = self.pg.cursor()
            cursor.executemany(translate(sql), rows, returning=True)
            while True:
                answers.append(cast("Row | None", cursor.fetchone()))
                if not cursor.nextset():
                    break
        return answers

    def executemany(self, sql: str, seq: Iterable[Sequence[object]], /) -> Cursor:
        rows = [[_param(p) for p in ps] for ps in seq]
        self.statements += len(rows)
        with self.errors():
            cursor = self.pg.cursor()
            cursor.executemany(translate(sql), rows)
            return PgCursor(cursor, self)


class PgStore(Store):
    """One connection to the shared store, scoped to one blog. One per process or thread."""

    conn: PgConnection
    shared = True
    lock_seconds = 60.0
    """How long a fleet lock holds without its holder: the node's `[retry] lease_seconds`."""

    def __init__(self, dsn: str, state_dir: Path, blog: Blog, migrated: str | None = None) -> None:
        """`migrated`: the schema another connection of this process found (or brought) up to
        date for this blog (`twin`): neither found nor checked again."""
        try:
            import psycopg
        except ImportError:
            raise GitpubError(
                "GITPUB_STORE names PostgreSQL, but psycopg is not installed "
                "(pip install 'git-blogpub[postgresql]')"
            ) from None
        self.blog = blog
        try:
            pg = psycopg.connect(dsn, autocommit=True, row_factory=_rows, connect_timeout=30)
        except psycopg.Error as exc:
            raise failure(exc, dsn, opening=True) from None
        self.conn = PgConnection(pg, dsn)
        try:
            # A worker stopped inside a transaction (SIGSTOP, a paused container) would hold
            # its row locks for as long as it stays stopped, and a claim skips locked rows:
            # the server ends such a session instead (our transactions never wait on
            # anything), and the zombie, resumed, finds its connection gone, changes nothing.
            self.conn.execute(f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION}'")
            if migrated is None:
                self.schema = self._migrate()
                _align_clock(self.conn)
            else:
                self.schema = migrated
                self.conn.execute(f"SET search_path TO {migrated}")
        except BaseException:
            pg.close()
            raise
        # Never opened: it anchors this node's copies of the blog's job folders, apart from
        # the embedded store's (a node may leave the shared store and come back).
        self.state_dir = state_dir
        self.path = state_dir / "shared" / self.schema / "store"
        self.opened_at = time.time()
        self._files = mirror.Mirror(self.conn, self.path.parent / "jobs", self.opened_at)
        self._touched: set[str] = set()
        self._listening = False

    def changed_each(
        self,
        conn: StoreConnection,
        sql: str,
        params: Sequence[Sequence[object]],
        job_ids: Sequence[str],
    ) -> list[Row | None]:
        """One round trip for every job's UPDATE (a delivered batch's transitions)."""
        if len(params) < 2:
            return super().changed_each(conn, sql, params, job_ids)
        return self.conn.returning_each(sql + " RETURNING *", params)

    def twin(self) -> PgStore:
        """Another connection to this store, for another thread of this process: the schema
        and the clock were settled by this one (a thread opening it costs one connection and
        two statements, not a registry lock and a migration check each)."""
        twin = PgStore(self.conn._dsn, self.state_dir, self.blog, migrated=self.schema)
        twin.lock_seconds, twin.clone = self.lock_seconds, self.clone
        twin._files.share(self._files)
        return twin

    @property
    def identity(self) -> str:
        return self.blog.identity

    def _migrate(self) -> str:
        with self.conn.errors(), self.conn.pg.transaction():
            conn = self.conn
            conn.execute("SELECT pg_advisory_xact_lock(?)", (_REGISTRY_LOCK,))
            registry(conn)
            schema = find_schema(conn, self.blog)
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            conn.execute(f"SET search_path TO {schema}")
            known = conn.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = ?"
                " AND table_name = 'store_meta'",
                (schema,),
            ).fetchone()
            version = 0
            if known:
                row = conn.execute(
                    "SELECT value FROM store_meta WHERE name = 'schema_version'"
                ).fetchone()
                version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise GitpubError(
                    f"shared store: schema {version} of {schema} is newer than this "
                    f"gitpub ({SCHEMA_VERSION}); upgrade gitpub"
                )
            for target in range(version, SCHEMA_VERSION):
                for statement in statements(PG_SCHEMA[target]):
                    conn.execute(statement)
            if version == 0:
                self._register(schema)
            conn.execute(
                "INSERT INTO store_meta (name, value) VALUES ('schema_version', ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )
        return schema

    def _register(self, schema: str) -> None:
        stamp = now()
        self.conn.execute("INSERT INTO store_meta (name, value) VALUES ('created_at', ?)", (stamp,))
        self.conn.execute(
            "INSERT INTO public.gitpub_blog (schema_name, blog, created_at, identity_sha256)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (schema_name) DO NOTHING",
            (schema, sanitize(self.identity), stamp, sha256_hex(self.identity.encode())),
        )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[StoreConnection]:
        committed = False
        self.conn.statements += 2  # BEGIN and COMMIT (or ROLLBACK), which psycopg sends
        try:
            with self.conn.errors(), self.conn.pg.transaction():
                yield self.conn
                # Once per job, however many of its changes the transaction holds.
                if self._touched:
                    self._files.keep(self.conn, sorted(self._touched))
            committed = True
        finally:
            self._touched.clear()
            self._files.settle(committed)

    def lease_of(self, conn: StoreConnection, job_id: str) -> Row | None:
        """`FOR UPDATE SKIP LOCKED`: a row another worker is claiming this instant is
        skipped (None), not waited for."""
        return conn.execute(
            "SELECT lease_owner, lease_token, lease_expires_at FROM blog_publication"
            " WHERE job_id = ? FOR UPDATE SKIP LOCKED",
            (job_id,),
        ).fetchone()

    def lease_token(self, conn: StoreConnection) -> str:
        """From a sequence: a later claim always holds a larger token (`%020d`, so the text
        sorts as the number)."""
        value = scalar(conn, "SELECT nextval('blog_lease_token')")
        return f"{int(value):020d}"

    def claim_rows(
        self,
        conn: StoreConnection,
        where: str,
        params: Sequence[object],
        lease: tuple[str, str],
        limit: int,
    ) -> list[Claimed]:
        """One statement, whatever `limit`: the rows `where` picks are read `FOR UPDATE SKIP
        LOCKED` (a row another worker is claiming this instant is skipped, not waited for)
        and leased with tokens from the sequence; the old lease comes back beside the new."""
        rows = conn.execute(
            "WITH picked AS (SELECT job_id, lease_owner, lease_token FROM blog_publication"
            f" {where} ORDER BY created_at, job_id LIMIT ? FOR UPDATE SKIP LOCKED)"
            " UPDATE blog_publication SET lease_owner = ?,"
            " lease_token = lpad(nextval('blog_lease_token')::text, 20, '0'),"
            " lease_expires_at = ? FROM picked WHERE blog_publication.job_id = picked.job_id"
            " RETURNING blog_publication.*, picked.lease_owner AS previous_owner,"
            " picked.lease_token AS previous_token",
            [*params, limit, lease[0], lease[1]],
        ).fetchall()
        rows.sort(key=lambda r: (r["created_at"], r["job_id"]))
        return [Claimed(r, r["previous_owner"], r["previous_token"]) for r in rows]

    def delivering_elsewhere(self) -> bool:
        row = self.conn.execute(
            "SELECT holder FROM blog_fleet_lock WHERE name = 'delivery' AND expires_at >= ?",
            (now(),),
        ).fetchone()
        return row is not None and not lease_holder_dead(row[0].partition(" ")[0])

    def announce(self, conn: StoreConnection) -> None:
        """`NOTIFY` on the blog's channel, sent by the server when the transaction commits
        (several in one transaction are one)."""
        conn.execute(f"NOTIFY {self.schema}")

    def wait(self, timeout: float) -> bool:
        """`LISTEN` on the blog's channel (from the first wait on: a worker that never
        waits keeps no backlog), then the first notification, or `timeout`. Whatever came
        meanwhile (while the pass ran) answers at once, and all of it is drained: one wake
        for a burst of submissions."""
        if not self._listening:
            self.conn.execute(f"LISTEN {self.schema}")
            self._listening = True
        with self.conn.errors():
            woken = any(True for _ in self.conn.pg.notifies(timeout=timeout, stop_after=1))
            if woken:
                # A round trip first: the server sends every notification committed before
                # it ahead of its answer (the driver keeps them), so a burst whose last
                # part was still on the wire is drained too, not a second wake.
                self.conn.pg.execute("SELECT 1")
                for _ in self.conn.pg.notifies(timeout=0):
                    pass
        return woken

    def keep_folder(self, conn: StoreConnection, job_id: str) -> None:
        self._touched.add(job_id)  # sent when the transaction ends, in it

    def fetch_folder(self, job_id: str) -> None:
        self._files.fetch([job_id])

    def fetch_folders(self, job_ids: Sequence[str]) -> None:
        self._files.fetch(job_ids)

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
                    "SELECT holder FROM blog_fleet_lock WHERE name = ? FOR UPDATE SKIP LOCKED",
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
                        holder[0] if dead and holder else None,  # a dead holder's, else none
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


def _align_clock(conn: StoreConnection) -> None:
    """Leases expire by the database's clock: gitpub's clock in this process follows it, so
    nodes whose clocks disagree still agree on when a lease ran out."""
    before = time.time()
    value = scalar(conn, "SELECT EXTRACT(EPOCH FROM clock_timestamp())")
    after = time.time()
    clock.align(float(value) - (before + after) / 2)
