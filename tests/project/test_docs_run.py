"""Docs you can run: the README's walkthrough, Python API and font commands run as written in
a scratch blog, and the example config names every key the configuration knows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from testing.fixtures import Blog, article, git, make_blog
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


def _commit_all(root: Path, message: str) -> None:
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", message)


def _hugo_blog(base: Path) -> Path:
    """A Chinese Hugo blog as many are: branch `master`, posts in content/post, the built site
    in a `public/` submodule (a GitHub Pages repository)."""
    pages = base / "pages.git"
    git(base, "init", "--quiet", "--bare", "--initial-branch=master", str(pages))
    seed = base / "pages-seed"
    git(base, "clone", "--quiet", str(pages), str(seed))
    (seed / "index.html").write_text("<html></html>\n")
    _commit_all(seed, "the built site")
    git(seed, "push", "--quiet", "origin", "HEAD:master")

    remote = base / "remote.git"
    git(base, "init", "--quiet", "--bare", "--initial-branch=master", str(remote))
    root = base / "seed"
    git(base, "clone", "--quiet", str(remote), str(root))
    (root / "hugo.toml").write_text(
        'baseURL = "https://blog.example.org/"\nlanguageCode = "zh-CN"\n'
        'defaultContentLanguage = "zh-cn"\ntitle = "博客"\n'
    )
    post = root / "content" / "post"
    post.mkdir(parents=True)
    for slug, title in (("hello", "你好"), ("notes", "笔记")):
        (post / f"{slug}.md").write_text(article(title, "已经发布的文章。", slug=slug))
    (root / "static").mkdir()
    (root / "static" / "robots.txt").write_text("User-agent: *\n")
    git(
        root,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "--quiet",
        str(pages),
        "public",
    )
    _commit_all(root, "the blog")
    git(root, "push", "--quiet", "origin", "HEAD:master")
    return remote


def _astro_blog(base: Path) -> Path:
    """An Astro blog on `main` whose content layer loads content/posts."""
    remote = base / "remote.git"
    git(base, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    root = base / "seed"
    git(base, "clone", "--quiet", str(remote), str(root))
    (root / "astro.config.mjs").write_text(
        'import { defineConfig } from "astro/config";\nexport default defineConfig({});\n'
    )
    (root / "src").mkdir()
    (root / "src" / "content.config.ts").write_text(
        'import { defineCollection } from "astro:content";\n'
        'import { glob } from "astro/loaders";\n'
        "const posts = defineCollection({\n"
        '  loader: glob({ pattern: "**/*.md", base: "./content/posts" }),\n'
        "});\nexport const collections = { posts };\n"
    )
    (root / "package.json").write_text('{"dependencies": {"astro": "^5.0.0"}}\n')
    posts = root / "content" / "posts"
    posts.mkdir(parents=True)
    for slug in ("launch", "roadmap"):
        (posts / f"{slug}.md").write_text(article(slug.title(), "Already published.", slug=slug))
    _commit_all(root, "the blog")
    git(root, "push", "--quiet", "origin", "HEAD:main")
    return remote


@pytest.mark.parametrize(
    ("make", "branch", "folder"),
    [(_hugo_blog, "master", "content/post"), (_astro_blog, "main", "content/posts")],
    ids=["hugo-master-content-post", "astro-main-content-posts"],
)
def test_readme_walkthrough_runs_as_written(
    tmp_path: Path, make: Callable[[Path], Path], branch: str, folder: str
) -> None:
    remote = make(tmp_path)
    mine = tmp_path / "mine"
    git(tmp_path, "clone", "--quiet", str(remote), str(mine))
    blog = Blog(mine, remote)
    (mine / "draft.md").write_text(
        article("第一篇", "我们学习科学技术，这是新文章。", slug="first"), encoding="utf-8"
    )
    (walkthrough,) = _blocks("A five-minute walkthrough", "sh")
    out = _sh(mine, walkthrough)
    assert '"created": true' in out
    shown = blog.ok("show", "--key", "req-42", "--json").json()["job"]
    assert shown["state"] == "PUBLISHED", shown
    assert shown["target_path"] == f"{folder}/first.md"
    published = git(remote, "show", f"{branch}:{folder}/first.md")
    assert "我们学习科学技术" in published
    if branch == "master":  # the submodule is still the submodule
        assert git(remote, "ls-tree", branch, "public").split()[:2] == ["160000", "commit"]


@pytest.fixture
def scratch(tmp_path: Path) -> Blog:
    """A clone of a shared remote with gitpub set up and a CJK font, as the walkthrough leaves
    a blog whose config names one."""
    mine = make_blog(tmp_path).clone("mine")
    tiny_font(mine.root / "fonts" / "NotoSansSC-Regular.otf")
    with (mine.root / ".blogpub.toml").open("a") as cfg:
        cfg.write('\n[fonts]\nsource = "fonts/NotoSansSC-Regular.otf"\n')
        cfg.write('outputs = ["public/fonts/blog.woff2"]\n')
    mine.git("add", ".")
    mine.git("commit", "--quiet", "-m", "gitpub config")
    mine.git("push", "--quiet", "origin", "main")
    return mine


def test_readme_api_and_font_commands_run_as_written(scratch: Blog) -> None:
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
    assert chars("电力水化高物理") <= cmap(scratch.remote_file("public/fonts/blog.woff2"))

    (fonts_block,) = [
        b for b in re.findall(r"```sh\n(.*?)```", README, re.S) if "git blogpub fonts --check" in b
    ]
    out = _sh(scratch.root, fonts_block)
    assert "fonts: up to date" in out and "rebased" in out


def test_no_doc_hard_codes_origin_main() -> None:
    """A blog may publish `master`, through a remote not named origin: the docs say REMOTE
    and BRANCH (or the commands print the blog's own)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pages += sorted((ROOT / "contrib").rglob("*.md"))
    found = [
        f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
        for page in pages
        for n, line in enumerate(page.read_text("utf-8").splitlines(), 1)
        if re.search(r"\borigin/main\b|\bgit (?:rebase|pull|push|fetch) origin main\b", line)
    ]
    assert found == []


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
