"""The queries of `gitpub.store`, written once in the SQL SQLite speaks, as PostgreSQL (through
psycopg) reads them: `?` parameters become `%s`, a `%` outside a literal `%%`,
`json_extract(col, '$.field')` becomes `(col::jsonb ->> 'field')`, and a leading
`INSERT OR IGNORE` an `INSERT … ON CONFLICT DO NOTHING`.

What it cannot rewrite faithfully it refuses, as the bug it is, before any query runs: a `?`
or `%` inside a literal (pass the value as a parameter), `OR IGNORE` (or another SQLite
conflict clause) anywhere but at the start of an INSERT, an `INSERT OR IGNORE` that already
says what happens on conflict or returns rows, and a `json_extract` of another shape."""

from __future__ import annotations

import re
from functools import lru_cache

from gitpub.core.errors import InternalError

_JSON_FIELD = re.compile(r"json_extract\((\w+), '\$\.(\w+)'\)")
_LEADING_IGNORE = re.compile(r"INSERT\s+OR\s+IGNORE\s+")
_CONFLICT_CLAUSE = re.compile(r"(?i)\bOR\s+(IGNORE|REPLACE|ABORT|FAIL|ROLLBACK)\b")


class Untranslatable(InternalError):
    """A query of gitpub's that the rewrite would change in meaning."""


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """A query of `gitpub.store` as PostgreSQL reads it (refused: `Untranslatable`)."""
    code, literals = _split(sql)
    ignore = _LEADING_IGNORE.match(code)
    if _CONFLICT_CLAUSE.search(code[ignore.end() if ignore else 0 :]):
        raise Untranslatable(f"an SQLite conflict clause past the start of {sql!r}")
    if ignore and re.search(r"(?i)\b(ON\s+CONFLICT|RETURNING)\b|;", code):
        raise Untranslatable(f"INSERT OR IGNORE with its own conflict or RETURNING: {sql!r}")
    code = code.replace("%", "%%").replace("?", "%s")
    if ignore:
        code = "INSERT " + code[ignore.end() :] + " ON CONFLICT DO NOTHING"
    out = code.format(*literals)
    out = _JSON_FIELD.sub(r"(\1::jsonb ->> '\2')", out)
    if "json_extract" in out:
        raise Untranslatable(f"a json_extract other than (column, '$.field'): {sql!r}")
    return out


def _split(sql: str) -> tuple[str, list[str]]:
    """The query with each quoted literal or name replaced by `{}`, and those literals."""
    code: list[str] = []
    literals: list[str] = []
    i = 0
    while i < len(sql):
        quote = sql[i]
        if quote not in "'\"":
            code.append("{{" if quote == "{" else "}}" if quote == "}" else quote)
            i += 1
            continue
        end = i + 1
        while True:
            end = sql.find(quote, end)
            if end < 0:
                raise Untranslatable(f"an unterminated literal in {sql!r}")
            if sql[end + 1 : end + 2] != quote:
                break
            end += 2  # a doubled quote stands for itself
        literal = sql[i : end + 1]
        if "?" in literal or "%" in literal:
            raise Untranslatable(
                f"{literal} in {sql!r}: a ? or % inside a literal would be rewritten; "
                "pass the value as a parameter"
            )
        literals.append(literal)
        code.append("{}")
        i = end + 1
    return "".join(code), literals
