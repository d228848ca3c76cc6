"""`collision` answers as its definition does: the first other path (sorted) one of whose
prefixes folds like a prefix of the target but is spelled otherwise — whatever shortcuts a
big blog's 20,000 paths need (each folder compared once, each path folded once)."""

from __future__ import annotations

import random
import unicodedata

from gitpub.prepare import target as rules


def by_definition(path: str, existing: list[str]) -> str | None:
    mine = rules._prefixes(path)
    for other in sorted(existing):
        for key, real in rules._prefixes(other).items():
            if key in mine and mine[key] != real:
                return real
    return None


LETTERS = ["a", "A", "b", "B", "é", unicodedata.normalize("NFD", "é"), "ß", "ss", "SS", "/", "x"]


def random_path(rng: random.Random) -> str:
    path = "".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 9)))
    while "//" in path:
        path = path.replace("//", "/")
    return path.strip("/") or "a"


def test_collision_agrees_with_its_definition_on_random_trees() -> None:
    rng = random.Random(37)
    found = 0
    for _ in range(20_000):
        existing = [random_path(rng) for _ in range(rng.randint(0, 8))]
        path = random_path(rng)
        want = by_definition(path, existing)
        assert rules.collision(path, existing) == want, (path, existing)
        found += want is not None
    assert found > 300  # the trees held collisions of every kind, not only clean ones
