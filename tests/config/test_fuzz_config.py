"""`.blogpub.toml` and the node's own config, fuzzed: tables and keys gitpub knows and does
not, values of every TOML type (huge integers, NaN, infinities, dates, nested tables), and
bytes that are no TOML at all. Anyone who can push may write the first file.

The loader either gives a Config or refuses with a ConfigError (never another exception); a
command on such a config ends as a user expects (one line, exit 1, no traceback, no secret
of the file repeated) and a refused submit records nothing."""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from testing import fuzzing
from testing.fixtures import Blog, article

KNOWN = {
    "publish": [
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
    ],
    "fonts": ["source", "face", "outputs", "always", "quality", "missing", "chunked", "family"],
    "steps": ["draft", "judge", "recheck", "review", "scan", "validate", "timeout", "similar"],
    "retry": ["max_attempts", "base_delay", "max_delay", "probe_interval", "push_races"],
    "gc": ["keep_days"],
    "scan": ["allow"],
    "sync": ["hand_edits"],
    "store": ["url"],
}
NODE = {"": ["node"], "steps": KNOWN["steps"], "store": ["url"]}
"""The node's file. A store URL that names a real database server is the shared-store
suite's to try: none is drawn here (the words drawn are no postgresql:// URL)."""

SCALAR = st.one_of(
    fuzzing.words(surrogates=False),
    st.sampled_from(
        [
            "content/posts",
            "builtin:passthrough",
            "builtin:nope",
            "origin",
            "main",
            "main/x",
            "HEAD",
            "-x",
            "a..b",
            "{slug}{date:%Y}",
            "{nope}",
        ]
    ),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([0, 1, -1, 2**31, 2**62]),
    st.floats(),  # NaN and the infinities included
    st.booleans(),
    st.datetimes(timezones=st.just(timezone.utc)),
    st.dates(),
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "url"]), inner, max_size=2),
    ),
    max_leaves=5,
)


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, str):
        return json.dumps(value)  # TOML's basic strings take JSON's escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    inner = ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items())
    return "{" + inner + "}"


@st.composite
def config_files(draw: st.DrawFn, tables: dict[str, list[str]]) -> bytes:
    """A config file: known tables and keys (sometimes unknown ones) with any values, now and
    then bent into bytes that are not UTF-8 or not TOML."""
    lines = []
    names = draw(st.lists(st.sampled_from(sorted(tables)), unique=True, max_size=4))
    if draw(st.integers(0, 7)) == 0:
        names.append(draw(st.sampled_from(["nope", "publish.deep", "Publish"])))
    for table in names:
        if table:
            lines.append(f"[{table}]")
        keys = tables.get(table, ["x"])
        for key in draw(st.lists(st.sampled_from(keys), unique=True, max_size=3)):
            lines.append(f"{toml_key(key)} = {toml_value(draw(VALUE))}")
        if draw(st.integers(0, 9)) == 0:
            lines.append(f"{toml_key(draw(fuzzing.words(surrogates=False)))} = 1")
    data = ("\n".join(lines) + "\n").encode("utf-8")
    bend = draw(st.integers(0, 11))
    if bend == 0:
        data += b"# r\xe9sum\xe9\n"
    elif bend == 1:
        data = data[: draw(st.integers(0, len(data)))]
    elif bend == 2:
        data = b"\xef\xbb\xbf" + data
    elif bend == 3:
        data += f'remote = "{fuzzing.GH_TOKEN}"\n'.encode()
    return data


def _loads_or_refuses(root: Path) -> None:
    """A Config or a ConfigError, never another exception; the line as a command shows it."""
    from gitpub import config
    from gitpub.core.errors import ConfigError, one_line
    from gitpub.scan.sanitize import sanitize

    try:
        config.load(root)
    except ConfigError as exc:
        fuzzing.check_line(one_line(sanitize(exc.message)), root)


def _door(blog: Blog, src: Path) -> None:
    before = fuzzing.written(blog.root)
    argv = ["submit", "--key", "cfg", "--source", str(src), "--json"]
    code, out, err = fuzzing.in_process(blog.root, argv, b"")
    fuzzing.check_refusal(code, out, err, argv)
    if code != 0:
        assert fuzzing.written(blog.root) == before, err


def test_the_shared_config(blog: Blog) -> None:
    src = blog.root.parent / "cfg.mdx"
    src.write_text(article("Config", "Under a fuzzed config."))
    path = blog.root / ".blogpub.toml"
    kept = path.read_bytes()

    @given(data=config_files(KNOWN))
    @fuzzing.budget(2.5)
    def one(data: bytes) -> None:
        fuzzing.tried("config-shared")
        path.write_bytes(data)
        try:
            _loads_or_refuses(blog.root)
            _door(blog, src)
        finally:
            path.write_bytes(kept)

    one()


def test_the_node_config(blog: Blog) -> None:
    from gitpub import config

    src = blog.root.parent / "node.mdx"
    src.write_text(article("Node", "Under a fuzzed node config."))
    path = config.user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)

    @given(data=config_files(NODE))
    @fuzzing.budget(1.5)
    def one(data: bytes) -> None:
        fuzzing.tried("config-node")
        path.write_bytes(data)
        try:
            _loads_or_refuses(blog.root)
            _door(blog, src)
        finally:
            path.unlink()

    one()


def test_found_a_key_holding_a_newline_is_named_on_one_line(blog: Blog) -> None:
    """`"a\\nb" = 1` under [fonts]: the refusal named the key raw, on two lines."""
    src = blog.root.parent / "nl.mdx"
    src.write_text(article("Newline", "Under a key with a newline."))
    (blog.root / ".blogpub.toml").write_text('[fonts]\n"a\\nb" = 1\n')
    code, out, err = fuzzing.in_process(
        blog.root, ["submit", "--key", "nl", "--source", str(src)], b""
    )
    assert code == 1
    (line,) = err.splitlines()
    assert "unknown key fonts.'a\\nb'" in line, line
