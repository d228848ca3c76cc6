"""The SQL both stores run is written once, in SQLite's spelling; `translate` rewrites it for
PostgreSQL and refuses what it would rewrite wrongly. Pure: no database, no git.
(tests/store/test_schema.py runs every query of the store through it on a real server.)"""

from __future__ import annotations

import pytest

from gitpub.store.dialect import Untranslatable, translate


@pytest.mark.parametrize(
    ("sqlite", "postgresql"),
    [
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        # `%` outside a literal is psycopg's own placeholder character: doubled.
        ("SELECT a % 2 FROM t", "SELECT a %% 2 FROM t"),
        (
            "INSERT OR IGNORE INTO t (a, b) VALUES (?, 'x')",
            "INSERT INTO t (a, b) VALUES (%s, 'x') ON CONFLICT DO NOTHING",
        ),
        (
            "SELECT json_extract(detail, '$.reason') FROM e WHERE job_id = ?",
            "SELECT (detail::jsonb ->> 'reason') FROM e WHERE job_id = %s",
        ),
        # Literals are kept byte for byte: doubled quotes, braces, what looks like SQL.
        ("SELECT 'it''s' FROM t", "SELECT 'it''s' FROM t"),
        ("SELECT '{}' FROM t WHERE x = ?", "SELECT '{}' FROM t WHERE x = %s"),
        ("SELECT 'INSERT OR IGNORE' FROM t", "SELECT 'INSERT OR IGNORE' FROM t"),
        ('SELECT "odd name" FROM t', 'SELECT "odd name" FROM t'),
    ],
)
def test_the_few_spellings_postgresql_says_otherwise(sqlite: str, postgresql: str) -> None:
    assert translate(sqlite) == postgresql


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        # A `?` or `%` inside a literal would become a placeholder (or stay doubled).
        ("SELECT * FROM t WHERE note = 'why?'", "inside a literal"),
        ("SELECT * FROM t WHERE detail LIKE '%allow%'", "inside a literal"),
        ('SELECT "what?" FROM t', "inside a literal"),
        # `ON CONFLICT DO NOTHING` is appended: only a leading INSERT OR IGNORE means that.
        ("WITH x AS (SELECT 1) INSERT OR IGNORE INTO t SELECT * FROM x", "conflict clause"),
        ("INSERT INTO t SELECT * FROM u WHERE a OR IGNORE", "conflict clause"),
        ("INSERT OR REPLACE INTO t (a) VALUES (?)", "conflict clause"),
        ("INSERT OR IGNORE INTO t (a) VALUES (?) ON CONFLICT (a) DO NOTHING", "its own conflict"),
        ("INSERT OR IGNORE INTO t (a) VALUES (?) RETURNING a", "RETURNING"),
        ("SELECT json_extract(detail, '$.a.b') FROM e", "json_extract"),
        ("SELECT 'unterminated FROM t", "unterminated"),
    ],
)
def test_what_it_would_rewrite_wrongly_is_refused(sql: str, why: str) -> None:
    with pytest.raises(Untranslatable, match=why):
        translate(sql)


def test_a_refusal_is_a_bug_of_gitpub_not_a_users_failure() -> None:
    """An untranslatable query is gitpub's own SQL: an internal error (exit 3, traceback in
    the log), never a one-line "the store failed" a person could act on."""
    from gitpub.core.errors import GitpubError, InternalError

    assert issubclass(Untranslatable, InternalError)
    assert not issubclass(Untranslatable, GitpubError)
