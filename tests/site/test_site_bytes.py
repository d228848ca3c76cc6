"""Bytes in are bytes out: the article on the remote is the submitted file, byte for byte —
CRLF, mixed line endings, a byte order mark, no final newline — and the same bytes submitted
again change nothing. Real material: tests/corpus/blogs/weekly-practice/SOURCE.md."""

from __future__ import annotations

import shutil
from pathlib import Path

from testing.fixtures import Blog, git
from testing.paths import CORPUS

CORPUS = CORPUS / "blogs" / "weekly-practice" / "notes"
CRLF_SOURCE = CORPUS / "week015-elk-in-action" / "README.md"
LF_SOURCE = CORPUS / "week062-ssh-tunnel-vnc-remote-access" / "README.md"
CRLF_POST = "source/_posts/notes/week015-elk-in-action.md"
LF_POST = "source/_posts/notes/week062-ssh-tunnel-vnc-remote-access.md"
HEXO_CONFIG = """\
# Hexo Configuration (Hexo's defaults, as `hexo init` writes them)
title: Weekly practice
language: zh-CN
source_dir: source
public_dir: public
new_post_name: :title.md
"""


def hexo_blog(tmp_path: Path) -> Blog:
    """A Hexo blog holding one real LF post in a category folder, with the config `init`
    writes for it."""
    remote, root = tmp_path / "remote.git", tmp_path / "blog"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(root))
    (root / "_config.yml").write_text(HEXO_CONFIG)
    package = '{"name": "hexo-site", "private": true, "dependencies": {"hexo": "^7.3.0"}}\n'
    (root / "package.json").write_text(package)
    (root / LF_POST).parent.mkdir(parents=True)
    shutil.copyfile(LF_SOURCE, root / LF_POST)
    blog = Blog(root, remote)
    assert blog.ok("init").stdout.startswith("found Hexo: ")
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "the blog")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    return blog


def submit_file(blog: Blog, key: str, data: bytes, *extra: str) -> dict[str, object]:
    src = blog.root.parent / f"src-{key}"
    src.write_bytes(data)
    job_id = blog.ok("submit", "--key", key, "--source", str(src), "--json", *extra).json()[
        "job_id"
    ]
    blog.ok("run", "--until-idle")
    return dict(blog.job(job_id))


def reason(shown: dict[str, object]) -> str:
    events = shown["events"]
    assert isinstance(events, list)
    return str(next(e for e in events if e["step"] == "prepare:done")["detail"].get("reason"))


def test_a_real_crlf_post_is_published_byte_for_byte_and_skipped_when_sent_again(
    tmp_path: Path,
) -> None:
    blog = hexo_blog(tmp_path)
    data = CRLF_SOURCE.read_bytes()
    assert data.count(b"\r\n") == 913 and data.count(b"\r") == 913

    first = submit_file(blog, "elk", data, "--target", CRLF_POST)
    assert first["job"]["state"] == "PUBLISHED"  # type: ignore[index]
    assert blog.remote_file(CRLF_POST) == data
    # git itself sees no change of line endings: the blob is the file.
    assert blog.remote_git("cat-file", "-s", f"main:{CRLF_POST}") == str(len(data))
    log = blog.remote_log()

    again = submit_file(blog, "elk-again", data, "--target", CRLF_POST)
    assert again["job"]["state"] == "SKIPPED"  # type: ignore[index]
    assert reason(again) == f"no change: {CRLF_POST} already holds these bytes"
    # Without --target the path comes from the title (`new_post_name: :title.md`): another
    # path, and still no new post, for the blog already holds this article.
    elsewhere = submit_file(blog, "elk-by-title", data)
    assert elsewhere["job"]["state"] == "SKIPPED"  # type: ignore[index]
    assert reason(elsewhere) == f"1.000 similar to {CRLF_POST}: the same article"
    assert blog.remote_log() == log


def test_a_one_line_edit_of_a_crlf_post_changes_one_line(tmp_path: Path) -> None:
    blog = hexo_blog(tmp_path)
    data = CRLF_SOURCE.read_bytes()
    submit_file(blog, "v1", data, "--target", CRLF_POST)
    first = data.split(b"\r\n", 1)[0]
    edited = data.replace(first + b"\r\n", first + b" (2)\r\n", 1)
    assert edited != data
    shown = submit_file(blog, "v2", edited, "--target", CRLF_POST)
    assert shown["job"]["state"] == "PUBLISHED"  # type: ignore[index]
    assert blog.remote_file(CRLF_POST) == edited
    stat = blog.remote_git("diff", "--numstat", "main~1", "main")
    assert stat.split("\t")[:2] == ["1", "1"]


def test_bom_mixed_endings_and_no_final_newline_survive(blog: Blog) -> None:
    data = "\ufeff---\r\ntitle: Endings\r\n---\n\r\nCRLF line\r\nLF line\nCR line\rlast".encode()
    target = "content/posts/endings.md"
    shown = submit_file(blog, "endings", data, "--target", target)
    assert shown["job"]["state"] == "PUBLISHED"  # type: ignore[index]
    assert blog.remote_file(target) == data
    log = blog.remote_log()
    assert submit_file(blog, "endings-again", data, "--target", target)["job"]["state"] == (  # type: ignore[index]
        "SKIPPED"
    )
    assert blog.remote_log() == log
