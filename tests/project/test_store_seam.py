"""The store is an interface: no room above `gitpub/store/` knows which database it talks to —
no driver imported, no driver type named, the database file named in one place."""

from __future__ import annotations

import ast

from testing.paths import ROOT

PACKAGE = ROOT / "gitpub"
DRIVERS = ("sqlite3", "psycopg")


def _outside_the_store() -> list[tuple[str, ast.AST]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "store":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [(str(path.relative_to(ROOT)), node) for node in ast.walk(tree)]
    return out


def test_no_driver_outside_the_store() -> None:
    found = []
    for where, node in _outside_the_store():
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names = [node.value.id]  # `sqlite3.Row` in an annotation, `psycopg.Error`
        else:
            continue
        found += [f"{where}:{node.lineno}" for n in names if n.split(".")[0] in DRIVERS]  # type: ignore[attr-defined]
    assert found == []


def test_the_database_file_is_named_in_one_place() -> None:
    named = [
        f"{where}:{node.lineno}"  # type: ignore[attr-defined]
        for where, node in _outside_the_store()
        if isinstance(node, ast.Constant) and node.value == "state.sqlite3"
    ]
    assert named == []
