"""Docs you can run: the README's walkthrough, Python API and font commands run as written in
a scratch blog, and the example config names every key the configuration knows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testing.fixtures import Blog, article, make_blog
from testing.fontkit import chars, cmap, tiny_font
from testing.paths import ROOT

from gitpub import config
from gitpub.core.errors import ConfigError

README = (ROOT / "README.md").read_text("utf-8")


def _blocks(section: str, lang: str) -> list[str]:
    body = README.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", body, re.S)


def _env() -> dict[str, str]:
    # `git blogpub` is this interpreter's console script, as after `pip install`.
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def _sh(cwd: Path, script: str) -> str:
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{script}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc.stdout


@pytest.fixture
def scratch(tmp_path: Path) -> Blog:
    """A clone of a shared remote, with what the walkthrough asks the reader to have."""
    mine = make_blog(tmp_path).clone("mine")
    tiny_font(mine.root / "fonts" / "NotoSansSC-Regular.otf")
    (mine.root / "draft.mdx").write_text(
        article("第一篇", "我们学习科学技术，这是中国的新文章。", slug="first"), encoding="utf-8"
    )
    return mine


def test_readme_walkthrough_api_and_font_commands_run_as_written(scratch: Blog) -> None:
    (walkthrough,) = _blocks("A five-minute walkthrough", "sh")
    out = _sh(scratch.root, walkthrough)
    assert '"created": true' in out
    shown = scratch.ok("show", "--key", "req-42", "--json").json()["job"]
    assert shown["state"] == "PUBLISHED"
    assert b"\xe7\xa7\x91\xe5\xad\xa6" in scratch.remote_file("content/posts/first.mdx")  # 科学
    assert chars("学习科学技术") <= cmap(scratch.remote_file("public/fonts/blog.woff2"))

    # The next article in draft.mdx (the first one again would be a duplicate: SKIPPED).
    (scratch.root / "draft.mdx").write_text(
        article("第二篇", "电力水化高物理，我们的第二篇文章。", slug="second"), encoding="utf-8"
    )
    (api,) = _blocks("Python API", "python")
    (scratch.root.parent / "api.py").write_text(api)
    out = _sh(scratch.root, f'"{sys.executable}" ../api.py')
    first, second = out.splitlines()
    job_id, state, created = first.split()
    assert (state, created) == ("RECEIVED", "True") and second == "RECEIVED"
    deadline = time.monotonic() + 120  # kick() started a detached worker
    while scratch.job(job_id)["job"]["state"] not in ("PUBLISHED", "SKIPPED", "REVIEW"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert scratch.job(job_id)["job"]["state"] == "PUBLISHED"
    assert scratch.remote_file("content/posts/second.mdx")

    (fonts_block,) = [
        b for b in re.findall(r"```sh\n(.*?)```", README, re.S) if "git blogpub fonts --check" in b
    ]
    out = _sh(scratch.root, fonts_block)
    assert "fonts: up to date" in out and "rebased" in out


# --------------------------------------------------------------------- example config


def _known(tmp_path: Path, table: str | None) -> list[str]:
    """What the configuration loader itself says it knows, asked with an unknown key."""
    probe = "[zz_probe]\n" if table is None else f"[{table}]\nzz_probe = 1\n"
    (tmp_path / config.CONFIG_NAME).write_text(probe)
    with pytest.raises(ConfigError) as err:
        config.load(tmp_path)
    found = re.search(r"\(known: ([^)]*)\)", err.value.message)
    assert found, err.value.message
    return [k.strip() for k in found[1].split(",")]


def test_example_config_names_every_key_the_schema_knows(tmp_path: Path) -> None:
    example = (ROOT / "contrib" / "blogpub.example.toml").read_text("utf-8")
    named: set[tuple[str, str]] = set()
    table = ""
    for line in example.splitlines():
        header = re.match(r"\s*#?\s*\[(\w+)\]", line)
        key = re.match(r"\s*#?\s*(\w+)\s*=", line)
        if header:
            table = header[1]
        elif key and table:
            named.add((table, key[1]))
    schema = {(t, k) for t in _known(tmp_path, None) for k in _known(tmp_path, t)}
    assert len(schema) >= 30  # the probe really read the schema
    assert schema - named == set(), "keys missing from contrib/blogpub.example.toml"
    assert named - schema == set(), "keys in contrib/blogpub.example.toml the schema lacks"
    # And the example as written loads (its font need not exist to be read).
    (tmp_path / config.CONFIG_NAME).write_text(example)
    assert config.load(tmp_path).fonts is not None
