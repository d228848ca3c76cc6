"""Which articles the built-in similarity judge needs to see: the few that could reach its
floor, found in an inverted index of 3-grams instead of by reading the whole blog.

The judge's answer depends only on the best score at or above its floor and on the first
article (by path) that has it (`builtins._best`); an article that cannot reach the floor never
changes it. So the pool handed to the judge is: the articles the index proves tied at the
best score, the job's own path, and the articles earlier jobs of this node are still
delivering (`queued`, never in the tree). The judge then scores those exactly, as it always
did: the same answer as over every article of the blog.

How the index proves it (prefix filtering, as set-similarity joins do): a score of at least
`floor` needs at least ceil(floor·n) of the candidate's n 3-grams in the other article, so
an article holding none of any n − ceil(floor·n) + 1 of them cannot reach it. Those are taken
rarest first — short posting lists — and more are taken while they stay cheap, which tightens
the bound of each article found: its 3-grams in common are at most those found plus the ones
not looked up. Articles are scored exactly, highest bound first, until no bound reaches the
best score found.

The index (`gitpub.store.grams`, in the user cache) knows articles by git blob id: an
article is read and cut into 3-grams once, whichever clone, commit or job it appears in; a
job reads only the articles its tree holds that the index has not seen."""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from pathlib import Path

from gitpub.context import Context, memo
from gitpub.core import userdirs
from gitpub.git.treefiles import TreeFiles
from gitpub.prepare import builtins
from gitpub.store.grams import GramIndex, GramsUnavailable, Known

JUDGE = "builtin:similarity"
BUDGET = 100_000
"""Posting entries read for one job beyond the ones the bound needs: the more 3-grams looked
up, the tighter each article's bound and the fewer articles read to score them."""
BATCH = 1000  # articles cut into 3-grams per transaction when the index learns a blog


def location() -> Path:
    return userdirs.cache_dir() / "similarity" / "grams.sqlite3"


class _Opened:
    """The index file as this process opened it (kept on the Context; a connection per
    thread, as SQLite wants), or why it could not."""

    def __init__(self) -> None:
        self.indexes: dict[int, GramIndex] = {}
        self.failed = False

    def get(self) -> GramIndex | None:
        if self.failed:
            return None
        thread = threading.get_ident()
        if thread not in self.indexes:
            try:
                self.indexes[thread] = GramIndex(location())
            except GramsUnavailable:
                self.failed = True  # a read-only cache: the judge reads the articles
                return None
        return self.indexes[thread]


def pool(
    ctx: Context,
    existing: Mapping[str, bytes],
    own: str,
    text: str,
    queued: Mapping[str, bytes],
    beat: Callable[[], None] | None = None,
) -> dict[str, bytes]:
    """Path → bytes of the articles the prepare judge is asked about: every article of the
    blog and `queued` for a judge of the blog's own, the index's few for the built-in one."""
    steps = ctx.config.steps
    suffixes = tuple(ctx.config.publish.suffixes)
    paths = [p for p in existing if p.endswith(suffixes)]
    if steps.judge == JUDGE and isinstance(existing, TreeFiles):
        opened = memo(ctx.memos, _Opened)
        index = opened.get()
        if index is not None:
            floor = min(steps.similarity_update, steps.similarity_skip)  # as `builtins.judge`
            others = [p for p in paths if p != own and p not in queued]
            try:
                view = "\0".join([str(ctx.repo.common_dir), *ctx.config.publish.content, *suffixes])
                near = nearest(index, existing, others, text, floor, view, beat)
            except GramsUnavailable:
                opened.failed = True
            else:
                wanted = [*near, *([own] if own in existing and own not in queued else [])]
                found = existing.read(wanted)
                found.update(queued)
                return found
    found = existing.read(paths) if isinstance(existing, TreeFiles) else dict(existing)
    found = {p: found[p] for p in paths}
    found.update(queued)
    return found


def nearest(
    index: GramIndex,
    files: TreeFiles,
    paths: Iterable[str],
    text: str,
    floor: float,
    view: str,
    beat: Callable[[], None] | None = None,
) -> list[str]:
    """The paths among `paths` whose article has the best score with `text` when that
    score reaches `floor` (every one of them: the judge names the first); none otherwise.
    `view` names the clone and folders asking: what it knew last time is the start, and
    only the difference from it is looked up (set operations: a blog of 20,000 articles
    is 20,000 blob ids, and a loop over them in Python costs what the judge may)."""
    grams = builtins.shingles(text)
    if not grams:
        return []  # nothing in common with anything: every score is 0
    paths = list(paths)
    live = {files.oids[p] for p in paths}
    kept: tuple[int, Known, dict[int, str]] | None = None
    for _ in range(3):
        with index.snapshot():
            generation = index.generation()
            if kept is None or kept[0] != generation:
                kept = (generation, *index.view(view, generation))
            _, before, by_number = kept
            missing = live - before.keys()  # the delta since this view was last kept
            found = index.known(missing) if missing else {}
            unknown = missing - found.keys()
            if not unknown:
                sizes = before
                if found:  # copies of what the view holds, only when it grows
                    by_number = {**by_number, **{num: oid for oid, (num, _) in found.items()}}
                    sizes = {**before, **found}
                bounded = _bounded(index, grams, floor, by_number, sizes, live)
                break
        learn(index, files, sorted(unknown), beat)
    else:
        raise GramsUnavailable("the index started over while this job read it")
    if missing or before.keys() - live:
        index.keep_view(view, {oid: sizes[oid] for oid in live}, generation)
    best, tied = 0.0, set()
    for bound, exact, oid in bounded:
        if bound < best:
            break  # sorted: no article further down can reach the best found
        score = bound if exact else _score(grams, files, oid)
        if score > best:
            best, tied = score, {oid}
        elif score == best:
            tied.add(oid)
    if best < floor or not best:
        return []
    return sorted(p for p in paths if files.oids[p] in tied)


def _bounded(
    index: GramIndex,
    grams: frozenset[str],
    floor: float,
    by_number: dict[int, str],
    sizes: Known,
    live: set[str],
) -> list[tuple[float, bool, str]]:
    """(upper bound of the score, whether it is the exact score, blob id) of every article
    of `live` that may reach `floor`, highest bound first."""
    n = len(grams)
    df = index.frequencies(grams)
    rarest = sorted(grams, key=lambda g: (df.get(g, 0), g))
    # The same count `builtins._may_reach` allows: a score ≥ floor misses at most these.
    need = min(n - math.ceil(floor * n) + 1, n) if floor > 0 else n
    taken, cost = 0, 0
    for gram in rarest:
        size = df.get(gram, 0)
        if taken >= need and cost + size > BUDGET:
            break
        taken, cost = taken + 1, cost + size
    looked = [g for g in rarest[:taken] if df.get(g, 0)]
    hits = Counter(chain.from_iterable(index.postings(looked)))
    unseen = n - taken  # 3-grams not looked up: each may be shared, or not
    out = []
    for number, found in hits.items():
        oid = by_number.get(number)
        if oid is None or oid not in live:
            continue  # an article of another tree, or an older version
        size = sizes[oid][1]
        common = min(found + unseen, size)
        bound = common / (n + size - common)  # the score's own formula (`_Measured.jaccard`)
        if bound >= floor:
            out.append((bound, not unseen, oid))
    out.sort(key=lambda item: -item[0])
    return out


def _score(grams: frozenset[str], files: TreeFiles, oid: str) -> float:
    theirs = builtins.shingles(files.fetch([oid])[oid].decode("utf-8", "replace"))
    common = len(grams & theirs)
    return common / (len(grams) + len(theirs) - common) if theirs else 0.0


def learn(
    index: GramIndex, files: TreeFiles, oids: list[str], beat: Callable[[], None] | None
) -> None:
    """Index the articles of these blob ids, a batch per transaction (a first job on a big
    blog reads them all once; another worker's batches are not redone)."""
    for start in range(0, len(oids), BATCH):
        part = oids[start : start + BATCH]
        data = files.fetch(part)
        index.add([(oid, builtins.shingles(data[oid].decode("utf-8", "replace"))) for oid in part])
        if beat is not None:
            beat()
