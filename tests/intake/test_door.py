"""The door (gitpub.intake.check): bad arguments are refused in one line naming the argument,
before anything is recorded; a bundle's assets keep their folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testing.fixtures import Blog, article


def submit_raw(blog: Blog, *args: bytes | str) -> subprocess.CompletedProcess[bytes]:
    """`submit` with arguments as raw bytes, as a shell can pass them (invalid UTF-8 too)."""
    argv = [os.fsencode(sys.executable), b"-m", b"gitpub", b"-C", os.fsencode(blog.root)]
    argv += [a if isinstance(a, bytes) else a.encode() for a in args]
    return subprocess.run(argv, capture_output=True)


def refused(blog: Blog, proc: subprocess.CompletedProcess[bytes], words: str) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1 and len(err.splitlines()) == 1, err
    assert words in err and "Traceback" not in err and "\x1b" not in err
    assert not (blog.root / ".git" / "blogpub").exists()  # nothing recorded


@pytest.fixture
def source(blog: Blog) -> Path:
    src = blog.root.parent / "post.md"
    src.write_text(article("Post", "A plain article."))
    return src


@pytest.mark.parametrize("flag", ["--key", "--target", "--topic"])
def test_invalid_utf8_in_an_argument_is_one_line(blog: Blog, source: Path, flag: str) -> None:
    value = b"content/posts/\xff\xfe.md" if flag == "--target" else b"k\xff"
    args: list[bytes | str] = ["submit", "--source", str(source)]
    args += [] if flag == "--key" else ["--key", "k"]
    proc = submit_raw(blog, *args, flag.encode(), value)
    refused(blog, proc, f"{flag}: not valid UTF-8")


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("content/posts/con.md", "reserves for a device"),
        ("content/posts/NUL.md", "reserves for a device"),
        ("content/posts/a:b.md", "cannot check out"),
        ("content/posts/q?.md", "cannot check out"),
        ("content/posts/post.md ", "trailing space or dot"),
        ("content/posts/dot./x.md", "trailing space or dot"),
        ("content/posts/line\nbreak.md", "cannot check out"),
        ("content/posts/esc\x1b[2J.md", "cannot check out"),
        ("content/posts/a\\b.md", "backslash"),
    ],
)
def test_a_target_must_be_portable(blog: Blog, source: Path, target: str, why: str) -> None:
    proc = submit_raw(blog, "submit", "--key", "k", "--source", str(source), "--target", target)
    refused(blog, proc, why)


def test_a_key_with_an_escape_is_refused(blog: Blog, source: Path) -> None:
    proc = submit_raw(blog, "submit", "--key", "k\x1b[31mred", "--source", str(source))
    refused(blog, proc, "control character")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("Ein Text.\n".encode("utf-16"), "UTF-16 (byte-order mark)"),
        ("Ein Text.\n".encode("utf-16-le"), "looks like UTF-16"),
        ("Ein Text.\n".encode("utf-32"), "UTF-32"),
        (b"caf\xe9\n", "not UTF-8 (byte 3)"),
    ],
)
def test_a_source_in_another_encoding_names_it(blog: Blog, data: bytes, why: str) -> None:
    src = blog.root.parent / "wide.md"
    src.write_bytes(data)
    refused(blog, submit_raw(blog, "submit", "--key", "k", "--source", str(src)), why)


@pytest.mark.parametrize("rel", ["../up.png", "images/../../x.png", "/abs.png", ".hidden.png"])
def test_an_asset_never_leaves_its_article_folder(blog: Blog, source: Path, rel: str) -> None:
    image = blog.root.parent / "a.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n")
    proc = submit_raw(
        blog, "submit", "--key", "k", "--source", str(source), "--asset", f"{image}={rel}"
    )
    refused(blog, proc, "--asset")


def test_a_bundle_keeps_its_images_folder(blog: Blog) -> None:
    # A Docusaurus-style bundle: index.md links ./images/font.png, which must be there.
    src = blog.root.parent / "index.md"
    src.write_text(article("Bundle", "![a font](./images/font.png)\n\n![b](./images/sub/b.png)"))
    font = blog.root.parent / "font.png"
    font.write_bytes(b"\x89PNG\r\n\x1a\nfont")
    other = blog.root.parent / "b.png"
    other.write_bytes(b"\x89PNG\r\n\x1a\nb")
    job_id = blog.submit_args(
        "bundle",
        src,
        "--target",
        "content/posts/bundle/index.md",
        "--asset",
        f"{font}=images/font.png",
        "--asset",
        f"{other}=images/sub/b.png",
    )
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/bundle/images/font.png") == font.read_bytes()
    assert blog.remote_file("content/posts/bundle/images/sub/b.png") == other.read_bytes()
    # Every relative link of the article resolves on the remote, as the site's build checks.
    listed = blog.remote_git("ls-tree", "-r", "--name-only", "main").splitlines()
    for link in ("images/font.png", "images/sub/b.png"):
        assert f"content/posts/bundle/{link}" in listed


def test_a_node_name_holding_a_token_is_refused(blog: Blog, source: Path) -> None:
    token = "ghp_" + "Z3x9" * 9
    res = blog.blogpub("submit", "--key", "k", "--source", str(source), env={"GITPUB_NODE": token})
    assert res.returncode == 1 and "GITPUB_NODE" in res.stderr and token not in res.stderr
    assert not (blog.root / ".git" / "blogpub").exists()


def test_a_bundle_without_a_target_gets_a_folder_of_its_own(blog: Blog) -> None:
    src = blog.root.parent / "trip.md"
    src.write_text(article("Trip", "![map](./images/map.png)", slug="trip"))
    image = blog.root.parent / "map.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\nmap")
    job_id = blog.submit_args("trip", src, "--asset", f"{image}=images/map.png")
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED"
    assert job["target_path"] == "content/posts/trip/index.mdx"
    assert blog.remote_file("content/posts/trip/images/map.png") == image.read_bytes()
