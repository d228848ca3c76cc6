"""`[fonts] chunked` with the real Noto Sans CJK: unicode-range chunks, their stylesheet, and
what a new character costs on the remote (one chunk file) and between two writer nodes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from testing.fixtures import Blog, article, git
from testing.fontkit import (
    CHUNKED,
    chars,
    chunked_table,
    cjk_chunked_blog,
    cjk_font,
    cmap,
    coverage,
    fonts_table,
    make_font_blog,
)
from testing.paths import CORPUS

from gitpub import config
from gitpub.config import slices
from gitpub.fonts import engine
from gitpub.fonts.source import load

ASCII = set(range(0x20, 0x7F))
CSS = f"{CHUNKED}/blog.css"
CORPUS = CORPUS / "blogs"


def _note(slug: str, cp: int) -> str:
    """An article whose only character outside ASCII (always kept) is `cp`: publishing it
    brings in that one character. Each slug gets its own words, so that no two notes look
    alike to the similarity judge."""
    words = {
        "one": "Field notes from a long walk by the river",
        "a": "Why the old bridge was painted red again",
        "b": "A recipe for dumplings that nobody asked for",
        "k": "Counting stars from the roof, one winter night",
    }[slug]
    return article(words.split()[0], f"{words}: {chr(cp)}.", slug=slug)


def _remote_tree(blog: Blog, folder: str = CHUNKED) -> dict[str, str]:
    """Path → blob id of every file under `folder` on the remote's main."""
    out = blog.remote_git("ls-tree", "-r", "main", folder)
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def _remote_article_chars(blog: Blog) -> set[int]:
    names = blog.remote_git("ls-tree", "-r", "--name-only", "main", "content/posts").split()
    out: set[int] = set()
    for name in names:
        out |= chars(blog.remote_file(name).decode("utf-8"))
    return out


def _commit_files(blog: Blog, rev: str) -> set[str]:
    return set(blog.remote_git("diff-tree", "--no-commit-id", "--name-only", "-r", rev).split())


def _fresh_in_used_slices(used: set[int], cover: set[int], count: int) -> list[int]:
    """`count` hanzi the font draws and the blog does not use yet, each in a different slice
    the blog already uses (so the stylesheet stays as it is)."""
    found: list[int] = []
    for name in sorted({slices.slice_of(cp) for cp in used if cp > 0x3000}):
        for lo, hi in slices.members(name):
            cp = next((c for c in range(lo, hi + 1) if c in cover and c not in used), None)
            if cp is not None:
                found.append(cp)
                break
        if len(found) == count:
            return found
    raise AssertionError("no unused character in the slices the blog uses")


def _chunks(files: dict[str, bytes]) -> dict[str, set[int]]:
    """Slice name → the code points its chunk maps, as a browser reads the file."""
    return {Path(path).stem: cmap(data) for path, data in files.items() if path.endswith(".woff2")}


def _declared(css: str) -> dict[str, str]:
    """Chunk file → its unicode-range, from the stylesheet."""
    rules = re.findall(
        r'src: url\("([^"]+)"\) format\("woff2"\);.*?unicode-range: ([^;]+);', css, re.S
    )
    return dict(rules)


def _in_range(cp: int, unicode_range: str) -> bool:
    for part in unicode_range.split(", "):
        lo, _, hi = part.removeprefix("U+").partition("-")
        if int(lo, 16) <= cp <= int(hi or lo, 16):
            return True
    return False


def test_one_new_character_changes_exactly_one_chunk_file_on_the_remote(tmp_path: Path) -> None:
    source, face = cjk_font()
    cover = coverage(source, face)
    blog = cjk_chunked_blog(tmp_path)
    before = _remote_tree(blog)
    css_before = blog.remote_file(CSS)
    used = _remote_article_chars(blog) | ASCII
    (new,) = _fresh_in_used_slices(used, cover, 1)
    chunk = f"{CHUNKED}/{slices.slice_of(new)}.woff2"
    assert chunk in before  # the slice is in use already

    job_id = blog.submit("one", _note("one", new))
    blog.ok("run", "--until-idle")

    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    after = _remote_tree(blog)
    assert {p for p in after if before.get(p) != after[p]} == {chunk}
    assert set(after) == set(before)
    assert _commit_files(blog, "main") == {"content/posts/one.mdx", chunk}
    assert blog.remote_file(CSS) == css_before
    name = slices.slice_of(new)
    want = {cp for cp in used | {new} if cp in cover and slices.slice_of(cp) == name}
    assert cmap(blog.remote_file(chunk)) == want


def _corpus_blog(base: Path, table: str) -> Blog:
    """A font blog whose articles are the real posts of tests/corpus/blogs, as they are."""
    source, _ = cjk_font()
    blog = make_font_blog(base, table, link=Path(source))
    posts = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".md", ".markdown"))
    for i, post in enumerate(posts):
        shutil.copyfile(post, blog.root / "content" / "posts" / f"{i:02d}-{post.stem}.md")
    blog.ok("fonts")
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "the corpus")
    return blog


def test_chunks_hold_the_used_characters_once_and_cost_at_most_a_third_more(
    tmp_path: Path,
) -> None:
    source, face = cjk_font()
    cover = coverage(source, face)
    blog = _corpus_blog(tmp_path, chunked_table(f"fonts/{Path(source).name}", face, quality=10))
    folder = blog.root / CHUNKED
    files = {f"{CHUNKED}/{p.name}": p.read_bytes() for p in folder.iterdir()}
    used = set()
    for post in (blog.root / "content" / "posts").iterdir():
        used |= chars(post.read_bytes().decode("utf-8", "ignore"))
    want = (used | ASCII) & cover
    assert len(want) > 1000  # the corpus is a real blog's worth of hanzi

    chunks = _chunks(files)
    union: set[int] = set().union(*chunks.values())
    assert union == want
    assert sum(len(c) for c in chunks.values()) == len(union)  # no character in two chunks
    for name, held in chunks.items():
        assert {slices.slice_of(cp) for cp in held} == {name}

    declared = _declared(files[CSS].decode("utf-8"))
    assert set(declared) == {f"{name}.woff2" for name in chunks}
    for name, held in chunks.items():
        assert all(_in_range(cp, declared[f"{name}.woff2"]) for cp in held)

    # One subset of the same characters, as the single-file mode builds it.
    fc = config.load(blog.root).fonts
    assert fc is not None
    font = load(fc, blog.root)
    single = engine.encode(
        engine.subset(font, frozenset(want), engine.choose("auto")), "woff2", 10, {}
    )
    font_bytes = sum(len(d) for p, d in files.items() if p.endswith(".woff2"))
    assert font_bytes <= 1.3 * len(single), (font_bytes, len(single))
    assert cmap(single) == union


def test_two_nodes_adding_characters_in_different_slices_do_not_conflict(tmp_path: Path) -> None:
    source, face = cjk_font()
    first = cjk_chunked_blog(tmp_path)
    second = first.clone("second")
    used = _remote_article_chars(first) | ASCII
    a, b = _fresh_in_used_slices(used, coverage(source, face), 2)
    job_a = first.submit("a", _note("a", a))
    job_b = second.submit("b", _note("b", b))
    first.ok("run", "--until-idle", env={"GITPUB_NODE": "node-a"})
    second.ok("run", "--until-idle", env={"GITPUB_NODE": "node-b"})

    assert first.job(job_a)["job"]["state"] == "PUBLISHED"
    job = second.job(job_b)
    assert job["job"]["state"] == "PUBLISHED", job
    steps = [e["step"] for e in job["events"]]
    assert "fonts:regenerated" not in steps and "conflict" not in steps
    chunk_a = f"{CHUNKED}/{slices.slice_of(a)}.woff2"
    chunk_b = f"{CHUNKED}/{slices.slice_of(b)}.woff2"
    assert _commit_files(second, "main") == {"content/posts/b.mdx", chunk_b}
    assert _commit_files(second, "main~1") == {"content/posts/a.mdx", chunk_a}
    assert a in cmap(second.remote_file(chunk_a)) and b in cmap(second.remote_file(chunk_b))
    assert len(second.remote_log()) == 3


def test_two_nodes_in_the_same_slice_rebuild_that_chunk_for_the_union(tmp_path: Path) -> None:
    source, face = cjk_font()
    cover = coverage(source, face)
    first = cjk_chunked_blog(tmp_path)
    second = first.clone("second")
    used = _remote_article_chars(first) | ASCII
    (a,) = _fresh_in_used_slices(used, cover, 1)
    name = slices.slice_of(a)
    b = next(
        cp
        for lo, hi in slices.members(name)
        for cp in range(lo, hi + 1)
        if cp in cover and cp not in used and cp != a
    )
    first.submit("a", _note("a", a))
    job_b = second.submit("b", _note("b", b))
    first.ok("run", "--until-idle", env={"GITPUB_NODE": "node-a"})
    second.ok("run", "--until-idle", env={"GITPUB_NODE": "node-b"})

    job = second.job(job_b)
    assert job["job"]["state"] == "PUBLISHED", job
    chunk = f"{CHUNKED}/{name}.woff2"
    (regen,) = [e for e in job["events"] if e["step"] == "fonts:regenerated"]
    assert regen["detail"]["conflicted"] == [chunk]
    assert _commit_files(second, "main") == {"content/posts/b.mdx", chunk}
    held = cmap(second.remote_file(chunk))
    assert {a, b} <= held
    assert held == {cp for cp in used | {a, b} if cp in cover and slices.slice_of(cp) == name}


def test_a_first_character_of_a_new_slice_adds_one_rule_to_the_stylesheet(
    tmp_path: Path,
) -> None:
    source, face = cjk_font()
    cover = coverage(source, face)
    blog = cjk_chunked_blog(tmp_path)
    used = _remote_article_chars(blog) | ASCII
    in_use = {slices.slice_of(cp) for cp in used}
    new = next(cp for cp in sorted(cover) if cp >= 0x4E00 and slices.slice_of(cp) not in in_use)
    name = slices.slice_of(new)
    css_before = _declared(blog.remote_file(CSS).decode("utf-8"))

    blog.submit("k", _note("k", new))
    blog.ok("run", "--until-idle")

    chunk = f"{CHUNKED}/{name}.woff2"
    assert _commit_files(blog, "main") == {"content/posts/k.mdx", chunk, CSS}
    css_after = _declared(blog.remote_file(CSS).decode("utf-8"))
    assert set(css_after) - set(css_before) == {f"{name}.woff2"}
    assert {k: v for k, v in css_after.items() if k in css_before} == css_before
    assert _in_range(new, css_after[f"{name}.woff2"])
    assert cmap(blog.remote_file(chunk)) == {new}


def test_chunked_and_outputs_together_is_one_clear_config_error(tmp_path: Path) -> None:
    blog = cjk_chunked_blog(tmp_path)
    cfg = blog.root / ".blogpub.toml"
    cfg.write_text(
        cfg.read_text("utf-8") + 'outputs = ["public/fonts/blog.woff2"]\n', encoding="utf-8"
    )
    res = blog.blogpub("fonts")
    assert res.returncode == 1
    (line,) = res.stderr.strip().splitlines()
    assert ".blogpub.toml" in line and "fonts.chunked" in line and "fonts.outputs" in line
    assert "Traceback" not in res.stderr

    cfg.write_text(
        fonts_table("fonts/x.ttf").replace('outputs = ["public/fonts/blog.woff2"]', "")
        + 'chunked = "public/fonts/blog"\nfamily = "Blog\\" }"\n',
        encoding="utf-8",
    )
    res = blog.blogpub("fonts")
    assert res.returncode == 1 and "fonts.family" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_the_write_set_of_a_chunked_font_comes_from_the_config_alone(tmp_path: Path) -> None:
    blog = cjk_chunked_blog(tmp_path)
    outputs = set(config.load(blog.root).font_outputs)
    assert CSS in outputs
    on_remote = set(_remote_tree(blog))
    assert on_remote <= outputs
    assert all(p == CSS or (p.startswith(f"{CHUNKED}/") and p.endswith(".woff2")) for p in outputs)


def test_init_proposes_chunks_for_a_cjk_font_and_the_proposal_builds(tmp_path: Path) -> None:
    source, _ = cjk_font()
    root = tmp_path / "site"
    (root / "content" / "posts").mkdir(parents=True)
    (root / "content" / "posts" / "a.md").write_text(article("春", "春眠不觉晓。"), "utf-8")
    (root / "fonts").mkdir()
    (root / "fonts" / Path(source).name).symlink_to(source)
    git(tmp_path, "init", "--quiet", str(root))
    res = subprocess.run(
        [sys.executable, "-m", "gitpub", "-C", str(root), "init"], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    text = (root / ".blogpub.toml").read_text("utf-8")
    # A person uncomments the table as proposed (the single-file line stays a comment).
    lines = text.splitlines()
    start = lines.index("# [fonts]")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("# Or "))
    lines[start:end] = [line.removeprefix("# ") for line in lines[start:end]]
    (root / ".blogpub.toml").write_text("\n".join(lines) + "\n", "utf-8")
    fc = config.load(root).fonts
    assert fc is not None and fc.chunked == "public/fonts/blog" and fc.outputs == ()

    res = subprocess.run(
        [sys.executable, "-m", "gitpub", "-C", str(root), "fonts"], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    css = (root / "public/fonts/blog/blog.css").read_text("utf-8")
    held = set().union(
        *_chunks({p.name: p.read_bytes() for p in (root / CHUNKED).iterdir()}).values()
    )
    assert chars("春眠不觉晓") <= held
    assert set(_declared(css)) == {p.name for p in (root / CHUNKED).glob("*.woff2")}


def test_doctor_checks_that_the_chunk_folder_can_be_written(tmp_path: Path) -> None:
    blog = cjk_chunked_blog(tmp_path)
    blog.ok("install")
    found = [
        f for f in blog.blogpub("doctor", "--json").json()["findings"] if f["check"] == "fonts"
    ]
    assert all(f["status"] == "ok" for f in found), found

    # `public/fonts` is a file here, so nothing can be written below it (even by root).
    shutil.rmtree(blog.root / "public")
    (blog.root / "public").write_text("not a folder\n")
    res = blog.blogpub("doctor", "--json")
    problems = [
        f for f in res.json()["findings"] if f["check"] == "fonts" and f["status"] == "problem"
    ]
    assert res.returncode == 1 and len(problems) == 1, problems
    assert CSS in problems[0]["message"] and "fonts.chunked" in problems[0]["hint"]


def test_fonts_removes_the_chunk_of_a_slice_no_article_uses_any_more(tmp_path: Path) -> None:
    source, face = cjk_font()
    cover = coverage(source, face)
    blog = cjk_chunked_blog(tmp_path)
    used = _remote_article_chars(blog) | ASCII
    in_use = {slices.slice_of(cp) for cp in used}
    new = next(cp for cp in sorted(cover) if cp >= 0x4E00 and slices.slice_of(cp) not in in_use)
    chunk = f"{CHUNKED}/{slices.slice_of(new)}.woff2"
    note = blog.root / "content" / "posts" / "k.mdx"
    note.write_text(_note("k", new), encoding="utf-8")
    blog.ok("fonts")
    assert (blog.root / chunk).is_file()

    note.unlink()
    res = blog.ok("fonts")
    assert f"removed {chunk}" in res.stdout
    assert not (blog.root / chunk).exists()
    assert f"{slices.slice_of(new)}.woff2" not in _declared((blog.root / CSS).read_text("utf-8"))
    blog.ok("fonts", "--check")
    assert blog.git("status", "--porcelain") == ""  # back to what the remote holds


def test_a_hand_written_note_is_delivered_with_just_its_chunk(tmp_path: Path) -> None:
    source, face = cjk_font()
    blog = cjk_chunked_blog(tmp_path)
    blog.ok("install")
    used = _remote_article_chars(blog) | ASCII
    (new,) = _fresh_in_used_slices(used, coverage(source, face), 1)
    chunk = f"{CHUNKED}/{slices.slice_of(new)}.woff2"
    before = _remote_tree(blog)
    (blog.root / "content" / "posts" / "note.mdx").write_text(_note("one", new), "utf-8")

    blog.ok("run", "--until-idle")

    (commit,) = blog.remote_git(
        "log", "--format=%H", "--fixed-strings", "--grep=Blog-External-Sync: ", "main"
    ).split()
    assert set(blog.remote_git("show", "--format=", "--name-only", commit).split()) == {
        "content/posts/note.mdx",
        chunk,
    }
    after = _remote_tree(blog)
    assert {p for p in after if before.get(p) != after[p]} == {chunk}
    assert new in cmap(blog.remote_file(chunk))
    assert blog.git("status", "--porcelain") == ""


def _fresh_in_new_slices(used: set[int], cover: set[int]) -> tuple[int, int]:
    """Two characters the font draws, each opening a slice the blog does not use yet, with
    rules the blog already declares between their places in the stylesheet: git then merges
    the two new rules without a conflict. (Two rules inserted at one place conflict.)"""
    taken = {slices.slice_of(cp) for cp in used}
    fresh: list[tuple[int, int]] = []  # (rules declared before the slice's place, a character)
    declared = 0
    for name in slices.names():
        if name in taken:
            declared += 1
            continue
        cp = next(
            (c for lo, hi in slices.members(name) for c in range(lo, hi + 1) if c in cover),
            None,
        )
        if cp is not None and chr(cp).isalpha():
            fresh.append((declared, cp))
    (first, a), (last, b) = fresh[0], fresh[-1]
    assert last > first, f"no declared rule between two unused slices: {sorted(taken)}"
    return a, b


def test_two_writers_whose_stylesheet_rules_git_merges_cleanly_both_publish(
    tmp_path: Path,
) -> None:
    """Each node's job adds one rule to blog.css, far apart: git's rebase merges them into a
    stylesheet no artifact holds. It is accepted because it is what the merged articles give
    (or rebuilt when it is not), never refused as a write-set violation."""
    source, face = cjk_font()
    first = cjk_chunked_blog(tmp_path)
    second = first.clone("second")
    used = _remote_article_chars(first) | ASCII
    a, b = _fresh_in_new_slices(used, coverage(source, face))
    job_a = first.submit("a", _note("a", a))
    job_b = second.submit("b", _note("b", b))
    first.ok("run", "--until-idle", env={"GITPUB_NODE": "node-a"})
    second.ok("run", "--until-idle", env={"GITPUB_NODE": "node-b"})

    assert first.job(job_a)["job"]["state"] == "PUBLISHED"
    job = second.job(job_b)
    assert job["job"]["state"] == "PUBLISHED", job["events"]
    # git merged the two rules itself: nothing conflicted on the way to be rebuilt.
    assert not [e for e in job["events"] if e["detail"].get("conflicted")], job["events"]
    css = second.remote_file(CSS).decode()
    declared = _declared(css)
    assert any(_in_range(a, r) for r in declared.values()), css
    assert any(_in_range(b, r) for r in declared.values()), css
    # The stylesheet on the remote is the one the remote's articles give.
    second.git("pull", "--quiet", "--ff-only", "origin", "main")
    assert second.blogpub("fonts", "--check").returncode == 0
    assert _commit_files(second, "main") - {CSS} <= {
        "content/posts/b.mdx",
        f"{CHUNKED}/{slices.slice_of(b)}.woff2",
    }
