"""`git blogpub init` in each generator's own layout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from testing.fixtures import git
from testing.fontkit import tiny_font

from gitpub import config


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    git(root, "init", "--quiet")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _init(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitpub", "-C", str(root), "init", *args],
        capture_output=True,
        text=True,
    )


HEXO_PACKAGE = json.dumps({"dependencies": {"hexo": "^7.0.0", "hexo-renderer-marked": "^6"}})

LAYOUTS = {
    "Hugo": (
        {
            "hugo.toml": 'baseURL = "https://example.org/"\n',
            "content/posts/first/index.md": "+++\ntitle = 'a'\n+++\n",
            "content/posts/second/index.md": "+++\ntitle = 'b'\n+++\n",
        },
        "content/posts",
        (".md",),
        "content/posts/{slug}/index.md",
    ),
    "Jekyll": (
        {"_config.yml": "title: blog\n", "_posts/2020-01-01-a.markdown": "---\ntitle: a\n---\n"},
        "_posts",
        (".markdown", ".md"),
        "_posts/{date:%Y-%m-%d}-{slug}.markdown",
    ),
    "Hexo": (
        {
            "_config.yml": "title: 博客\nnew_post_name: :year/:title.md # posts by year\n",
            "package.json": HEXO_PACKAGE,
            "source/_posts/2021/你好.md": "---\ntitle: 你好\n---\n",
        },
        "source/_posts",
        (".md",),
        "source/_posts/{date:%Y}/{title}.md",
    ),
    "Astro": (
        {
            "astro.config.mjs": "export default {}\n",
            "src/content/blog/a.mdx": "---\ntitle: a\n---\n",
        },
        "src/content/blog",
        (".mdx", ".md"),
        None,
    ),
    # A theme's layout: pages of the blog section are bundles; the home page is a section.
    "Zola": (
        {
            "config.toml": 'base_url = "https://example.org"\n',
            "templates/index.html": "{{ section.title }}\n",
            "content/_index.md": "+++\ntitle = 'home'\n+++\n",
            "content/about.md": "+++\ntitle = 'about'\n+++\n",
            "content/blog/_index.md": "+++\nsort_by = 'date'\n+++\n",
            "content/blog/first/index.md": "+++\ntitle = 'a'\n+++\n",
            "content/blog/second/index.md": "+++\ntitle = 'b'\n+++\n",
            "content/blog/third.md": "+++\ntitle = 'c'\n+++\n",
        },
        "content/blog",
        (".md",),
        "content/blog/{slug}/index.md",
    ),
    "Docusaurus": (
        {"docusaurus.config.js": "module.exports = {}\n", "blog/2021-01-01-a.md": "# a\n"},
        "blog",
        (".md", ".mdx"),
        "blog/{date:%Y-%m-%d}-{slug}.md",
    ),
}


@pytest.mark.parametrize("generator", sorted(LAYOUTS))
def test_init_detects_each_generator_and_writes_a_config_that_loads(
    tmp_path: Path, generator: str
) -> None:
    files, content, suffixes, template = LAYOUTS[generator]
    root = _repo(tmp_path / "site", files)
    proc = _init(root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"found {generator}: ")
    cfg = config.load(root)
    assert cfg.publish.content == (content,)
    assert cfg.publish.suffixes == suffixes
    assert cfg.publish.path == template
    assert (root / ".blogpub.toml").read_text().startswith("# gitpub configuration")


def test_init_names_a_cjk_font_it_finds(tmp_path: Path) -> None:
    files = LAYOUTS["Hugo"][0]
    root = _repo(tmp_path / "site", files)
    tiny_font(root / "assets" / "fonts" / "Tiny.otf")
    proc = _init(root)
    assert "CJK font: assets/fonts/Tiny.otf" in proc.stdout
    text = (root / ".blogpub.toml").read_text()
    assert '# source = "assets/fonts/Tiny.otf"' in text
    assert '# outputs = ["static/fonts/blog.woff2"]' in text


def test_init_refuses_an_existing_config_unless_forced(tmp_path: Path) -> None:
    root = _repo(tmp_path / "site", {**LAYOUTS["Jekyll"][0], ".blogpub.toml": "[publish]\n"})
    proc = _init(root)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "git blogpub: .blogpub.toml already exists; pass --force to replace it"
    )
    assert (root / ".blogpub.toml").read_text() == "[publish]\n"
    assert _init(root, "--force").returncode == 0
    assert config.load(root).publish.content == ("_posts",)


def test_init_outside_any_known_blog_writes_a_generic_config(tmp_path: Path) -> None:
    root = _repo(tmp_path / "site", {"notes/readme.txt": "hello\n", ".blogpub.toml": "\n"})
    proc = _init(root)  # an empty config counts as none
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == (
        "not a recognised blog (Zola, Hugo, Jekyll, Hexo, Astro, Docusaurus): "
        "wrote a generic config"
    )
    assert config.load(root).publish.content == ("content/posts",)


def test_init_names_the_remote_default_branch_and_the_face_for_the_blog_language(
    tmp_path: Path,
) -> None:
    """A Chinese blog on `master` with a CJK collection whose first face is JP: the config
    says master, and its face line is the SC face, named."""
    from testing.fontkit import tiny_collection

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=master", str(remote))
    seed = _repo(
        tmp_path / "seed",
        {
            "hugo.toml": 'baseURL = "https://example.org/"\nlanguageCode = "zh-CN"\n',
            "content/post/a.md": "---\ntitle: a\n---\n",
        },
    )
    tiny_collection(seed / "fonts" / "cjk.ttc", families=["Tiny CJK JP", "Tiny CJK SC"])
    git(seed, "add", ".")
    git(seed, "commit", "--quiet", "-m", "blog")
    git(seed, "push", "--quiet", str(remote), "HEAD:master")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", "--origin", "upstream", str(remote), str(clone))
    git(clone, "checkout", "--quiet", "-b", "drafts")  # a local branch is not what publishes

    res = _init(clone)
    assert res.returncode == 0, res.stderr
    text = (clone / ".blogpub.toml").read_text()
    assert 'remote = "upstream"' in text and 'branch = "master"' in text
    assert "# face = 1    # Tiny CJK SC, for zh-CN (hugo.toml languageCode)" in text
    enabled = text.replace("# [fonts]", "[fonts]").replace("# source", "source")
    enabled = enabled.replace("# face = 1", "face = 1").replace("# # outputs", "outputs")
    enabled = enabled.replace("# chunked", "#")
    (clone / ".blogpub.toml").write_text(enabled)
    loaded = config.load(clone)
    assert loaded.fonts is not None and loaded.fonts.face == 1
