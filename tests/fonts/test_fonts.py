"""The font gate and the subsets on a tiny font built on the spot: which characters, which
bytes, when nothing is written, and the errors a user sees for a bad font."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
from testing.fixtures import Blog, article
from testing.fontkit import (
    COVERED,
    PUNCTUATION,
    chars,
    cmap,
    fonts_table,
    make_font_blog,
    tiny_blog,
    tiny_collection,
    tiny_font,
)

from gitpub import config, fonts, intake
from gitpub.context import open_context
from gitpub.core.states import State
from gitpub.fonts import engine
from gitpub.prepare import Preparer
from gitpub.prepare.jobtree import discard_worktree, ensure_worktree
from gitpub.store import jobs

ASCII = set(range(0x20, 0x7F))


def _write(blog: Blog, name: str, title: str, body: str) -> str:
    text = article(title, body)
    path = blog.root / "content" / "posts" / name
    path.write_text(text, encoding="utf-8")
    return text


def _all_article_chars(root: Path) -> set[int]:
    out: set[int] = set()
    for path in (root / "content" / "posts").glob("*.mdx"):
        out |= chars(path.read_text("utf-8"))
    return out


def test_gate_writes_subsets_holding_exactly_the_used_characters(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path, outputs=("public/fonts/blog.woff2", "public/fonts/blog.woff"))
    _write(blog, "new.mdx", "新文章", "我们今天学习中文，用了很多字。还有一个罕见字：龘。")
    cfg = config.load(blog.root)

    answer = fonts.gate(cfg, blog.root)

    want = (_all_article_chars(blog.root) | ASCII) & COVERED
    for output in ("public/fonts/blog.woff2", "public/fonts/blog.woff"):
        data = (blog.root / output).read_bytes()
        assert cmap(data) == want
        assert answer["outputs"][output] == hashlib.sha256(data).hexdigest()
    assert (blog.root / "public/fonts/blog.woff2").read_bytes()[:4] == b"wOF2"
    assert (blog.root / "public/fonts/blog.woff").read_bytes()[:4] == b"wOFF"
    assert answer["missing"]["count"] == 1 and answer["missing"]["sample"] == "龘"
    assert answer["missing_new"]["sample"] == "龘"
    assert answer["review"] is None  # policy "warn"
    # Nothing but the outputs was written: no temporary file is left next to them.
    assert sorted(p.name for p in (blog.root / "public/fonts").iterdir()) == [
        "blog.woff",
        "blog.woff2",
    ]


def test_unchanged_set_writes_nothing_and_rebuilds_are_byte_identical(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    out = blog.root / "public/fonts/blog.woff2"
    cfg = config.load(blog.root)
    # An article that adds no character: the committed subset stays as it is.
    _write(blog, "same.mdx", "你好", "这是第一篇文章。")
    before, stamp = out.read_bytes(), out.stat().st_mtime_ns
    answer = fonts.gate(cfg, blog.root)
    assert answer["written"] == [] and answer["outputs"] == {}
    assert out.stat().st_mtime_ns == stamp and out.read_bytes() == before
    assert fonts.stale(cfg, blog.root) == {}

    _write(blog, "more.mdx", "更多", "我们学习中文。")
    assert fonts.stale(cfg, blog.root) == {"public/fonts/blog.woff2": "characters changed"}
    assert fonts.regenerate(cfg, blog.root) == ["public/fonts/blog.woff2"]
    first = out.read_bytes()
    out.unlink()
    assert fonts.regenerate(cfg, blog.root) == ["public/fonts/blog.woff2"]
    assert out.read_bytes() == first  # reproducible byte for byte
    assert fonts.regenerate(cfg, blog.root) == []


@pytest.mark.parametrize("engine_name", ["harfbuzz", "fonttools"])
def test_both_engines_give_the_same_cmap(tmp_path: Path, engine_name: str) -> None:
    if engine_name == "harfbuzz" and not engine.harfbuzz_available():
        pytest.skip("uharfbuzz is not installed")
    blog = tiny_blog(tmp_path, extra=f'engine = "{engine_name}"\n')
    _write(blog, "x.mdx", "引擎", "中国人民学习科学技术。")
    answer = fonts.gate(config.load(blog.root), blog.root)
    assert answer["engine"] == engine_name
    data = (blog.root / "public/fonts/blog.woff2").read_bytes()
    assert cmap(data) == (_all_article_chars(blog.root) | ASCII) & COVERED


def test_always_kept_characters_and_which_articles_count(tmp_path: Path) -> None:
    extra = 'always = "none"\ncjk_punctuation = true\narticles = ["notes/**/*.txt"]\n'
    blog = tiny_blog(tmp_path, extra=extra)
    (blog.root / "notes" / "a").mkdir(parents=True)
    (blog.root / "notes" / "a" / "n.txt").write_text("学习", encoding="utf-8")
    (blog.root / "notes" / "skip.md").write_text("科学", encoding="utf-8")  # not a .txt
    cfg = config.load(blog.root)
    fonts.regenerate(cfg, blog.root)
    got = cmap((blog.root / "public/fonts/blog.woff2").read_bytes())
    punctuation = {cp for cp in COVERED if cp > 0x7F and chr(cp) in PUNCTUATION}
    assert got == chars("学习") | punctuation
    # A gitignored file is no article: a careful git user expects ignored drafts to stay out.
    (blog.root / ".gitignore").write_text("notes/drafts/\n")
    (blog.root / "notes" / "drafts").mkdir()
    (blog.root / "notes" / "drafts" / "d.txt").write_text("科学", encoding="utf-8")
    assert fonts.stale(cfg, blog.root) == {}


def test_review_policy_stops_only_characters_the_change_brings(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path, extra='missing = "review"\n')
    # An article already published with a character the font lacks does not block others.
    _write(blog, "old.mdx", "旧文", "一个罕见字：龘。")
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "old article")
    cfg = config.load(blog.root)
    _write(blog, "fine.mdx", "新文", "我们学习。")
    answer = fonts.gate(cfg, blog.root)
    assert answer["review"] is None
    assert answer["missing"]["sample"] == "龘" and answer["missing_new"]["count"] == 0
    _write(blog, "bad.mdx", "新文", "另一个罕见字：𪚥。")
    answer = fonts.gate(cfg, blog.root)
    assert answer["review"] and "𪚥" in answer["review"]
    # Invisible characters (a BOM, a zero-width joiner) are never "missing".
    _write(blog, "bad.mdx", "新文", "\ufeff我们\u200d学习。")
    assert fonts.gate(cfg, blog.root)["review"] is None


def _fonts_error(blog: Blog, table: str) -> str:
    cfg = (blog.root / ".blogpub.toml").read_text()
    head = cfg[: cfg.index("[fonts]")]
    (blog.root / ".blogpub.toml").write_text(head + table)
    res = blog.blogpub("fonts")
    assert res.returncode == 1, res
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    return lines[0]


def test_bad_font_inputs_are_one_line_errors_naming_the_key(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    tiny_collection(blog.root / "fonts" / "two.ttc", faces=2)
    (blog.root / "fonts" / "junk.ttf").write_bytes(b"this is not a font at all")

    line = _fonts_error(blog, fonts_table("fonts/nope.ttf"))
    assert "fonts.source" in line and "fonts/nope.ttf" in line and "no such file" in line
    line = _fonts_error(blog, fonts_table("fonts/two.ttc", face=2))
    assert "fonts.face = 2" in line and "two.ttc" in line and "2 face(s)" in line
    line = _fonts_error(blog, fonts_table("fonts/tiny.ttf", face=1))
    assert "fonts.face = 1" in line and "single font" in line
    line = _fonts_error(blog, fonts_table("fonts/junk.ttf"))
    assert "fonts/junk.ttf" in line and "not a TrueType or OpenType font" in line
    line = _fonts_error(blog, fonts_table("fonts/tiny.ttf", extra='cjk_punctuation = "yes"\n'))
    assert ".blogpub.toml" in line and "fonts.cjk_punctuation must be a boolean" in line
    line = _fonts_error(blog, fonts_table("fonts/tiny.ttf", extra='articles = "notes"\n'))
    assert "fonts.articles must be a list of non-empty strings" in line
    # The second face of a collection is a valid choice.
    (blog.root / ".blogpub.toml").write_text(
        (blog.root / ".blogpub.toml").read_text().split("[fonts]")[0]
        + fonts_table("fonts/two.ttc", face=1)
    )
    blog.ok("fonts")


def test_a_recorded_gate_answer_gets_its_files_back_in_a_recreated_worktree(
    tmp_path: Path,
) -> None:
    blog = tiny_blog(tmp_path)
    text = article("新文", "我们学习科学技术。")
    with open_context(blog.root) as ctx:
        job, _ = intake.create(ctx, key="k", source=text)
        base = ctx.repo.resolve(ctx.tracking_ref)
        assert base is not None
        job = jobs.record(ctx.store, job, "base", {"base_commit": base}, base_commit=base)

        def prepare_fonts(job: jobs.Job) -> dict[str, object]:
            worktree = ensure_worktree(ctx, job, base)
            (worktree / "content/posts/new.mdx").write_text(text, encoding="utf-8")
            return Preparer(ctx, job, lambda j: j).fonts(worktree)

        first = prepare_fonts(job)
        assert list(first["outputs"]) == ["public/fonts/blog.woff2"]  # type: ignore[call-overload]
        # A crash, and the worktree is gone: the step is recorded, its files are not.
        discard_worktree(ctx, job.job_id)
        job = jobs.get(ctx.store, job.job_id) or job
        again = prepare_fonts(job)
        assert again["outputs"] == first["outputs"]
        worktree = ctx.worktree_dir(job.job_id)
        assert fonts.outputs_differ(worktree, again["outputs"]) is False  # type: ignore[arg-type]
        steps = [e["step"] for e in jobs.events(ctx.store, job.job_id)]
        assert steps.count("step:fonts") == 1 and "fonts:restored" in steps
        assert job.state is State.RECEIVED


def test_quality_is_part_of_the_bytes(tmp_path: Path) -> None:
    font = tiny_font(tmp_path / "tiny.ttf")
    blog = make_font_blog(tmp_path, fonts_table("fonts/tiny.ttf", quality=1), font)
    cfg = config.load(blog.root)
    assert cfg.fonts is not None
    better = dataclasses.replace(cfg, fonts=dataclasses.replace(cfg.fonts, quality=11))
    assert fonts.stale(better, blog.root) == {"public/fonts/blog.woff2": "quality changed"}


def test_doctor_names_the_font_engine_and_the_gate_falls_back_without_harfbuzz(
    tmp_path: Path,
) -> None:
    blog = tiny_blog(tmp_path)
    _write(blog, "x.mdx", "引擎", "中国人民学习科学技术。")

    def engine_finding(env: dict[str, str] | None = None) -> dict[str, str]:
        report = blog.blogpub("doctor", "--json", env=env).json()
        # The font engine's finding; the font file's own (source, face, outputs) sits beside it.
        found = [
            f for f in report["findings"] if f["check"] == "fonts" and "font engine" in f["message"]
        ]
        assert len(found) == 1, report["findings"]
        return dict(found[0])

    # uharfbuzz is a required dependency wherever it has wheels, so a plain install has it.
    assert engine.harfbuzz_available()
    assert engine_finding()["message"].startswith("font engine: HarfBuzz (uharfbuzz ")

    # A platform without a wheel: uharfbuzz cannot be imported. The gate uses fontTools, and
    # doctor says so with the way to get HarfBuzz.
    shadow = tmp_path / "no-wheel"
    (shadow / "uharfbuzz").mkdir(parents=True)
    (shadow / "uharfbuzz" / "__init__.py").write_text(
        "raise ImportError('no uharfbuzz wheel for this platform')\n"
    )
    no_hb = {"PYTHONPATH": str(shadow)}
    finding = engine_finding(no_hb)
    assert finding["status"] == "warning" and "fontTools" in finding["message"]
    assert "git-blogpub[fast]" in finding["hint"]
    blog.ok("fonts", env=no_hb)
    data = (blog.root / "public/fonts/blog.woff2").read_bytes()
    assert cmap(data) == (_all_article_chars(blog.root) | ASCII) & COVERED
