"""Built-in steps: passthrough draft, similarity judge, secrets scan, MDX validation.

Each takes the request object of the step protocol and returns its answer object, so a
built-in and an external command are interchangeable behind `steps.run_step`."""

from __future__ import annotations

import contextlib
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

from gitpub import scan
from gitpub.core import userdirs
from gitpub.core.files import write_atomic
from gitpub.core.ids import sha256_hex
from gitpub.prepare.answers import (
    ArticleText,
    DraftAnswer,
    DraftRequest,
    GateAnswer,
    GateRequest,
    JudgeAnswer,
    JudgeRequest,
)
from gitpub.prepare.protocol import StepFailed
from gitpub.site import validate
from gitpub.site.frontmatter import body_start


def passthrough(request: DraftRequest) -> DraftAnswer:
    """The source already is the article."""
    return {"text": request["source"]}


# ----------------------------------------------------------------------- similarity

_SHINGLE = 3


def _body(text: str) -> str:
    lines = text.split("\n")[body_start(text) - 1 :]
    body = unicodedata.normalize("NFKC", "\n".join(lines)).lower()
    return re.sub(r"[\W_]+", "", body)  # whitespace and punctuation carry no meaning here


BIG = 1 << 20
"""Texts from this size on keep their 3-grams in the user cache, by the text's hash: a blog
holding a huge article would otherwise build its 3-grams again in every job's process."""


def shingles(text: str) -> frozenset[str]:
    """The character 3-grams of the body (front matter left out, case, whitespace and
    punctuation ignored)."""
    if len(text) >= BIG:
        return _cached_shingles(text)
    return _shingles(text)


def _cached_shingles(text: str) -> frozenset[str]:
    # A 3-gram is three word characters (`_body` drops the rest): one per line is exact.
    place = userdirs.cache_dir() / "grams" / f"{sha256_hex(text.encode('utf-8'))}.txt"
    try:
        return frozenset(place.read_text("utf-8").split("\n")) - {""}
    except OSError:
        pass
    grams = _shingles(text)
    with contextlib.suppress(OSError):  # a cache: a read-only home only costs the time
        write_atomic(place, "\n".join(sorted(grams)).encode("utf-8"), sync=False)
    return grams


def _shingles(text: str) -> frozenset[str]:
    body = _body(text)
    if len(body) < _SHINGLE:
        return frozenset({body}) if body else frozenset()
    return frozenset(body[i : i + _SHINGLE] for i in range(len(body) - _SHINGLE + 1))


class Grams:
    """Texts' 3-grams as bitsets over one vocabulary of 3-grams, kept on the Context (see
    `gitpub.context.memo`): a long-lived process serving one repository keeps them between
    jobs.

    A prepare compares its article with every other article of the blog: a blog of a
    thousand posts would otherwise be read again for every job, and comparing two bitsets
    (`&`, then counting bits) costs a few word operations where comparing two sets costs a
    hash lookup per 3-gram. Bounded by bytes: once full, a text it does not hold is compared
    as a plain set (as it was before it existed), and it starts over only between two
    comparisons (`begin`), when most of what it holds went unused by the last one. Bitsets of
    two vocabularies never meet."""

    MAX_TEXTS = 16384
    MAX_BYTES = 128 << 20  # the vocabulary, the bitsets and the texts they stand for

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.texts: dict[str, tuple[int, int]] = {}
        self.used: set[str] = set()
        self.size = 0
        self.full = False

    def begin(self) -> None:
        if self.full and 2 * len(self.used) < len(self.texts):
            self.index.clear()
            self.texts.clear()
            self.size = 0
            self.full = False
        self.used = set()

    def holds(self, text: str) -> bool:
        return text in self.texts

    def of(self, text: str, grams: frozenset[str] | None = None) -> tuple[int, int] | None:
        """(bitset, number of 3-grams) of a text (whose 3-grams are `grams` when the caller
        has them already), or None once full."""
        known = self.texts.get(text)
        if known is not None:
            self.used.add(text)
            return known
        if self.full:
            return None
        if grams is None:
            grams = shingles(text)
        # A new vocabulary entry (a 3-character string, an int, its slot) is ~100 bytes; the
        # bitset is at most as long as the vocabulary.
        worst = len(text) + 100 * len(grams) + (len(self.index) + len(grams)) // 8
        if self.size + worst > self.MAX_BYTES or len(self.texts) >= self.MAX_TEXTS:
            self.full = True
            return None
        index = self.index
        words = len(index)
        positions = [index.setdefault(g, len(index)) for g in grams]
        bits = bytearray((max(positions, default=0) >> 3) + 1)
        for i in positions:
            bits[i >> 3] |= 1 << (i & 7)
        known = self.texts[text] = (int.from_bytes(bits, "little"), len(positions))
        self.used.add(text)
        self.size += len(text) + 100 * (len(index) - words) + len(bits)
        return known


class _Measured:
    """One text, as a bitset when the memo holds it, else as a set of its 3-grams."""

    def __init__(self, text: str, memo: Grams, grams: frozenset[str] | None = None) -> None:
        self.text = text
        self.bits = memo.of(text, grams)
        self._set = grams

    @property
    def count(self) -> int:
        return self.bits[1] if self.bits is not None else len(self.grams)

    @property
    def grams(self) -> frozenset[str]:
        if self._set is None:
            self._set = shingles(self.text)
        return self._set

    def jaccard(self, other: _Measured) -> float:
        na, nb = self.count, other.count
        if not na or not nb:
            return 0.0
        if self.bits is not None and other.bits is not None:
            common = (self.bits[0] & other.bits[0]).bit_count()
        else:
            common = len(self.grams & other.grams)
        return common / (na + nb - common)  # the union's size follows from the intersection


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of character 3-gram sets (works for CJK and for spaced languages)."""
    memo = Grams()
    return _Measured(a, memo).jaccard(_Measured(b, memo))


def _best(
    candidate: str, others: Sequence[ArticleText], memo: Grams, floor: float = 0.0
) -> tuple[float, str | None]:
    """The most similar article and its score, exactly — when that score reaches `floor`;
    below it (0.0, None): no score under `floor` decides anything.

    Two cheap bounds pass articles over before their 3-grams are built. The union of two
    sets holds the candidate's, so the score is at most the share of the candidate's 3-grams
    that occur in the other body: an article missing more of them than `floor` allows is
    dropped after a few substring searches (a blog of 20,000 posts is read so, not parsed).
    And an article whose 3-gram count is so far from the candidate's that even sharing every
    3-gram of the smaller set could not beat the best so far is passed over."""
    memo.begin()
    own = shingles(candidate)  # once: the bitset and the bound both start from them
    mine = _Measured(candidate, memo, own)
    grams = sorted(own) if floor > 0 else []
    allowed = len(grams) - math.ceil(floor * len(grams))  # misses a score ≥ floor allows
    best, path = 0.0, None
    for other in others:
        text = str(other.get("text", ""))
        known = None
        # A text the memo holds is compared as two bitsets, cheaper than the bound: an
        # article still on its way was a candidate itself, and every later job meets it.
        if not memo.holds(text):
            known = shingles(text) if len(text) >= BIG else None  # from the cache, usually
            if grams and not _may_reach(grams, allowed, _body(text) if known is None else known):
                continue
        theirs = _Measured(text, memo, known)
        small, large = sorted((mine.count, theirs.count))
        if not small or small <= best * large:
            continue
        score = mine.jaccard(theirs)
        if score > best:
            best, path = score, str(other.get("path"))
    return (best, path) if best >= floor else (0.0, None)


def _best_said(score: float, floor: float) -> str:
    if score < floor:
        return f"no other article {floor:.2f} similar or more"
    return f"best similarity {shown(score)}"


def shown(score: float) -> str:
    """A score as people read it: three decimals, cut rather than rounded, so that "1.000"
    means the very same 3-grams (a long post with three lines edited reads 0.999, where two
    decimals, rounded, said 1.00 as for an exact duplicate)."""
    return f"{math.floor(score * 1000 + 1e-9) / 1000:.3f}"


def _may_reach(grams: list[str], allowed: int, body: str | frozenset[str]) -> bool:
    """Whether a body (or its 3-grams) misses at most `allowed` of the candidate's 3-grams
    (a 3-gram of a body is exactly a 3-character substring of it; a body too short for one
    is measured)."""
    if isinstance(body, str) and len(body) < _SHINGLE:
        return True
    missed = 0
    for gram in grams:
        if gram not in body:
            missed += 1
            if missed > allowed:
                return False
    return True


def duplicate_of(text: str, others: Iterable[ArticleText]) -> str | None:
    """The path of another article holding this very article — the same bytes, nothing less
    (a changed line ending or final newline is a person's edit, and a person looks at it)."""
    return next((str(o.get("path")) for o in others if o.get("text") == text), None)


def judge(
    request: JudgeRequest,
    skip_at: float,
    update_at: float,
    similar: str = "record",
    memo: Grams | None = None,
) -> JudgeAnswer:
    """The writer's path decides; a score never ends a post.

    SKIP only for an exact duplicate: the job's own path already holds its text ("no
    change"), or another article is the same article. A near-duplicate (a score at or above
    `skip_at`) is named with its score for the path rules to send to a person
    (`gitpub.prepare.target.after_judge`), unless `[steps] similar = "skip"`: two short posts
    written from one template share most of their 3-grams and are still two posts.

    The candidate is compared with every OTHER article: its own path is the one it may write,
    so a revision is never measured against the version it replaces (a long post revised by
    a line is 0.99 similar to itself). A score never moves the job onto another path."""
    candidate = request["candidate"]
    mine = candidate["path"]
    text = candidate["text"]
    recheck = request.get("mode") == "recheck"
    pool = request.get("delta", []) if recheck else request.get("existing", [])
    own = next((e for e in pool if e.get("path") == mine), None)
    others = [e for e in pool if e.get("path") != mine]
    floor = min(update_at, skip_at)  # the lowest score that decides or is recorded
    score, path = _best(text, others, memo or Grams(), floor)
    # The same article has the same 3-grams: only a perfect score needs the texts compared.
    twin = duplicate_of(text, others) if score >= 1.0 else None
    if recheck:
        if own is not None and own.get("text") == text:
            return {"decision": "SKIP", "reason": f"no change: {mine} already holds this text"}
        if twin is not None:
            return {"decision": "SKIP", "reason": f"{shown(1)} similar to {twin}: the same article"}
        if score >= skip_at and similar == "skip":
            return {"decision": "SKIP", "reason": f"{shown(score)} similar to {path}"}
        if score >= skip_at:
            # Delivery's judge may only SKIP or KEEP; keeping a near-duplicate that reached
            # the remote meanwhile would publish it unseen, skipping it would lose it.
            raise StepFailed(
                f"{shown(score)} similar to {path}, which reached the remote meanwhile; a person "
                'decides (retry to publish, abandon to drop; [steps] similar = "skip" skips)'
            )
        return {"decision": "KEEP", "reason": _best_said(score, floor)}
    if own is not None:
        if own.get("text") == text:
            return {"decision": "SKIP", "reason": "no change"}
        return {"decision": "UPDATE", "target": mine, "reason": "revision of its own path"}
    if twin is not None:
        return {"decision": "SKIP", "reason": f"{shown(1)} similar to {twin}: the same article"}
    answer: JudgeAnswer = {"decision": "NEW", "reason": _best_said(score, floor)}
    if score >= floor and path is not None:
        # For a person to see (`show`), and for the path rules to act on: a near-duplicate
        # waits in REVIEW; `[steps] similar` says what a lower score does.
        answer["similar"] = path
        answer["score"] = round(score, 4)
    return answer


# -------------------------------------------------------------------------- secrets


def secrets(request: GateRequest, allow: Iterable[str] = ()) -> GateAnswer:
    text = str(request["text"])
    found = scan.scan(text, path=request.get("path"), allow=allow) + scan.markers(text)
    if not found:
        return {"ok": True}
    first = min(found, key=lambda f: f.line)
    return {
        "ok": False,
        "reason": f"{first.kind}-like secret (fingerprint {first.fingerprint})",
        "line": first.line,
    }


# ----------------------------------------------------------------------- validation


def mdx(request: GateRequest) -> GateAnswer:
    """Validation by the article's file type (`gitpub.site.validate`)."""
    problem = validate.check(str(request["path"]), str(request["text"]))
    if problem is None:
        return {"ok": True}
    return {"ok": False, "reason": problem.reason, "line": problem.line}
