"""The similarity judge's inverted index: which articles hold each 3-gram, kept in one SQLite
file in the user cache and shared by every blog of the user.

An article is known by its git blob id (the same bytes are the same article in any clone),
numbered by `blobs.id`; `grams` holds, per 3-gram, the numbers of the articles whose body has
it, packed as unsigned 32-bit integers. Nothing here is a record: the file may be deleted at
any time, and an error opening or writing it is raised as `GramsUnavailable` for the caller
to fall back to reading the articles, as it did before the index existed."""

from __future__ import annotations

import array
import contextlib
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from gitpub.core.errors import GitpubError

VERSION = 1  # `PRAGMA user_version`: another value is another layout, and the file starts over
MAX_BLOBS = 250_000
"""Articles it holds at most: past that (old versions of edited articles, blogs long gone)
it starts over, and the blogs still served index their articles again."""

_CHUNK = 500  # values per `IN (…)`: below every SQLite build's variable limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    id INTEGER PRIMARY KEY,
    oid TEXT NOT NULL UNIQUE,
    n INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS grams (
    gram TEXT PRIMARY KEY,
    ids BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS views (
    view TEXT PRIMARY KEY,
    generation INTEGER NOT NULL,
    oids TEXT NOT NULL,
    numbers BLOB NOT NULL,
    counts BLOB NOT NULL,
    used REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""
VIEW_DAYS = 30  # a view (one clone's articles) unused this long is dropped

Known = dict[str, tuple[int, int]]
"""blob id → (its number in the postings, how many 3-grams its body has)"""


class GramsUnavailable(GitpubError):
    """The index file cannot be used now (read-only cache, full disk, a damaged file)."""


def _ids(data: bytes) -> array.array[int]:
    out = array.array("I")
    out.frombytes(data)
    if sys.byteorder == "big":
        out.byteswap()  # stored little-endian, whatever machine wrote the file
    return out


def _packed(ids: array.array[int]) -> bytes:
    if sys.byteorder == "big":
        ids = array.array("I", ids)
        ids.byteswap()
    return ids.tobytes()


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class GramIndex:
    """One open index file. Reads see one snapshot (`snapshot`); `add` is one transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._open()
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError):
                    raise
                # Not a database any more (a disk error, a stray write): it only ever held
                # what the articles give again, so it starts over.
                self.db.close()
                for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                    stale.unlink(missing_ok=True)
                self._open()
        except (sqlite3.Error, OSError) as exc:
            raise GramsUnavailable(f"{path}: {exc}") from None

    def _open(self) -> None:
        self.db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        self._setup()

    def _setup(self) -> None:
        db = self.db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost last write costs only time
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != VERSION:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DROP TABLE IF EXISTS blobs")
            db.execute("DROP TABLE IF EXISTS grams")
            db.execute(f"PRAGMA user_version = {VERSION}")
            db.execute("COMMIT")
        db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    def _guard(self, what: str, exc: BaseException) -> GramsUnavailable:
        return GramsUnavailable(f"{self.path}: {what}: {exc}")

    # ---------------------------------------------------------------------- reading

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """One consistent picture for the reads inside (WAL: writers go on meanwhile)."""
        try:
            self.db.execute("BEGIN")
        except sqlite3.Error as exc:
            raise self._guard("reading", exc) from None
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("COMMIT")

    def generation(self) -> int:
        """Bumped each time the index starts over: numbers of another generation are void."""
        row = self._one("SELECT value FROM meta WHERE key = 'generation'", ())
        return int(row[0]) if row else 0

    def view(self, name: str, generation: int) -> tuple[Known, dict[int, str]]:
        """What a view (one clone's articles, as `keep_view` last stored them) knows, when
        stored in this generation, and the same by number; else nothing."""
        row = self._one(
            "SELECT oids, numbers, counts FROM views WHERE view = ? AND generation = ?",
            (name, generation),
        )
        if row is None:
            return {}, {}
        oids = row[0].split("\n") if row[0] else []
        numbers, counts = _ids(row[1]), _ids(row[2])
        if not len(oids) == len(numbers) == len(counts):
            return {}, {}  # not as this module writes it: known again from `blobs`
        known = dict(zip(oids, zip(numbers, counts, strict=True), strict=True))
        return known, dict(zip(numbers, oids, strict=True))

    def known(self, oids: Iterable[str]) -> Known:
        """The articles among these blob ids that the index holds."""
        wanted = sorted(set(oids))
        out: Known = {}
        for part in _chunks(wanted):
            rows = self._all(
                f"SELECT oid, id, n FROM blobs WHERE oid IN ({_marks(len(part))})", part
            )
            out.update((oid, (number, n)) for oid, number, n in rows)
        return out

    def frequencies(self, grams: Iterable[str]) -> dict[str, int]:
        """3-gram → how many articles hold it (from the stored length alone)."""
        out: dict[str, int] = {}
        for part in _chunks(sorted(set(grams))):
            sql = f"SELECT gram, length(ids) FROM grams WHERE gram IN ({_marks(len(part))})"
            out.update((gram, size // 4) for gram, size in self._all(sql, part))
        return out

    def postings(self, grams: Iterable[str]) -> list[array.array[int]]:
        """The numbers of the articles holding each of these 3-grams."""
        out: list[array.array[int]] = []
        for part in _chunks(sorted(set(grams))):
            sql = f"SELECT ids FROM grams WHERE gram IN ({_marks(len(part))})"
            out.extend(_ids(data) for (data,) in self._all(sql, part))
        return out

    def _one(self, sql: str, args: Sequence[object]) -> tuple[Any, ...] | None:
        try:
            row: tuple[Any, ...] | None = self.db.execute(sql, args).fetchone()
        except sqlite3.Error as exc:
            raise self._guard("reading", exc) from None
        return row

    def _all(self, sql: str, args: Sequence[object]) -> list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise self._guard("reading", exc) from None

    # ---------------------------------------------------------------------- writing

    def _write(self, work: Callable[[], None]) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                work()
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._guard("writing", exc) from None

    def add(self, articles: Sequence[tuple[str, frozenset[str]]]) -> None:
        """Index articles (blob id, its body's 3-grams) in one transaction. One that another
        process added meanwhile is left as it is: its number twice in a posting would count
        its shared 3-grams twice."""
        self._write(lambda: self._add(articles))

    def _add(self, articles: Sequence[tuple[str, frozenset[str]]]) -> None:
        db = self.db
        (count,) = db.execute("SELECT count(*) FROM blobs").fetchone()
        if count + len(articles) > MAX_BLOBS:
            db.execute("DELETE FROM grams")
            db.execute("DELETE FROM blobs")
            db.execute("DELETE FROM views")
            db.execute(
                "INSERT INTO meta (key, value) VALUES ('generation', 1) "
                "ON CONFLICT (key) DO UPDATE SET value = value + 1"
            )
        already = set(self.known(oid for oid, _ in articles))
        new: dict[str, array.array[int]] = {}
        for oid, grams in articles:
            if oid in already:
                continue
            already.add(oid)
            cur = db.execute("INSERT INTO blobs (oid, n) VALUES (?, ?)", (oid, len(grams)))
            number = cur.lastrowid
            assert number is not None
            for gram in grams:
                ids = new.get(gram)
                if ids is None:
                    ids = new[gram] = array.array("I")
                ids.append(number)
        for part in _chunks(sorted(new)):
            sql = f"SELECT gram, ids FROM grams WHERE gram IN ({_marks(len(part))})"
            for gram, data in db.execute(sql, part):
                merged = _ids(data)
                merged.extend(new[gram])
                new[gram] = merged
        db.executemany(
            "INSERT OR REPLACE INTO grams (gram, ids) VALUES (?, ?)",
            ((gram, _packed(ids)) for gram, ids in new.items()),
        )

    def keep_view(self, name: str, known: Known, generation: int) -> None:
        """Store what a view knows now, unless the index started over since `generation`
        (its numbers would then name other articles); drop views long unused."""
        oids = sorted(known)
        numbers = array.array("I", (known[o][0] for o in oids))
        counts = array.array("I", (known[o][1] for o in oids))
        now = time.time()

        def work() -> None:
            if self.generation() != generation:
                return
            self.db.execute(
                "INSERT OR REPLACE INTO views (view, generation, oids, numbers, counts, used) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (name, generation, "\n".join(oids), _packed(numbers), _packed(counts), now),
            )
            self.db.execute("DELETE FROM views WHERE used < ?", (now - VIEW_DAYS * 86400,))

        self._write(work)
