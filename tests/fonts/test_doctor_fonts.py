"""`doctor` sees the fonts as the jobs will: the source on the remote branch they build on,
a face that exists and holds CJK, outputs that can be written. Each fault: exit 1 and its fix."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from testing.fixtures import Blog
from testing.fontkit import HANZI, fonts_table, make_font_blog, tiny_collection, tiny_font


def _font_blog(tmp_path: Path, font: Path, face: int = 0) -> Blog:
    """A blog whose source font (`font`, committed as fonts/tiny.ttf) is on the remote."""
    blog = make_font_blog(tmp_path, fonts_table("fonts/tiny.ttf", face), font)
    blog.ok("install")
    return blog


def _fonts_lines(blog: Blog) -> tuple[int, list[dict[str, str]]]:
    res = blog.blogpub("doctor", "--json")
    found = [f for f in res.json()["findings"] if f["check"] == "fonts"]
    return res.returncode, found


def _problem(blog: Blog) -> dict[str, str]:
    rc, found = _fonts_lines(blog)
    problems = [f for f in found if f["status"] == "problem"]
    assert rc == 1 and len(problems) == 1, found
    return problems[0]


@pytest.fixture
def font_blog(tmp_path: Path) -> Blog:
    return _font_blog(tmp_path, tiny_font(tmp_path / "tiny.ttf"))


def test_a_healthy_font_setup_passes(font_blog: Blog) -> None:
    rc, found = _fonts_lines(font_blog)
    assert rc == 0, found
    assert {f["status"] for f in found} == {"ok"}
    assert any(f"{len(set(HANZI))} CJK ideographs" in f["message"] for f in found)


def test_a_font_committed_but_not_pushed_says_push_it(font_blog: Blog) -> None:
    toml = font_blog.root / ".blogpub.toml"
    toml.write_text(toml.read_text().replace("fonts/tiny.ttf", "fonts/new.ttf"))
    tiny_font(font_blog.root / "fonts" / "new.ttf")
    problem = _problem(font_blog)
    assert "'fonts/new.ttf' is not on origin/main" in problem["message"]
    assert "commit it and push it" in problem["hint"]

    font_blog.git("add", "fonts/new.ttf")
    font_blog.git("commit", "--quiet", "-m", "new font")
    problem = _problem(font_blog)
    assert "is not on origin/main, the branch jobs build on" in problem["message"]
    assert problem["hint"] == "push it: git push origin main"

    font_blog.git("push", "--quiet", "origin", "main")
    assert _fonts_lines(font_blog)[0] == 0


def test_a_face_index_beyond_the_collection_is_a_problem(tmp_path: Path) -> None:
    blog = _font_blog(tmp_path, tiny_collection(tmp_path / "tiny.ttc", faces=2), face=1)
    assert _fonts_lines(blog)[0] == 0
    toml = blog.root / ".blogpub.toml"
    toml.write_text(toml.read_text().replace("face = 1", "face = 5"))
    problem = _problem(blog)
    assert "fonts.face = 5, but tiny.ttf holds 2 face(s)" in problem["message"]
    assert "set fonts.face" in problem["hint"]


def test_a_face_without_cjk_is_a_problem(font_blog: Blog, tmp_path: Path) -> None:
    tiny_font(font_blog.root / "fonts" / "tiny.ttf", range(0x20, 0x7F))
    font_blog.git("commit", "--quiet", "-am", "a latin font")
    font_blog.git("push", "--quiet", "origin", "main")
    problem = _problem(font_blog)
    assert "holds no CJK ideographs" in problem["message"]
    assert "point fonts.source at a CJK font" in problem["hint"]


def test_outputs_that_cannot_be_written_are_a_problem(font_blog: Blog) -> None:
    # `public/fonts` is a file here, so no subset can be written below it (even by root).
    shutil.rmtree(font_blog.root / "public")
    (font_blog.root / "public").write_text("not a folder\n")
    problem = _problem(font_blog)
    assert "font outputs not writable" in problem["message"]
    assert "public/fonts/blog.woff2" in problem["message"]
    assert "write access" in problem["hint"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through file modes")
def test_a_read_only_output_folder_is_a_problem(font_blog: Blog) -> None:
    folder = font_blog.root / "public" / "fonts"
    folder.chmod(0o555)
    (folder / "blog.woff2").chmod(0o444)
    try:
        assert "not writable" in _problem(font_blog)["message"]
    finally:
        folder.chmod(0o755)
