"""Each table of `.blogpub.toml` read and checked into its part of the Config; every error
names the file and the dotted key."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from gitpub.config import (
    BUILTIN_STEPS,
    HAND_EDITS,
    IDENT,
    MAX_SECONDS,
    RATE_UNITS,
    FontsConfig,
    GcConfig,
    PublishConfig,
    RetryConfig,
    ScanConfig,
    StepsConfig,
    StepSpec,
    SyncConfig,
    faces,
    valid_ref_name,
)
from gitpub.core.errors import ConfigError


class _Reader:
    """Reads one TOML table, naming file and dotted key in every error."""

    def __init__(self, path: Path, table: str, data: object) -> None:
        self.path = path
        self.table = table
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: [{table}] must be a table")
        self.data: dict[str, object] = data

    def _key(self, key: str) -> str:
        return f"{self.table}.{key}" if key.isprintable() else f"{self.table}.{key!r}"

    def _fail(self, key: str, expected: str) -> ConfigError:
        got = type(self.data[key]).__name__
        return ConfigError(f"{self.path}: {self._key(key)} must be {expected}, got {got}")

    def check_known(self, known: set[str]) -> None:
        for key in self.data:
            if key not in known:
                raise ConfigError(
                    f"{self.path}: unknown key {self._key(key)} (known: {', '.join(sorted(known))})"
                )

    def string(self, key: str, default: str) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str) or not value:
            raise self._fail(key, "a non-empty string")
        return value

    def integer(self, key: str, default: int, lo: int, hi: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(key, "an integer")
        if not lo <= value <= hi:
            raise ConfigError(
                f"{self.path}: {self._key(key)} must be an integer from {lo} to {hi}, got {value}"
            )
        return value

    def number(self, key: str, default: float, lo: float = 0.0, hi: float = MAX_SECONDS) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._fail(key, "a number")
        # NaN compares false with everything, so it would pass a plain range check and then
        # turn every deadline computed from it into nonsense.
        if not math.isfinite(value) or not lo <= value <= hi:
            raise ConfigError(
                f"{self.path}: {self._key(key)} must be a number from {_num(lo)} to {_num(hi)}, "
                f"got {value}"
            )
        return float(value)

    def strings(self, key: str, default: tuple[str, ...], nonempty: bool = True) -> tuple[str, ...]:
        value = self.data.get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self._fail(key, "a list of non-empty strings")
        if nonempty and not value:
            raise ConfigError(f"{self.path}: {self._key(key)} must not be empty")
        return tuple(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self._fail(key, "a boolean")
        return value

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.string(key, default)
        if value not in choices:
            raise ConfigError(
                f"{self.path}: {self._key(key)} must be one of {', '.join(choices)}, got {value!r}"
            )
        return value

    def step(self, key: str, default: StepSpec, optional: bool = False) -> StepSpec:
        value = self.data.get(key, default)
        if optional and isinstance(value, (list, tuple)) and not value:
            return ()  # an empty list turns this gate off
        if isinstance(value, str) and value.startswith("builtin:"):
            known = BUILTIN_STEPS[key]
            if value not in known:
                raise ConfigError(
                    f"{self.path}: {self._key(key)} = {value!r} is not a built-in {key} step "
                    f"(known: {', '.join(known)})"
                )
            return value
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise ConfigError(
            f'{self.path}: {self._key(key)} must be "builtin:NAME" or a non-empty argv list'
        )


SIMILAR = ("record", "review", "skip")
"""What `[steps] similar` does with a similar article: "record" its score (a near-duplicate,
at or above `similarity_skip`, still waits for a person), "review" every score from
`similarity_update` up, or "skip" a near-duplicate (the one setting under which a score may
end a post; an explicit target still only goes to REVIEW)."""


def _num(x: float) -> str:
    return f"{x:g}" if x < 1e6 else str(int(x))


def _relative_path(path: Path, key: str, value: str) -> str:
    pure = Path(value)
    if pure.is_absolute() or ".." in pure.parts or value.startswith("~"):
        raise ConfigError(f"{path}: {key} must be a path inside the repository, got {value!r}")
    if any(part.casefold() == ".git" for part in pure.parts):
        raise ConfigError(f"{path}: {key} must not be inside .git, got {value!r}")
    text = pure.as_posix().rstrip("/")
    if text in ("", "."):
        # The whole repository as a content folder would make every file an article.
        raise ConfigError(f"{path}: {key} must name a folder below the repository root, not '.'")
    return text


def _branch_name(path: Path, key: str, value: str, ref: str) -> str:
    if value.startswith("-") or value == "HEAD" or not valid_ref_name(ref):
        raise ConfigError(
            f"{path}: {key} {value!r} is not a name git accepts (git check-ref-format)"
        )
    return value


def _font_source(path: Path, value: str) -> str:
    """fonts.source must be a file of the repository: every node, and every job worktree,
    builds the subsets from the same bytes."""
    root = path.parent.resolve()
    pure = Path(value).expanduser()
    inside = (pure.is_absolute() and Path(os.path.normpath(pure)).is_relative_to(root)) or (
        not pure.is_absolute() and not os.path.normpath(pure).startswith("..")
    )
    if not inside:
        raise ConfigError(
            f"{path}: fonts.source {value!r} is outside the repository; copy the font into it "
            "(e.g. fonts/) and name it relative to the repository root"
        )
    if any(part.casefold() == ".git" for part in pure.parts):
        raise ConfigError(f"{path}: fonts.source must not be inside .git, got {value!r}")
    return value


def publish(path: Path, data: object) -> PublishConfig:
    r = _Reader(path, "publish", data)
    r.check_known(
        {
            "remote",
            "branch",
            "content",
            "suffixes",
            "max_source_bytes",
            "max_asset_bytes",
            "author",
            "sign",
            "path",
            "review",
            "review_prefix",
        }
    )
    d = PublishConfig()
    content = tuple(
        _relative_path(path, "publish.content", c) for c in r.strings("content", d.content)
    )
    suffixes = r.strings("suffixes", d.suffixes)
    for s in suffixes:
        if not s.startswith("."):
            raise ConfigError(f"{path}: publish.suffixes entries must start with '.', got {s!r}")
    template = r.string("path", "-") if "path" in r.data else None
    if template is not None:
        from gitpub.site.paths import check_template  # only a blog that sets a path template

        why = check_template(template)
        if why:
            raise ConfigError(f"{path}: publish.path = {template!r}: {why}")
    remote = r.string("remote", d.remote)
    branch = r.string("branch", d.branch)
    prefix = r.string("review_prefix", d.review_prefix)
    if not prefix.endswith("/"):
        raise ConfigError(f"{path}: publish.review_prefix must end with '/', got {prefix!r}")
    _branch_name(path, "publish.review_prefix", prefix, f"refs/heads/{prefix}x")
    if prefix.startswith(branch + "/"):
        # git cannot hold both refs/heads/main and refs/heads/main/…
        raise ConfigError(f"{path}: publish.review_prefix {prefix!r} is inside publish.branch")
    return PublishConfig(
        path=template,
        remote=_branch_name(path, "publish.remote", remote, f"refs/remotes/{remote}/x"),
        branch=_branch_name(path, "publish.branch", branch, f"refs/heads/{branch}"),
        content=content,
        suffixes=suffixes,
        max_source_bytes=r.integer("max_source_bytes", d.max_source_bytes, lo=1, hi=2**30),
        max_asset_bytes=r.integer("max_asset_bytes", d.max_asset_bytes, lo=1, hi=2**30),
        author=_author(path, r.data.get("author")),
        sign=r.boolean("sign", d.sign),
        review=r.boolean("review", d.review),
        review_prefix=prefix,
    )


def _author(path: Path, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not IDENT.match(value.strip()):
        raise ConfigError(f'{path}: publish.author must be "Name <email>", got {value!r}')
    return value.strip()


def fonts(path: Path, data: object) -> FontsConfig:
    r = _Reader(path, "fonts", data)
    r.check_known(
        {
            "source",
            "face",
            "outputs",
            "always",
            "quality",
            "missing",
            "engine",
            "articles",
            "cjk_punctuation",
            "chunked",
            "family",
        }
    )
    d = FontsConfig()
    chunked = _chunked(path, r)
    outputs = (
        ()
        if chunked
        else tuple(
            _relative_path(path, "fonts.outputs", o) for o in r.strings("outputs", d.outputs)
        )
    )
    for o in outputs:
        if not o.endswith((".woff2", ".woff")):
            raise ConfigError(f"{path}: fonts.outputs entries must end in .woff2 or .woff: {o!r}")
    if len(set(outputs)) != len(outputs):
        raise ConfigError(f"{path}: fonts.outputs lists the same file twice")
    source = _font_source(path, r.string("source", d.source))
    if not source.lower().endswith((".ttf", ".otf", ".ttc", ".otc")):
        raise ConfigError(f"{path}: fonts.source must be a .ttf, .otf or .ttc file: {source!r}")
    articles = tuple(
        _relative_path(path, "fonts.articles", a)
        for a in r.strings("articles", d.articles, nonempty=False)
    )
    punctuation = r.data.get("cjk_punctuation", d.cjk_punctuation)
    if not isinstance(punctuation, bool):
        raise r._fail("cjk_punctuation", "a boolean")
    return FontsConfig(
        source=source,
        face=r.integer("face", d.face, lo=0, hi=65535)
        if "face" in r.data
        else faces.default_face(path.parent, source),
        outputs=outputs,
        always=r.string("always", d.always),
        quality=r.integer("quality", d.quality, lo=0, hi=11),
        missing=r.choice("missing", d.missing, ("warn", "review")),
        engine=r.choice("engine", d.engine, ("auto", "harfbuzz", "fonttools")),
        articles=articles,
        cjk_punctuation=punctuation,
        chunked=chunked,
        family=_family(path, r.string("family", d.family)),
    )


def _chunked(path: Path, r: _Reader) -> str | None:
    if "chunked" not in r.data:
        return None
    if "outputs" in r.data:
        # Both would be written and both staged: say which one the blog means.
        raise ConfigError(
            f"{path}: fonts.chunked and fonts.outputs exclude each other; keep chunked (a folder "
            "of unicode-range chunks) or outputs (single subset files)"
        )
    folder = _relative_path(path, "fonts.chunked", r.string("chunked", "-"))
    if folder.lower().endswith((".woff2", ".woff", ".css")):
        raise ConfigError(f"{path}: fonts.chunked names a folder, not a file: {folder!r}")
    return folder


def _family(path: Path, value: str) -> str:
    # It is written between double quotes in the CSS: a quote, backslash or line break
    # would end the string and let the config write CSS of its own.
    if any(c in value for c in '"\\\n\r') or not value.isprintable():
        raise ConfigError(
            f"{path}: fonts.family must be printable text without quotes or backslashes, "
            f"got {value!r}"
        )
    return value


def steps(path: Path, data: object, base: StepsConfig) -> StepsConfig:
    r = _Reader(path, "steps", data)
    r.check_known(
        {
            "draft",
            "judge",
            "recheck",
            "review",
            "scan",
            "validate",
            "timeout",
            "similarity_skip",
            "similarity_update",
            "similar",
            "concurrency",
            "rate",
        }
    )
    review_raw = r.data.get("review", [list(a) for a in base.review])
    if not isinstance(review_raw, list) or not all(
        isinstance(a, list) and a and all(isinstance(x, str) for x in a) for a in review_raw
    ):
        raise ConfigError(f"{path}: steps.review must be a list of argv lists")
    return StepsConfig(
        draft=r.step("draft", base.draft),
        judge=r.step("judge", base.judge),
        recheck=r.step("recheck", base.recheck),
        review=tuple(tuple(a) for a in review_raw),
        scan=r.step("scan", base.scan),
        validate=r.step("validate", base.validate, optional=True),
        timeout=r.number("timeout", base.timeout, lo=0.001),
        similarity_skip=r.number("similarity_skip", base.similarity_skip, hi=1.0),
        similarity_update=r.number("similarity_update", base.similarity_update, hi=1.0),
        similar=r.choice("similar", base.similar, SIMILAR),
        concurrency=(
            r.integer("concurrency", 1, lo=1, hi=MAX_STEPS_AT_ONCE)
            if "concurrency" in r.data
            else base.concurrency
        ),
        rate=_rate(path, r.data["rate"]) if "rate" in r.data else base.rate,
    )


MAX_STEPS_AT_ONCE = 256

_RATE = re.compile(r"([1-9][0-9]{0,5})/([a-z]+)", re.ASCII)


def _rate(path: Path, value: object) -> str:
    """`[steps] rate`: a count of starts per unit, "60/min" or "5/s"; checked here so that
    `StepsConfig.start_spacing` never divides by zero or meets a unit it lacks."""
    found = _RATE.fullmatch(value) if isinstance(value, str) else None
    if found is None or found[2] not in RATE_UNITS:
        shown = repr(value[:60]) if isinstance(value, str) else type(value).__name__
        raise ConfigError(
            f"{path}: steps.rate must be a whole count of starts per s, min or h, such as "
            f'"60/min" or "5/s", got {shown}'
        )
    return str(value)


def retry(path: Path, data: object) -> RetryConfig:
    r = _Reader(path, "retry", data)
    r.check_known(
        {"max_attempts", "base_delay", "max_delay", "probe_interval", "push_races", "lease_seconds"}
    )
    d = RetryConfig()
    return RetryConfig(
        max_attempts=r.integer("max_attempts", d.max_attempts, lo=1, hi=1000),
        base_delay=r.number("base_delay", d.base_delay),
        max_delay=r.number("max_delay", d.max_delay),
        probe_interval=r.number("probe_interval", d.probe_interval),
        push_races=r.integer("push_races", d.push_races, lo=1, hi=100),
        lease_seconds=r.number("lease_seconds", d.lease_seconds, lo=0.1),
    )


def scan(path: Path, data: object) -> ScanConfig:
    from gitpub.scan import FINGERPRINT_CHARS

    r = _Reader(path, "scan", data)
    r.check_known({"allow"})
    allow = r.strings("allow", (), nonempty=False)
    for value in allow:
        if len(value) != FINGERPRINT_CHARS or value.strip("0123456789abcdef"):
            raise ConfigError(
                f"{path}: scan.allow entry {value!r} is not a fingerprint "
                f"({FINGERPRINT_CHARS} hex digits, as `git blogpub scan` prints them)"
            )
    return ScanConfig(allow=frozenset(allow))


def gc(path: Path, data: object) -> GcConfig:
    r = _Reader(path, "gc", data)
    r.check_known({"keep_days"})
    return GcConfig(keep_days=r.number("keep_days", GcConfig().keep_days, hi=36500.0))


def sync(path: Path, data: object) -> SyncConfig:
    r = _Reader(path, "sync", data)
    r.check_known({"hand_edits", "fetch_interval"})
    return SyncConfig(
        hand_edits=r.choice("hand_edits", SyncConfig().hand_edits, HAND_EDITS),
        fetch_interval=r.number("fetch_interval", SyncConfig().fetch_interval),
    )
