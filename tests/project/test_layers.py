"""The house keeps its shape: every room imports only the rooms below it, so the folder list is
the architecture (docs/architecture.md) and no circle can form between rooms.

The check reads the source with `ast`, imports inside functions and under TYPE_CHECKING
included: a lazy import is still a dependency."""

from __future__ import annotations

import ast
import re
import tokenize
from collections import Counter
from pathlib import Path

from testing.paths import ROOT

PACKAGE = ROOT / "gitpub"

# Lowest first. A room may import its own modules and any room of a LOWER layer; rooms that
# share a layer are independent of each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("scan", "site"),
    ("config",),
    ("git",),
    ("fonts", "trust"),
    ("store",),
    ("context",),
    ("intake",),
    ("prepare",),
    ("deliver",),
    ("sync",),
    ("ops",),
    ("api", "mcpserver", "ui"),
    ("__init__",),  # the package: its names come lazily from api
    ("cli",),
    ("__main__",),
)
LEVEL = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}


def room_of(module: str) -> str:
    """`gitpub.store.jobs` -> `store`; the package itself -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "gitpub":
                found.update(f"gitpub.{a.name}" for a in node.names)
            elif node.module.startswith("gitpub."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gitpub."))
    return found


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def edges() -> list[tuple[str, str, str]]:
    """(module, importing room, imported room) for every import that crosses rooms."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        here = room_of(name) if path.name != "__init__.py" or name != "gitpub" else "__init__"
        for target in imports_of(path):
            there = room_of(target)
            if there == "__version__":
                there = "__init__"
            if there != here:
                out.append((name, here, there))
    return out


def test_every_room_is_in_a_layer() -> None:
    rooms = {room_of(module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert rooms - set(LEVEL) == set(), "a new room needs its place in LAYERS"


def test_rooms_import_only_downward() -> None:
    upward = [
        f"{module} ({here}) imports {there}"
        for module, here, there in edges()
        if LEVEL[there] >= LEVEL[here]
    ]
    assert upward == []


FUNCTION_LINES = 60
"""The unit a reader holds is the function: one longer than this is asking to be split into
its phases. A module may grow as long as it answers one question."""

STILL_LONG: frozenset[str] = frozenset(
    {
        "gitpub/ops/doctor/state.py:database",
        "gitpub/prepare/__init__.py:_run",
        "gitpub/intake/__init__.py:create",
    }
)
"""Functions known to be over the mark, each waiting for its split; a function that got
shorter leaves this list (the test says so), and none joins it."""


def _long_functions() -> dict[str, int]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    found[f"{path.relative_to(PACKAGE.parent)}:{node.name}"] = length
    return found


def test_no_function_over_sixty_lines() -> None:
    long = _long_functions()
    assert {k: v for k, v in long.items() if k not in STILL_LONG} == {}
    done = STILL_LONG - set(long)
    assert not done, f"split already, drop from STILL_LONG: {sorted(done)}"


ANY_LIMIT = 110
"""How many times the package may name `Any` outside its import lines: at the seams it says
TypedDict, Literal, a Protocol, `JSON` (gitpub/core/jsonvalue.py) or `object` instead."""


def _any_counts() -> Counter[str]:
    """`Any` as a name in the code of each module (not in a comment or a string), import
    lines left out."""
    found: Counter[str] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        with path.open("rb") as fh:
            for tok in tokenize.tokenize(fh.readline):
                if tok.type == tokenize.NAME and tok.string == "Any" and "import" not in tok.line:
                    found[str(path.relative_to(PACKAGE.parent))] += 1
    return found


def test_any_stays_rare() -> None:
    counts = _any_counts()
    total = sum(counts.values())
    top = ", ".join(f"{name} {n}" for name, n in counts.most_common(5))
    assert total <= ANY_LIMIT, f"{total} Any (at most {ANY_LIMIT}); most in: {top}"


def test_at_most_twelve_modules_at_the_package_root() -> None:
    assert len(list(PACKAGE.glob("*.py"))) <= 12


SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b|^PRAGMA\b"
)


def test_only_the_store_speaks_sql() -> None:
    """The seam a second store plugs into: every query lives in gitpub/store/."""
    speaking = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "store":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            if call and node.func.attr in ("execute", "executemany", "executescript"):  # type: ignore[union-attr]
                speaking.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: .{node.func.attr}()")  # type: ignore[union-attr]
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SQL.search(node.value)
            ):
                speaking.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value[:40]!r}")
    assert speaking == []


def test_every_push_goes_through_the_write_set_guard() -> None:
    """One place pushes: gitpub/deliver/guard.py, after checking every commit it pushes. A new
    kind of commit cannot skip the guard by calling Repo.push or `git push` itself. (The demo
    plays a person pushing by hand in its scratch blog: that is `_git(…, "push", …)`.)"""
    pushing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in ("deliver/guard.py", "git/repo.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "push"
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "guard")
            ):
                pushing.append(f"{rel}:{node.lineno}")
            argv = isinstance(node, ast.List) and node.elts
            if argv and isinstance(argv[0], ast.Constant) and argv[0].value == "push":
                pushing.append(f"{rel}:{node.lineno}: a git push of its own")
    assert pushing == []
