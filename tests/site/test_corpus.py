"""Real material: posts of five public blogs (Jekyll, two Hugo, Hexo, an Astro content collection)
published through gitpub, each byte for byte at the path its generator expects, and real MDX
pages of three sites accepted by the built-in check as the real compiler accepts them.
Sources and licences: tests/corpus/*/SOURCE.md."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_site_validate import ACCEPTED_MDX
from testing.fixtures import Blog, git
from testing.paths import CORPUS, ROOT

from gitpub.site.validate import check

CORPUS = CORPUS
MDX_PAGES = sorted((CORPUS / "mdx").rglob("*.mdx"))
COMPILER = ROOT / "contrib" / "mdx-validate"

# blog → (generator, files committed by hand first, posts published by gitpub with the path
# each is published at; None: the path is left to the config `init` wrote).
BLOGS = {
    "huxblog": (
        "Jekyll",
        ["_config.yml", "_posts/2015-03-25-digital-native.markdown"],
        {
            "_posts/2016-09-22-the-open-web.md": "--target",
            "_posts/2017-12-12-halting-problem.md": "--target",
            "_posts/2018-10-06-vim-cn-im.md": "--target",
        },
    ),
    "hbchen": (
        "Hugo",
        ["config.toml", "content/post/2014-04-15-redmine-plugins.md"],
        {
            # Front matter with tab-indented flow lists: read tolerantly, never REVIEW.
            "content/post/go/2021-03-19-delve.md": "--target",
            "content/post/microservice/2019-06-27-go-micro-use-kubernetes-registry.md": (
                "--target"
            ),
            # No slug: the path comes from the title the tolerant reading found.
            "content/post/2013-11-07-mysql-you-hua-gong-ju.md": "content/post/MySql-优化工具.md",
        },
    ),
    "jane": (
        "Hugo",
        ["hugo.toml", "content/post/demo/3-syntax-highlighting.md"],
        {
            "content/post/jane-theme-preview.zh-cn.md": "--target",
            "content/post/Jane-Theme-V3-Major-Update.zh-cn.md": "--target",
            "content/post/other/goisforlovers.md": "--target",
        },
    ),
    "lynkxu": (
        "Astro",
        [
            "astro.config.mjs",
            "package.json",
            "src/content.config.ts",
            "src/content/blog/windows-terminal-proxy/2021-07-01-windows-terminal-proxy.md",
        ],
        {
            "src/content/blog/age25/2023-01-31-age25.md": "--target",
            "src/content/blog/flags-in-2022/2022-04-03-flags-in-2022.md": "--target",
            "src/content/blog/leetcode-go-record/2021-12-14-leetcode-go-record.md": "--target",
            "src/content/blog/2026-01-04-overload/2026-01-04.md": "--target",
            # The collection loads every src/content/blog/**/*.md and names the entry by its
            # front-matter slug: `init`'s default path is that slug, beside the others.
            "src/content/blog/some-thinking/2021-06-30-someThinking.md": (
                "src/content/blog/2021-06-30-some-thinking.md"
            ),
        },
    ),
    "xovel": (
        "Hexo",
        ["_config.yml", "package.json", "source/_posts/2016-06-17-markdown-syntax.md"],
        {
            "source/_posts/2016-10-13-yarn-a-new-package-manager-for-javascript-zh-cn.md": (
                "--target"
            ),
            "source/_posts/2016-10-25-js-operator-precedence.md": "--target",
            # new_post_name is :year-:month-:day-:title.md: the name `hexo new` would give it.
            "source/_posts/2016-09-14-tomorrow-is-the-mid-autumn-festival.md": (
                "source/_posts/2016-09-14-明天就是中秋佳节了.md"
            ),
        },
    ),
}


# Compile each page as contrib/mdx-validate does (front matter blanked line by line).
BATCH = r"""
let input = ''
for await (const chunk of process.stdin) input += chunk
const out = {}
for (const [name, body] of Object.entries(JSON.parse(input))) {
  const lines = body.split('\n')
  const fenced = lines[0].trim() === '---'
  const close = fenced ? lines.findIndex((l, i) => i > 0 && l.trim() === '---') : -1
  for (let i = 0; i <= close; i++) lines[i] = ''
  try {
    await compile(lines.join('\n'))
    out[name] = null
  } catch (e) {
    out[name] = String(e.reason || e.message)
  }
}
console.log(JSON.stringify(out))
"""


def _tree(remote: Path) -> dict[str, str]:
    out = git(remote, "ls-tree", "-r", "-z", "main")
    rows = (entry.split("\t", 1) for entry in out.split("\0") if entry)
    return {path: meta.split()[2] for meta, path in rows}


@pytest.mark.parametrize("name", sorted(BLOGS))
def test_real_posts_publish_byte_for_byte_where_their_generator_expects(
    tmp_path: Path, name: str
) -> None:
    generator, seeded, posts = BLOGS[name]
    site = CORPUS / "blogs" / name / "site"
    remote, root = tmp_path / "remote.git", tmp_path / "blog"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(root))
    for rel in seeded:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(site / rel, root / rel)
    blog = Blog(root, remote)
    found = blog.ok("init").stdout
    assert found.startswith(f"found {generator}: "), found
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "the blog as a person set it up")
    blog.git("push", "--quiet", "origin", "HEAD:main")

    for rel, how in posts.items():
        data = (site / rel).read_bytes()
        before = _tree(remote)
        src = tmp_path / f"src-{len(before)}"
        src.write_bytes(data)
        args = ["submit", "--key", rel, "--source", str(src), "--json"]
        expected = rel if how == "--target" else how
        if how == "--target":
            args += ["--target", rel]
        job_id = blog.ok(*args).json()["job_id"]
        blog.ok("run", "--until-idle")
        job = blog.job(job_id)["job"]
        assert (job["state"], job["target_path"]) == ("PUBLISHED", expected)
        after = _tree(remote)
        assert blog.remote_file(expected) == data
        assert {p: b for p, b in after.items() if p != expected} == before


@pytest.mark.parametrize("page", MDX_PAGES, ids=lambda p: str(p.relative_to(CORPUS / "mdx")))
def test_real_mdx_pages_pass_the_builtin_check(page: Path) -> None:
    assert check(page.name, page.read_text(encoding="utf-8")) is None


def test_the_real_compiler_accepts_every_page_the_builtin_check_is_measured_on(
    tmp_path: Path,
) -> None:
    """The other half of "rejects no page the compiler accepts": these pages and the
    synthetic cases of test_site_validate do compile."""
    node = shutil.which("node")
    entry = COMPILER / "node_modules" / "@mdx-js" / "mdx" / "index.js"
    if node is None or not entry.is_file():
        pytest.skip("Node.js or contrib/mdx-validate's packages (npm ci) are not installed")
    texts = {str(p): p.read_text(encoding="utf-8") for p in MDX_PAGES}
    texts.update({f"case: {k}": "---\ntitle: t\n---\n\n" + v for k, v in ACCEPTED_MDX.items()})
    script = tmp_path / "batch.mjs"
    script.write_text(f"import {{compile}} from {json.dumps(entry.as_uri())}\n" + BATCH)
    proc = subprocess.run(
        [node, str(script)], input=json.dumps(texts), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    refused = {k: v for k, v in json.loads(proc.stdout).items() if v is not None}
    assert refused == {}
    assert len(texts) == len(MDX_PAGES) + len(ACCEPTED_MDX) >= 24
