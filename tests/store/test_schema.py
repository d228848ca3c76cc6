"""One schema, two dialects, on the real databases: after every migration of the embedded
store each of its tables holds only columns the shared store's has, with the same type,
nullability and default, and once migrated they are the same tables; every query the store
speaks is accepted by both (EXPLAIN on SQLite, translated and EXPLAINed on PostgreSQL)."""

from __future__ import annotations

import ast
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from testing.paths import ROOT

from gitpub.store.blogs import Blog
from gitpub.store.db import FILE, SCHEMA_VERSION, SqliteStore, connect, migrate
from gitpub.store.dialect import translate
from gitpub.store.pg import PgStore

SHARED_ONLY_TABLES = {"blog_job_file", "blog_fleet_lock", "blog_step_spool"}
SHARED_ONLY_COLUMNS = {("blog_publication", "rowid")}  # SQLite's own is implicit
SHARED_ONLY_MODULES = {"pg.py", "blogs.py", "mirror.py", "spools.py"}
# Not the job store's: the similarity judge's 3-gram index, a SQLite file of its own in the
# user cache (never on PostgreSQL, never in the store's schema).
CACHE_MODULES = {"grams.py"}
Column = tuple[str, bool, str | None, bool]  # type, not null, default, in the primary key


@pytest.fixture
def pg_store(pg_url: str, tmp_path: Path) -> Iterator[PgStore]:
    blog = Blog(f"https://schema-test.invalid/{uuid.uuid4().hex}", "main")
    store = PgStore(pg_url, tmp_path, blog)
    try:
        yield store
    finally:
        store.conn.pg.execute(f"DROP SCHEMA {store.schema} CASCADE")
        store.conn.pg.execute(
            "DELETE FROM public.gitpub_blog WHERE schema_name = %s", (store.schema,)
        )
        store.close()


def _pg_columns(pg: psycopg.Connection[Any], schema: str) -> dict[str, dict[str, Column]]:
    keys = {
        (r[0], r[1])
        for r in pg.execute(
            "SELECT k.table_name, k.column_name FROM information_schema.key_column_usage k"
            " JOIN information_schema.table_constraints c USING (constraint_schema,"
            " constraint_name) WHERE c.constraint_type = 'PRIMARY KEY' AND k.table_schema = %s",
            (schema,),
        )
    }
    out: dict[str, dict[str, Column]] = {}
    for table, name, kind, nullable, default in pg.execute(
        "SELECT table_name, column_name, data_type, is_nullable, column_default"
        " FROM information_schema.columns WHERE table_schema = %s",
        (schema,),
    ):
        plain = re.sub(r"::[a-z ]+$", "", default) if default is not None else None
        out.setdefault(table, {})[name] = (kind, nullable == "NO", plain, (table, name) in keys)
    return out


def _sqlite_columns(conn: Any) -> dict[str, dict[str, Column]]:
    out: dict[str, dict[str, Column]] = {}
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    for table in tables:
        for _, name, kind, notnull, default, pk in conn.execute(f"PRAGMA table_info({table})"):
            # A PRIMARY KEY is NOT NULL on PostgreSQL; SQLite allows NULL in a TEXT one.
            out.setdefault(table, {})[name] = (kind.lower(), bool(notnull or pk), default, pk > 0)
    return out


def test_after_every_migration_the_embedded_tables_are_the_shared_ones(
    pg_store: PgStore, tmp_path: Path
) -> None:
    shared = _pg_columns(pg_store.conn.pg, pg_store.schema)
    conn = connect(tmp_path / FILE)
    for version in range(SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        migrate(conn, version, version + 1)
        conn.execute("COMMIT")
        embedded = _sqlite_columns(conn)
        for table, columns in embedded.items():
            assert table in shared, f"version {version + 1}: {table} only in SQLite"
            for name, column in columns.items():
                assert shared[table].get(name) == column, (version + 1, table, name)
    conn.close()
    assert set(shared) - set(embedded) == SHARED_ONLY_TABLES
    for table, columns in embedded.items():
        extra = {(table, n) for n in set(shared[table]) - set(columns)}
        assert extra <= SHARED_ONLY_COLUMNS, extra


# --------------------------------------------------------------- every query of the store

_KEYWORDS = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "WITH ")
_FILLED = {
    "marks": "?",
    "where": "WHERE state = ?",
    "', '.join(names)": "job_id",
    "', '.join('?' * len(names))": "?",
    "int(limit)": "10",
    "int(offset)": "0",
    "','.join('?' * len(batch))": "?",
    "free": " AND (lease_token IS NULL OR lease_expires_at < ?)",
    "rows_marks": "(?, ?, ?, ?, ?, ?, ?)",
    "file_marks": "(?, ?, ?, ?)",
    "name_marks": "?",
}
"""What a query's f-string holds, filled as one call would: a new expression in a query must
be added here, so no query goes unchecked."""


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                source = ast.unparse(value.value)
                parts.append(_FILLED.get(source, f"<unfilled {source}>"))
            else:
                parts.append(str(ast.literal_eval(value)))
        return "".join(parts)
    return None


def store_queries() -> list[tuple[str, str]]:
    """(module, query) of every SQL statement written in gitpub/store/."""
    found = []
    for path in sorted((ROOT / "gitpub" / "store").glob("*.py")):
        if path.name == "dialect.py" or path.name in CACHE_MODULES:
            continue  # the translator's words are about queries; the cache is not the store
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings
        skip |= {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            text = _text(node) if id(node) not in skip else None
            if text is not None and text.lstrip().startswith(_KEYWORDS):
                found.append((path.name, " ".join(text.split())))
    return found


def test_the_query_list_is_every_query() -> None:
    queries = store_queries()
    assert len(queries) >= 50, len(queries)
    unfilled = [q for _, q in queries if "<unfilled" in q]
    assert unfilled == [], "add the expression to _FILLED"


@pytest.mark.parametrize(("module", "sql"), store_queries())
def test_every_query_is_accepted_by_postgresql(pg_store: PgStore, module: str, sql: str) -> None:
    pg = pg_store.conn.pg
    params = [None] * sql.count("?")
    with pg.transaction(force_rollback=True):
        pg.execute("EXPLAIN " + translate(sql), params)


@pytest.mark.parametrize(
    ("module", "sql"),
    [
        (m, q)
        for m, q in store_queries()
        # The fleet lock is the shared store's alone (the embedded store's locks are files).
        if m not in SHARED_ONLY_MODULES and "blog_fleet_lock" not in q
    ],
)
def test_every_query_is_accepted_by_sqlite(tmp_path: Path, module: str, sql: str) -> None:
    with SqliteStore(tmp_path / FILE) as store:
        store.conn.execute("EXPLAIN " + sql, [None] * sql.count("?"))
