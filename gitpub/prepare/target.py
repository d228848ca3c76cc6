"""Where a job writes, and the rules that keep it off every other article.

The path is the writer's: `--target`, the draft's `path` or the front matter's `slug` are
instructions and bind; a path gitpub derives (from a title, a template, the job id) is only a
proposal, and never a reason to replace a file someone else wrote. A judge may call the
article a duplicate, but it never moves the job onto another path: an UPDATE names the job's
own target or the job waits for a person."""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from gitpub.config import Config, StepsConfig
from gitpub.core.jsonvalue import text_or_none
from gitpub.core.states import State
from gitpub.prepare.answers import JudgeAnswer
from gitpub.prepare.builtins import shown
from gitpub.site import paths
from gitpub.site.article import Article
from gitpub.store.jobs import Event, Job

if TYPE_CHECKING:
    from gitpub.git.repo import Repo

TAKEN_DOWN: Final = "taken_down"
"""failure_code of a job held back because its article is a publication a person took down."""


@dataclass(frozen=True)
class Target:
    path: str
    explicit: bool  # the writer named it (--target, draft path, front-matter slug)
    origin: str  # where the path came from, for the job's history
    warning: str | None = None  # what a person should know about it (an unreadable date)


def derived(
    cfg: Config, text: str, bundle: bool, submitted: dt.datetime, existing: Iterable[str]
) -> Target:
    """The path gitpub proposes for an article no one placed: the template (a bundle's own
    folder without one), the front matter's slug and date, an existing post that dates it
    (Jekyll's dated names), `.mdx` for MDX."""
    article = Article.read(text)
    pub = cfg.publish
    template = pub.path
    if template is None and bundle:
        # A bundle gets a folder of its own, never its files in the content root.
        template = f"{pub.content[0]}/{{slug}}/index{pub.suffixes[0]}"
    named = paths.derive(template, pub.content[0], pub.suffixes[0], article, submitted=submitted)
    chosen, origin = named.path, named.origin
    dated = paths.dated_alike(pub.path, article, existing)
    if dated is not None and dated != chosen:
        # Still derived, not the writer's: replacing it needs --target, and the same bytes
        # again end in "no change".
        chosen, origin = dated, f"{origin}, dated by the existing {dated}"
    named_mdx = paths.mdx_named(chosen, text, pub.suffixes)
    if named_mdx != chosen:
        chosen, origin = named_mdx, f"{origin}, .mdx for its MDX"
    return Target(chosen, named.explicit, origin, named.warning)


@dataclass(frozen=True)
class Verdict:
    """What the path rules say before or after the judge: an end state and its reason."""

    state: State  # SKIPPED or REVIEW
    reason: str
    similar: str | None = None  # the article a near-duplicate waits on, for `retry` to accept


def asset_paths(target: Target, names: Iterable[str]) -> dict[str, str]:
    """name → path of each asset: beside the article (beside `index.md` in a bundle)."""
    folder = target.path.rsplit("/", 1)[0]
    return {name: f"{folder}/{name}" for name in names}


def assets_verdict(
    target: Target, assets: Mapping[str, bytes], existing: Mapping[str, bytes]
) -> Verdict | None:
    """An asset may add a file, or find its own bytes already there; it never replaces one."""
    for name, path in asset_paths(target, assets).items():
        if path == target.path:
            return Verdict(State.REVIEW, f"asset {name} has the article's own path {path}")
        twin = collision(path, existing)
        if twin is not None:
            return Verdict(State.REVIEW, f"asset {path} collides with {twin}{_why(path, twin)}")
        before = existing.get(path)
        if before is not None and before != assets[name]:
            return Verdict(
                State.REVIEW,
                f"asset {path} already exists with other bytes; rename the asset or remove "
                "the file first",
            )
    return None


def new_assets(target: Target, assets: Mapping[str, bytes], existing: Mapping[str, bytes]) -> bool:
    """Whether any asset is not yet in the blog with its bytes."""
    paths = asset_paths(target, assets)
    return any(existing.get(paths[name]) != data for name, data in assets.items())


def before_judge(target: Target, data: bytes, existing: Mapping[str, bytes]) -> Verdict | None:
    """Decisions that need no judge: the same bytes are already there, or a derived path would
    replace a file nobody asked to replace."""
    twin = collision(target.path, existing)
    if twin is not None:
        return Verdict(State.REVIEW, f"{target.path} collides with {twin}{_why(target.path, twin)}")
    before = existing.get(target.path)
    if before is None:
        return None
    if before == data:
        return Verdict(State.SKIPPED, f"no change: {target.path} already holds these bytes")
    if not target.explicit:
        return Verdict(
            State.REVIEW,
            f"{target.path} already exists; pass --target {target.path} to update it",
        )
    return None


def fold(path: str) -> str:
    """A path as a case-insensitive, normalizing file system (macOS, Windows) sees it."""
    return unicodedata.normalize("NFC", path).casefold()


def clash(paths: Iterable[str], existing: Mapping[str, bytes]) -> str | None:
    """Why writing `paths` would replace what the blog holds in their way, or None: a file
    where one of them needs a folder, or a folder where one of them would be a file. The job
    commit would delete it (the write-set guard stops that before any push; this says it
    before anything is built, a dry run included)."""
    for path in paths:
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in existing:
                return f"{parent} is a file where {path} needs a folder"
        inside = next((p for p in existing if p.startswith(path + "/")), None)
        if inside is not None:
            return f"{path} is a folder (it holds {inside}) where the job would write a file"
    return None


def collision(path: str, existing: Iterable[str]) -> str | None:
    """Another existing path or folder that is the same one on such a file system, if any:
    `Foo.md` beside `foo.md`, a name written once in NFC and once in NFD, or a bundle folder
    `Post/` beside `post/`."""
    mine = _prefixes(path)
    folders: set[str] = set()  # folders already compared: a big blog has few, and many files
    for other in sorted(existing):
        folder = other.rpartition("/")[0]
        if folder and folder not in folders:
            folders.add(folder)
            for key, real in _prefixes(folder).items():
                if key in mine and mine[key] != real:
                    return real
        same = mine.get(fold(other))  # the file itself, at the depth it shares with `path`
        if same is not None and same != other:
            return other
    return None


def _why(path: str, twin: str) -> str:
    """What makes two names one file, said as it is: case (`Foo.md`, `foo.md`; Windows and
    macOS by default), Unicode normalization (`café` written NFC and NFD; macOS, and any
    checkout that normalizes), or both."""
    mine = _prefixes(path).get(fold(twin), path)  # the part of the path that meets the twin
    nfc = unicodedata.normalize
    if nfc("NFC", mine) == nfc("NFC", twin):
        return " by Unicode normalization (NFC and NFD spell one name on macOS file systems)"
    if mine.casefold() == twin.casefold():
        return " on case-insensitive file systems"
    return " by case and Unicode normalization (one name on macOS file systems)"


def _prefixes(path: str) -> dict[str, str]:
    """Folded form → real form of the path and of each folder on its way."""
    parts = path.split("/")
    return {fold(p): p for p in ("/".join(parts[: i + 1]) for i in range(len(parts)))}


def takedown(
    repo: Repo,
    job_id: str,
    path: str,
    published: Sequence[Job],
    tip: str,
    events: Callable[[], Iterable[Event]],
    let_go: Callable[[], Collection[str]],
) -> str | None:
    """Why job `job_id` must not write `path` onto `tip`, or None: `published` (the PUBLISHED
    jobs of `path`) holds another job's publication there that left the branch (a deletion, a
    rename, a force-push). No job brings a takedown back by itself, not even one queued
    before it; a person's `retry` of it after the takedown was noticed does (`events`: the
    job's history, read only then). `let_go`: the commits the remote-tracking branch held and
    lost (`Repo.let_go`), read only when nothing else says the article left: a force-push no
    pass has noticed yet."""
    earlier = [j for j in published if j.job_id != job_id]
    if not earlier:
        return None
    # Gone when `tip` has seen the publication (deleted or renamed since), or when the branch
    # held it and lost it (forced away); a clone behind another node's push has done neither,
    # and a takedown noticed already needs no history.
    commits = {j.remote_commit for j in earlier if j.remote_commit}
    held = repo.reachable(tip, commits)
    if commits and not held and not any(j.withdrawn_at for j in earlier):
        held = commits & set(let_go())
    gone = next((j for j in earlier if j.withdrawn_at or j.remote_commit in held), None)
    if gone is None:
        return None
    noticed = gone.withdrawn_at
    if noticed and any(e["step"] == "operator:retry" and e["at"] > noticed for e in events()):
        return None  # a person's answer to this very takedown
    return (
        f"{path} left the branch after job {gone.job_id} published it (a takedown); "
        "retry publishes it again"
    )


def accepted_similar(events: Iterable[Event]) -> frozenset[str]:
    """Articles a job waited on in REVIEW as too similar before a person retried it: `retry`
    after such a REVIEW is the person's answer, and it publishes."""
    accepted: set[str] = set()
    waiting: str | None = None
    for event in events:
        detail = event.get("detail") or {}
        if event["step"] == "prepare:done":
            waiting = text_or_none(detail.get("similar"))
        elif event["step"] == "operator:retry" and waiting:
            accepted.add(waiting)
    return frozenset(accepted)


def after_judge(
    target: Target,
    verdict: JudgeAnswer,
    steps: StepsConfig,
    accepted: frozenset[str] = frozenset(),
) -> Verdict | None:
    """The judge's answer held to the path rules. A SKIP is the judge's own: the built-in one
    answers it only for an exact duplicate, and an external judge is the blog's choice. A
    near-duplicate by score waits for a person. `accepted` are the articles a person already
    saw this job wait on and retried it anyway: the similarity to them is only recorded."""
    decision = verdict["decision"]
    if decision == "SKIP":
        return Verdict(State.SKIPPED, str(verdict.get("reason") or "judge: duplicate"))
    if decision == "UPDATE" and verdict.get("target") != target.path:
        return Verdict(
            State.REVIEW,
            f"judge pointed at another article ({verdict.get('target')}), "
            f"not this job's target {target.path}",
        )
    score = verdict.get("score")
    if decision != "NEW" or not isinstance(score, (int, float)):
        return None
    similar = verdict.get("similar")
    if similar in accepted:
        return None
    if score >= steps.similarity_skip:
        if steps.similar == "skip" and not target.explicit:
            return Verdict(
                State.SKIPPED, f'{shown(score)} similar to {similar} ([steps] similar = "skip")'
            )
        # SKIPPED is final and nobody looks at it again: a near-duplicate by 3-grams may be
        # another post written from the same template, so a person decides.
        return Verdict(
            State.REVIEW,
            f"{shown(score)} similar to {similar}: a near-duplicate waits for a person "
            "(retry publishes it, resolve --abandon drops it)",
            str(similar),
        )
    if steps.similar == "review" and score >= steps.similarity_update:
        return Verdict(
            State.REVIEW,
            f'{shown(score)} similar to {similar} ([steps] similar = "review")',
            str(similar),
        )
    return None
