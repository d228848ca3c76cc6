"""Bytes in are bytes out: the article on the remote is the submitted file, byte for byte —
CRLF, mixed line endings, a byte order mark, no final newline — and the same bytes submitted
again change nothing. Real material: tests/corpus/blogs/mushan/SOURCE.md."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import Blog, git

CORPUS = Path(__file__).resolve().parent / "corpus" / "blogs"
HEXO = CORPUS / "mushan" / "site"
CRLF_POST = "source/_posts/java/language/Java日志-SLF4J使用与源码分析.md"
LF_POST = "source/_posts/java/language/JDBC学习.md"


def hexo_blog(tmp_path: Path) -> Blog:
    """The Hexo blog as its author set it up: config, package.json and one LF post, with the
    config `init` writes for it."""
    remote, root = tmp_path / "remote.git", tmp_path / "blog"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(root))
    for rel in ("_config.yml", "package.json", LF_POST):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HEXO / rel, root / rel)
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
    data = (HEXO / CRLF_POST).read_bytes()
    assert data.count(b"\r\n") == 322 and data.count(b"\r") == 322

    first = submit_file(blog, "slf4j", data, "--target", CRLF_POST)
    assert first["job"]["state"] == "PUBLISHED"  # type: ignore[index]
    assert blog.remote_file(CRLF_POST) == data
    # git itself sees no change of line endings: the blob is the file.
    assert blog.remote_git("cat-file", "-s", f"main:{CRLF_POST}") == str(len(data))
    log = blog.remote_log()

    again = submit_file(blog, "slf4j-again", data, "--target", CRLF_POST)
    assert again["job"]["state"] == "SKIPPED"  # type: ignore[index]
    assert reason(again) == f"no change: {CRLF_POST} already holds these bytes"
    # Without --target the path comes from the title (`new_post_name: :title.md`): another
    # path, and still no new post, for the blog already holds this article.
    elsewhere = submit_file(blog, "slf4j-by-title", data)
    assert elsewhere["job"]["state"] == "SKIPPED"  # type: ignore[index]
    assert reason(elsewhere) == f"1.00 similar to {CRLF_POST}: the same article"
    assert blog.remote_log() == log


def test_a_one_line_edit_of_a_crlf_post_changes_one_line(tmp_path: Path) -> None:
    blog = hexo_blog(tmp_path)
    data = (HEXO / CRLF_POST).read_bytes()
    submit_file(blog, "v1", data, "--target", CRLF_POST)
    edited = data.replace(b"toc: true\r\n", b"toc: false\r\n", 1)
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
