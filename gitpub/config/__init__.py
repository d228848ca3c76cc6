"""`.blogpub.toml` plus the node-local user config, validated into one frozen Config: the
Config and its tables here, how each table is read and checked in `tables`."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from gitpub.core import userdirs
from gitpub.core.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

CONFIG_NAME = ".blogpub.toml"

MAX_SECONDS = 366 * 86400.0
"""The longest delay, timeout or lease a config may name: a year. Beyond that a timestamp
computed from it would overflow (and no sane setting is that long)."""

StepSpec = Union[str, tuple[str, ...]]
"""A step is "builtin:NAME" or an argv for an external command."""


@dataclass(frozen=True)
class PublishConfig:
    """`[publish]`: where articles go (remote, branch, content folders) and how they are
    committed."""

    remote: str = "origin"
    branch: str = "main"
    content: tuple[str, ...] = ("content/posts",)
    suffixes: tuple[str, ...] = (".mdx", ".md")
    max_source_bytes: int = 2 * 1024 * 1024
    max_asset_bytes: int = 10 * 1024 * 1024  # each asset; counted while it is read
    author: str | None = None  # "Name <email>" of job commits; None: gitpub <gitpub@NODE>
    sign: bool = False  # sign job commits with git's own signing setup
    path: str | None = None  # template: {slug}, {title}, {date:<strftime>}
    review: bool = False  # push each job to <review_prefix><slug>; published by a person's merge
    review_prefix: str = "blogpub/review/"


@dataclass(frozen=True)
class FontsConfig:
    """`[fonts]`: the source font and the subsets the font gate keeps in step with the articles."""

    source: str = "fonts/source.otf"
    face: int = 0
    outputs: tuple[str, ...] = ("public/fonts/blog.woff2",)
    always: str = "ascii"
    quality: int = 10
    missing: str = "warn"  # "warn" or "review": characters the source font lacks
    engine: str = "auto"  # "auto" (harfbuzz when importable), "harfbuzz" or "fonttools"
    # Which files' characters count: git glob pathspecs relative to the repository root.
    # Empty: every file under publish.content ending in one of publish.suffixes.
    articles: tuple[str, ...] = ()
    cjk_punctuation: bool = False  # also always keep the common CJK and fullwidth punctuation
    # A folder instead of `outputs`: blog.css (one @font-face per unicode-range slice) and one
    # .woff2 per slice the articles use (gitpub.config.slices); None: the single-file outputs.
    chunked: str | None = None
    family: str = "Blog Sans"  # the font-family the chunked CSS declares


BUILTIN_STEPS: dict[str, tuple[str, ...]] = {
    "draft": ("builtin:passthrough",),
    "judge": ("builtin:similarity",),
    "recheck": ("builtin:similarity",),
    "scan": ("builtin:secrets", "builtin:mdx"),
    "validate": ("builtin:mdx", "builtin:secrets"),
}
"""Which built-in can serve which step: each speaks only its own step's protocol."""


STEP_ROLES = ("draft", "judge", "recheck", "review", "scan", "validate")
"""The [steps] keys that name something to run (the others are numbers)."""


@dataclass(frozen=True)
class StepsConfig:
    """`[steps]`: what runs for each step of a job, and the limits on external steps."""

    draft: StepSpec = "builtin:passthrough"
    judge: StepSpec = "builtin:similarity"
    recheck: StepSpec = "builtin:similarity"
    review: tuple[tuple[str, ...], ...] = ()
    scan: StepSpec = "builtin:secrets"
    validate: StepSpec = "builtin:mdx"
    timeout: float = 120.0
    similarity_skip: float = 0.85  # at or above: a new article duplicates another one
    similarity_update: float = 0.5  # at or above (and below skip): the score is recorded
    similar: str = "record"  # "record" or "review": what a recorded similar score does
    # External steps of one worker at once (None: as many as it prepares at once), and how
    # often one may start ("60/min"; None: no limit): for model APIs with quotas.
    concurrency: int | None = None
    rate: str | None = None

    @property
    def start_spacing(self) -> float:
        """Seconds between two starts of external steps under `rate` (0: no limit)."""
        if self.rate is None:
            return 0.0
        count, _, unit = self.rate.partition("/")
        return RATE_UNITS[unit] / float(count)


RATE_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
"""The units of `[steps] rate`, in seconds."""


@dataclass(frozen=True)
class RetryConfig:
    """`[retry]`: attempts, back-off and leases of a job's delivery."""

    max_attempts: int = 8
    base_delay: float = 30.0
    max_delay: float = 3600.0
    probe_interval: float = 3600.0
    push_races: int = 5  # non-fast-forward rejections absorbed by fetch+rebase in one attempt
    lease_seconds: float = 600.0


HAND_EDITS = ("all", "committed", "off")


@dataclass(frozen=True)
class SyncConfig:
    """`[sync]`: what becomes of hand edits, and how often an idle worker fetches."""

    # What external_sync delivers: "all" (uncommitted content edits of the live checkout, which
    # it commits, and unpushed commits), "committed" (only commits a person made), "off".
    hand_edits: str = "all"
    # An idle worker fetches the published branch this often (seconds; 0 never), so that a
    # takedown by a deletion commit or a force-push is noticed with no job in flight.
    fetch_interval: float = 300.0


@dataclass(frozen=True)
class GcConfig:
    """`[gc]`: how long what finished jobs left behind is kept."""

    keep_days: float = 30.0  # refs/blog-jobs of finished jobs older than this are removed


@dataclass(frozen=True)
class ScanConfig:
    """`[scan]`: findings a person has judged harmless."""

    # Fingerprints of findings a person has judged not to be secrets (`git blogpub scan`
    # prints them); an allowed finding is published as written.
    allow: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Config:
    """One repository's settings: its `.blogpub.toml` and this node's user config."""

    root: Path
    publish: PublishConfig = field(default_factory=PublishConfig)
    fonts: FontsConfig | None = None
    steps: StepsConfig = field(default_factory=StepsConfig)
    retry: RetryConfig = field(default_factory=RetryConfig)
    gc: GcConfig = field(default_factory=GcConfig)
    sync: SyncConfig = field(default_factory=SyncConfig)
    scan: ScanConfig = field(default_factory=ScanConfig)
    node: str = "local"
    # Step roles whose external command, if any, comes from the repository's .blogpub.toml
    # rather than from this node's user config: those run only once the node allowed them.
    shared_steps: frozenset[str] = frozenset()
    # The shared store this node's jobs live in (`GITPUB_STORE`, or `[store] url` in the
    # user config); None: the embedded one. Never read from .blogpub.toml: whoever can push
    # must not be able to move a node's jobs. `ignored_store` says the shared file tried.
    store_url: str | None = None
    ignored_store: bool = False

    @property
    def font_outputs(self) -> tuple[str, ...]:
        """Every path the font gate may write: what gitpub stages and a job may change."""
        if self.fonts is None:
            return ()
        if self.fonts.chunked is not None:
            from gitpub.config.slices import output_paths  # only chunked fonts read the table

            return output_paths(self.fonts.chunked)
        return self.fonts.outputs


_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def valid_ref_name(ref: str) -> bool:
    """Whether git accepts `ref` as a reference name: the rules of git-check-ref-format(1)."""
    if not ref or _REF_FORBIDDEN.search(ref) or ref == "@":
        return False
    if ref.startswith("/") or ref.endswith(("/", ".")) or "/" not in ref:
        return False
    return not any(c.startswith(".") or c.endswith(".lock") for c in ref.split("/"))


def _read_toml(path: Path) -> dict[str, Any]:
    """The file's tables; a ConfigError naming the file (and the line where known) for bytes
    that are not UTF-8 or not TOML: anyone who can push may write this file, and a worker
    must be able to say what is wrong with it rather than stop on a decoding error."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at column {column}); "
            "TOML files are UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


IDENT = re.compile(r"^([^<>\n]*[^<>\s][^<>\n]*) <([^<>\s]+)>$")
"""A git identity, "Name <email>"."""


def split_ident(ident: str) -> tuple[str, str]:
    """("Name", "email") of a "Name <email>" identity checked by the loader."""
    found = IDENT.match(ident)
    assert found, ident
    return found.group(1).strip(), found.group(2)


def user_config_path() -> Path:
    return userdirs.config_dir() / "config.toml"


@dataclass(frozen=True)
class _UserConfig:
    """What the node-local user config names."""

    node: str | None = None
    steps: Mapping[str, Any] | None = None
    store_url: str | None = None


def _user_config(path: Path) -> _UserConfig:
    if not path.is_file():
        return _UserConfig()
    data = _read_toml(path)
    allowed = {"node", "steps", "store"}
    for key in data:
        if key not in allowed:
            raise ConfigError(f"{path}: unknown key {key} (known: node, steps, store)")
    node = data.get("node")
    if node is not None and (not isinstance(node, str) or not node.strip()):
        raise ConfigError(f"{path}: node must be a non-empty string")
    store = data.get("store", {})
    if not isinstance(store, dict) or set(store) - {"url"}:
        raise ConfigError(f"{path}: [store] takes one key, url")
    url = store.get("url")
    if url is not None and not (isinstance(url, str) and url.startswith(STORE_SCHEMES)):
        raise ConfigError(f"{path}: [store] url must be a postgresql:// URL")
    return _UserConfig(node, data.get("steps"), url)


STORE_SCHEMES = ("postgresql://", "postgres://")


def node_store_url() -> str | None:
    """The shared store this node is on, without loading the blog's config."""
    return store_url(_user_config(user_config_path()).store_url)


def store_url(user: str | None) -> str | None:
    """`GITPUB_STORE` (empty: the embedded store), else the user config's `[store] url`."""
    env = os.environ.get("GITPUB_STORE")
    if env is None:
        return user
    if env and not env.startswith(STORE_SCHEMES):
        raise ConfigError("GITPUB_STORE must be a postgresql:// URL (or empty: the embedded store)")
    return env or None


def load(root: Path) -> Config:
    """Load `<root>/.blogpub.toml` (defaults when absent) and the node-local user config."""
    from gitpub.config import tables  # it builds on the types above

    path = root / CONFIG_NAME
    data = _read_toml(path) if path.exists() else {}
    for key in data:
        if key not in {"publish", "fonts", "steps", "retry", "gc", "scan", "sync", "store"}:
            raise ConfigError(
                f"{path}: unknown table [{key}] "
                "(known: publish, fonts, steps, retry, gc, scan, sync)"
            )
    shared_table = data.get("steps", {})
    steps = tables.steps(path, shared_table, StepsConfig())
    user_path = user_config_path()
    user = _user_config(user_path)
    user_node, user_steps = user.node, user.steps
    if user_steps is not None:
        steps = tables.steps(user_path, user_steps, steps)
    shared = set(shared_table).intersection(STEP_ROLES) - set(user_steps or {})
    node = os.environ.get("GITPUB_NODE") or user_node or "local"
    _no_secret_in_node(node, "GITPUB_NODE" if os.environ.get("GITPUB_NODE") else str(user_path))
    fonts = tables.fonts(path, data["fonts"]) if "fonts" in data else None
    return Config(
        root=root,
        publish=tables.publish(path, data.get("publish", {})),
        fonts=fonts,
        steps=steps,
        retry=tables.retry(path, data.get("retry", {})),
        gc=tables.gc(path, data.get("gc", {})),
        sync=tables.sync(path, data.get("sync", {})),
        scan=tables.scan(path, data.get("scan", {})),
        node=_single_line(node),
        shared_steps=frozenset(shared),
        store_url=store_url(user.store_url),
        ignored_store="store" in data,
    )


def _no_secret_in_node(node: str, where: str) -> None:
    """The node name goes into every job commit's `Blog-Writer-Node` trailer, pushed to the
    remote: a token in it (a node named after a CI job's secret) would be published."""
    from gitpub import scan

    found = scan.scan(node)
    if found:
        raise ConfigError(
            f"{where}: the node name holds what looks like a secret ({found[0].kind}); "
            "it is written into every job commit"
        )


def _single_line(value: str) -> str:
    # The node name becomes a trailer value: a newline would forge further trailers.
    return " ".join(value.split())
