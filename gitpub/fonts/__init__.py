"""CJK web-font subsets that hold exactly the characters the blog's articles use.

`gate` is the prepare step (in the job worktree), `regenerate` rebuilds the subsets in any
checkout, `stale` tells which ones are out of date. All three start from the same plan: the
characters of every article in the checkout plus the always-kept ones, intersected with what
the source font covers. The digest of that set and of the source font decides: an output
whose stamp already names them is current and costs no subsetting at all."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypedDict

from gitpub.config import Config, FontsConfig, slices
from gitpub.core import crash
from gitpub.core.errors import GitpubError
from gitpub.core.files import public_mode, write_atomic
from gitpub.fonts import charset, chunks, engine, unchanged
from gitpub.fonts.source import FontError, SourceFont, load
from gitpub.git.repo import Repo

__all__ = [
    "FontError",
    "FontsAnswer",
    "Plan",
    "compose",
    "gate",
    "outputs_differ",
    "plan",
    "regenerate",
    "stale",
    "stale_reason",
]

Progress = Callable[[str, int, int], None]
"""progress(label, steps done, steps in all): called as long work moves on."""


class Plan:
    # A plain class, not a dataclass: `git blogpub fonts` with nothing changed imports this
    # module, and the dataclasses module alone would cost it a tenth of its time.
    def __init__(
        self,
        root: Path,
        fonts: FontsConfig,
        source: SourceFont,
        articles: charset.Articles,
        keep: frozenset[int],
    ) -> None:
        self.root = root
        self.fonts = fonts
        self.source = source
        self.articles = articles
        self.keep = keep  # (article characters ∪ always) ∩ source coverage
        self.reasons: dict[str, str] = {}  # stale output → why
        # Font file → the code points it holds: `keep` for each single-file output; one
        # slice of `keep` per chunk file of a chunked font.
        self.targets: dict[str, frozenset[int]] = {}
        self.css: tuple[str, str] | None = None  # chunked: (stylesheet path, its text)

    def stamp(self, output: str) -> dict[str, Any]:
        chars = self.targets.get(output, self.keep)
        stamp: dict[str, Any] = {
            "gitpub": engine.PIPELINE,
            "chars": charset.digest(chars),
            "count": len(chars),
            "source": self.source.sha256,
            "face": self.source.face,
        }
        if output.endswith(".woff2"):
            stamp["quality"] = self.fonts.quality
        if self.css is not None:
            stamp["slicing"] = slices.SLICING
        return stamp

    def outputs(self) -> list[str]:
        """Every file this plan keeps current, fonts first, the stylesheet last."""
        return [*self.targets, *([self.css[0]] if self.css else [])]


def _fonts(cfg: Config) -> FontsConfig:
    if cfg.fonts is None:
        raise GitpubError(f"{cfg.root / '.blogpub.toml'}: no [fonts] table; nothing to build")
    return cfg.fonts


def plan(cfg: Config, root: Path, *, source_blob: str | None = None) -> Plan:
    fc = _fonts(cfg)
    source = load(fc, root, source_blob)
    articles = charset.read_articles(cfg, root)
    p = compose(fc, root, source, articles, articles.chars)
    for output in p.outputs():
        try:
            data: bytes | None = (root / output).read_bytes()
        except FileNotFoundError:
            data = None
        why = stale_reason(p, output, data)
        if why:
            p.reasons[output] = why
    return p


def compose(
    fc: FontsConfig,
    root: Path,
    source: SourceFont,
    articles: charset.Articles,
    used: frozenset[int],
) -> Plan:
    """The plan's outputs for the characters `used`, before anything is compared."""
    keep = frozenset((used | charset.always(fc)) & source.coverage)
    p = Plan(root, fc, source, articles, keep)
    if fc.chunked is None:
        p.targets = {output: keep for output in fc.outputs}
    else:
        parts = slices.split(keep)
        p.targets = {
            f"{fc.chunked}/{chunks.file_name(name)}": parts[name]
            for name in sorted(parts, key=slices.names().index)
        }
        p.css = (f"{fc.chunked}/{slices.CSS_NAME}", chunks.css(fc, parts))
    return p


def stale_reason(p: Plan, output: str, data: bytes | None) -> str | None:
    """Why `data`, the bytes an output holds now (None: no such file), is not what the plan
    makes; None when it is."""
    if data is None:
        return "missing"
    if p.css is not None and output == p.css[0]:
        return None if data == p.css[1].encode("utf-8") else "slices changed"
    want = p.stamp(output)
    have = engine.read_stamp(data)
    if have == want:
        return None
    if have is None:
        return "not built by gitpub"
    for key, why in (
        ("gitpub", "built by another gitpub version"),
        ("source", "source font changed"),
        ("face", "source face changed"),
        ("chars", "characters changed"),
        ("quality", "quality changed"),
    ):
        if have.get(key) != want.get(key):
            return why
    return "stamp differs"


def stale(cfg: Config, root: Path, *, private: bool = False) -> dict[str, str]:
    """Output path → why it is stale, for every output that a rebuild would change.

    `private`: `root` is one of gitpub's own checkouts, where nobody edits the source font,
    so its facts are found by its blob id at HEAD (see `_pristine_blob`)."""
    if not private and unchanged.current(cfg, root):
        return {}
    p = plan(cfg, root, source_blob=_private_blob(cfg, root) if private else None)
    if not p.reasons and not private:  # a private checkout is gone in a moment
        _remember(cfg, p)
    return dict(p.reasons)


def _remember(cfg: Config, p: Plan) -> None:
    unchanged.remember(cfg, p.root, p.source.path, sorted(p.articles.files), p.outputs())


def build(
    p: Plan,
    *,
    heartbeat: Callable[[], None] | None = None,
    progress: Progress | None = None,
    log: list[str] | None = None,
) -> list[str]:
    """Write every stale output of the plan (atomically, one by one); returns those whose
    bytes changed. The font libraries' warnings are collected into `log`, never printed."""
    with engine.captured_log(log if log is not None else []):
        return _build(p, heartbeat, progress)


def _build(p: Plan, heartbeat: Callable[[], None] | None, progress: Progress | None) -> list[str]:
    todo = [o for o in p.outputs() if o in p.reasons]
    for output in p.outputs():
        _remove_leftovers(p.root / output)
    if not todo:
        return []
    total = len(todo)
    if progress:
        progress("subsetting", 0, total)
    chosen = engine.choose(p.fonts.engine)
    sfnts: dict[frozenset[int], bytes] = {}  # the single-file outputs share one subset
    changed = []
    for done, output in enumerate(todo, start=1):
        if progress:
            progress(f"writing {Path(output).name}", done - 1, total)
        if p.css is not None and output == p.css[0]:
            data = p.css[1].encode("utf-8")
        else:
            chars = p.targets[output]
            if chars not in sfnts:
                sfnts[chars] = engine.subset(p.source, chars, chosen)
                if heartbeat:
                    heartbeat()
            flavor = "woff2" if output.endswith(".woff2") else "woff"
            data = engine.encode(sfnts[chars], flavor, p.fonts.quality, p.stamp(output))
        path = p.root / output
        if not path.is_file() or path.read_bytes() != data:
            write_atomic(path, data, public_mode())
            changed.append(output)
        # The outputs are a set: a death here leaves some written and some not. The job
        # worktree is private and the gate runs again; the live checkout is never touched.
        crash.point("during_font_regeneration")
        if heartbeat:
            heartbeat()
    if progress:
        progress("done", total, total)
    return changed


def _remove_leftovers(path: Path) -> None:
    """Temporary files a killed writer left next to an output."""
    if path.parent.is_dir():
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            tmp.unlink(missing_ok=True)


def regenerate(
    cfg: Config,
    root: Path,
    *,
    progress: Progress | None = None,
    private: bool = False,
    prune: bool = False,
) -> list[str]:
    """Rebuild the subsets in the checkout at `root` from its articles; returns the output
    paths whose bytes changed. `private` as for `stale`. `prune`: also delete the chunks of
    slices no article uses any more (a person's checkout only: a job never deletes)."""
    if not private and unchanged.current(cfg, root):
        return []
    p = plan(cfg, root, source_blob=_private_blob(cfg, root) if private else None)
    changed = build(p, progress=progress)
    if prune and p.fonts.chunked is not None:
        changed += _prune(p, p.fonts.chunked)
    if not private:
        _remember(cfg, p)
    return changed


def _prune(p: Plan, folder: str) -> list[str]:
    known = set(slices.names())
    gone = []
    for file in sorted((p.root / folder).glob("*.woff2")):
        output = f"{folder}/{file.name}"
        if file.stem in known and output not in p.targets:
            file.unlink()
            gone.append(output)
    return gone


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class FontsAnswer(TypedDict):
    """The font gate's answer, recorded as prepare's `fonts` step."""

    outputs: dict[str, str]  # each output that differs from the base -> its bytes' SHA-256
    written: list[str]  # the outputs subset anew
    engine: str | None
    chars: int
    charset_sha256: str
    source_sha256: str
    missing: dict[str, object]  # the characters the source font lacks
    missing_new: dict[str, object]  # those of them the change brings in
    review: str | None  # why a person looks, under `missing = "review"`
    seconds: float
    log: list[str]


def gate(
    cfg: Config,
    worktree: Path,
    heartbeat: Callable[[], None] | None = None,
    *,
    on: tuple[Repo, str] | None = None,
    written: Sequence[str] = (),
) -> FontsAnswer:
    """The font gate of prepare, in the job worktree — or, `on` (repository, commit) given,
    in a folder holding only the job's `written` files, reading the rest from the commit
    (`treegate`).

    Writes the stale subsets and answers with the outputs that differ from the worktree's
    HEAD (they belong in the job commit, next to the article), the characters the source
    font lacks, and — under `missing = "review"` — a reason when the change brings in a
    character the font cannot draw. A font that cannot be read raises FontError."""
    if on is not None:
        from gitpub.fonts import treegate

        files = {p: (worktree / p).read_bytes() for p in written}
        return treegate.gate(cfg, on[0], on[1], worktree, files, heartbeat)
    started = time.monotonic()
    log: list[str] = []
    repo = Repo(worktree)
    head = repo.resolve("HEAD")
    with engine.captured_log(log):  # reading the source can warn too
        p = plan(cfg, worktree, source_blob=_pristine_blob(repo, head, _fonts(cfg)))
    written = build(p, heartbeat=heartbeat, log=log)
    outputs = {}
    for output in p.outputs():
        path = worktree / output
        if not path.is_file():
            continue
        data = path.read_bytes()
        if head is None or repo.blob_at(head, output) != data:
            outputs[output] = hashlib.sha256(data).hexdigest()
    used = p.articles.chars
    missing = charset.visible(used - p.source.coverage)
    if missing:
        before = p.articles.baseline(cfg)
        new = [cp for cp in missing if cp not in before]
    else:
        new = []
    review = None
    if new and p.fonts.missing == "review":
        sample = "".join(chr(c) for c in new[:20])
        review = f"the source font lacks {len(new)} character(s) the change uses: {sample}"
    return {
        "outputs": outputs,
        "written": written,
        "engine": engine.choose(p.fonts.engine) if written else None,
        "chars": len(p.keep),
        "charset_sha256": charset.digest(p.keep),
        "source_sha256": p.source.sha256,
        "missing": charset.summary(missing),
        "missing_new": charset.summary(new),
        "review": review,
        "seconds": round(time.monotonic() - started, 3),
        "log": log,
    }


def _private_blob(cfg: Config, root: Path) -> str | None:
    repo = Repo(root)
    return _pristine_blob(repo, repo.resolve("HEAD"), _fonts(cfg))


def _pristine_blob(repo: Repo, head: str | None, fc: FontsConfig) -> str | None:
    """The blob id the source font holds in a job's private checkout: fresh from the commit
    at HEAD, never edited there. None for a link (the bytes are the target's, not the
    link's) or a font outside the tree."""
    if head is None or Path(fc.source).is_absolute():
        return None
    try:
        entry = repo.commit(head).tree[fc.source]
    except (KeyError, ValueError):
        return None
    if entry.filemode not in (0o100644, 0o100755):
        return None
    return str(entry.id)


def outputs_differ(worktree: Path, outputs: dict[str, str]) -> bool:
    """True when a file the gate answered with is absent or holds other bytes."""
    for output, digest in outputs.items():
        path = worktree / output
        if not path.is_file() or _sha256_file(path) != digest:
            return True
    return False
