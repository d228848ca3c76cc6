"""`run`, `dry-run` and `doctor` ask one set of questions of where a job lands — the remote,
the branch on it, the places of the font outputs — so none of them promises what another
refuses: for each planted fault, `doctor` names it with its fix and exits 1, `dry-run` does
not say READY, and `run` stops the job in REVIEW with the same words, nothing pushed."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, git, make_blog
from testing.fontkit import cjk_font, tiny_collection, tiny_font

from gitpub import config
from gitpub.config import faces

FONTS = '\n[fonts]\nsource = "fonts/tiny.ttf"\noutputs = ["{output}"]\n'


def _set_config(blog: Blog, text: str, *extra: str) -> None:
    (blog.root / ".blogpub.toml").write_text(text)
    blog.git("add", ".blogpub.toml", *extra)
    blog.git("commit", "--quiet", "-m", "config")
    blog.git("push", "--quiet", "origin", "main")


def _font_blog(blog: Blog, output: str) -> None:
    tiny_font(blog.root / "fonts" / "tiny.ttf")
    _set_config(blog, CONFIG + FONTS.format(output=output), "fonts")


def _doctor_problems(blog: Blog) -> str:
    res = blog.blogpub("doctor")
    assert res.returncode == 1, res.stdout
    return "\n".join(ln for ln in res.stdout.splitlines() if not ln.startswith("ok"))


def _dry_run(blog: Blog) -> str:
    src = blog.root.parent / "draft.md"
    src.write_text(article("Draft", "A post that would be published.", slug="draft"))
    res = blog.blogpub("dry-run", "--source", str(src))
    assert res.returncode == 0, res.stderr
    return res.stdout


def _run_one(blog: Blog) -> dict[str, object]:
    before = blog.remote_log()
    job = blog.submit("k", article("Draft", "A post that would be published.", slug="draft"))
    blog.ok("run", "--until-idle")
    assert blog.remote_log() == before  # nothing pushed
    shown = blog.job(job)
    reason = next(
        e["detail"]["reason"] for e in reversed(shown["events"]) if "reason" in e["detail"]
    )
    return {**shown["job"], "reason": reason}


def test_a_branch_the_remote_lacks_is_named_with_its_default_branch(blog: Blog) -> None:
    _set_config(blog, CONFIG.replace('branch = "main"', 'branch = "master"'))
    said = "branch 'master' does not exist on remote 'origin' (its default branch is 'main'"
    problems = _doctor_problems(blog)
    assert said in problems and "set publish.branch = 'main'" in problems
    assert "git fetch" not in problems
    out = _dry_run(blog)
    assert out.startswith("outcome:  REVIEW") and said in out
    job = _run_one(blog)
    assert job["state"] == "REVIEW" and said in str(job["reason"])


def test_a_font_output_inside_a_submodule_is_refused_before_any_commit(
    blog: Blog, tmp_path: Path
) -> None:
    pages = tmp_path / "pages.git"
    git(tmp_path, "init", "--quiet", "--bare", str(pages))
    seed = tmp_path / "pages-seed"
    git(tmp_path, "clone", "--quiet", str(pages), str(seed))
    (seed / "index.html").write_text("<html></html>\n")
    git(seed, "add", ".")
    git(seed, "commit", "--quiet", "-m", "site")
    git(seed, "push", "--quiet", "origin", "HEAD:main")
    git(
        blog.root,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(pages),
        "public",
    )
    _font_blog(blog, "public/fonts/blog.woff2")
    said = "fonts.outputs public/fonts/blog.woff2 lies inside submodule 'public'"
    assert said in _doctor_problems(blog)
    out = _dry_run(blog)
    assert "READY_TO_COMMIT" not in out and said in out
    job = _run_one(blog)
    assert (job["state"], job["failure_code"]) == ("REVIEW", "write_set_violation")
    assert said in str(job["reason"])
    assert git(blog.remote, "ls-tree", "main", "public").split()[:2] == ["160000", "commit"]


def test_a_font_output_in_an_ignored_folder_is_refused(blog: Blog) -> None:
    (blog.root / ".gitignore").write_text("# the built site\npublic/\n")
    _font_blog(blog, "public/fonts/blog.woff2")
    blog.git("add", ".gitignore")
    blog.git("commit", "--quiet", "-m", "ignore the build")
    blog.git("push", "--quiet", "origin", "main")
    said = "fonts.outputs public/fonts/blog.woff2 is ignored by `.gitignore:2` ('public/')"
    problems = _doctor_problems(blog)
    assert said in problems and "static/" in problems
    assert said in _dry_run(blog)
    job = _run_one(blog)
    assert job["state"] == "REVIEW" and said in str(job["reason"])


def test_a_font_blog_whose_outputs_git_can_hold_is_ready(blog: Blog) -> None:
    """The same checks pass a blog with nothing wrong: no false alarm."""
    _font_blog(blog, "static/fonts/blog.woff2")
    assert blog.blogpub("doctor").stdout.count("PROBLEM") == 2  # the hooks, not installed
    assert _dry_run(blog).startswith("outcome:  READY_TO_COMMIT")


def test_no_remote_dry_run_is_refused_as_submit_is(blog: Blog) -> None:
    blog.git("remote", "remove", "origin")
    src = blog.root.parent / "draft.md"
    src.write_text(article("Draft", "Nowhere to go."))
    for command in ("dry-run", "submit"):
        args = [command, "--source", str(src)] + (["--key", "k"] if command == "submit" else [])
        res = blog.blogpub(*args)
        assert res.returncode == 1 and "no remote named 'origin'" in res.stderr, res.stderr
    assert "no remote named 'origin'" in _doctor_problems(blog)


def test_an_empty_remote_names_the_push_that_gives_it_a_branch(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    root = tmp_path / "blog"
    git(tmp_path, "clone", "--quiet", str(remote), str(root))
    blog = Blog(root, remote)
    (root / ".blogpub.toml").write_text(CONFIG)
    problems = _doctor_problems(blog)
    said = "remote 'origin' has no branch yet (an empty repository)"
    assert said in problems and "git push origin HEAD:main" in problems
    assert "git fetch" not in problems
    job = blog.submit("first", article("First", "Into an empty remote."))
    blog.ok("run", "--until-idle")
    shown = blog.job(job)
    assert shown["job"]["state"] == "REVIEW"
    assert any("git push origin HEAD:main" in str(e["detail"]) for e in shown["events"])


def test_a_missing_content_folder_and_an_ignored_config_are_problems(blog: Blog) -> None:
    (blog.root / ".gitignore").write_text(".*\n!.gitignore\n")
    git(blog.root, "rm", "--quiet", "--cached", ".blogpub.toml")
    (blog.root / ".blogpub.toml").write_text(CONFIG.replace("content/posts", "content/post"))
    problems = _doctor_problems(blog)
    assert "publish.content 'content/post' does not exist" in problems
    assert ".blogpub.toml is ignored by `.gitignore:1` ('.*')" in problems
    assert "!.blogpub.toml" in problems
    assert "ok       config     publishing" not in problems


JP_SC = ["Tiny CJK JP", "Tiny CJK KR", "Tiny CJK SC", "Tiny CJK TC"]


def _language_blog(tmp_path: Path, face: str) -> Blog:
    blog = make_blog(tmp_path)
    (blog.root / "hugo.toml").write_text('languageCode = "zh-CN"\n')
    tiny_collection(blog.root / "fonts" / "cjk.ttc", families=JP_SC)
    fonts = f'\n[fonts]\nsource = "fonts/cjk.ttc"\n{face}outputs = ["static/fonts/b.woff2"]\n'
    _set_config(blog, CONFIG + fonts, "fonts", "hugo.toml")
    return blog


def test_doctor_names_the_face_family_and_the_language_it_is_drawn_for(tmp_path: Path) -> None:
    blog = _language_blog(tmp_path, "face = 0\n")
    problems = _doctor_problems(blog)
    assert "fonts.face 0 of cjk.ttc is 'Tiny CJK JP', drawn for ja" in problems
    assert "the blog is 'zh-CN' (hugo.toml languageCode)" in problems
    assert "set fonts.face = 2 (Tiny CJK SC)" in problems


def test_an_unset_face_of_a_collection_follows_the_blog_language(tmp_path: Path) -> None:
    blog = _language_blog(tmp_path, "")
    assert config.load(blog.root).fonts.face == 2  # type: ignore[union-attr]
    out = blog.blogpub("doctor").stdout
    assert "fonts/cjk.ttc face 2 (Tiny CJK SC, zh-Hans)" in out
    (blog.root / "hugo.toml").write_text('defaultContentLanguage = "zh-tw"\n')
    assert config.load(blog.root).fonts.face == 3  # type: ignore[union-attr]
    (blog.root / "hugo.toml").write_text('languageCode = "en-US"\n')
    assert config.load(blog.root).fonts.face == 0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("language", "family"),
    [("zh-CN", "SC"), ("zh-Hans", "SC"), ("zh-TW", "TC"), ("zh-HK", "TC"), ("zh_Hant", "TC")]
    + [("ja", "JP"), ("ja-JP", "JP"), ("ko", "KR"), ("ko-KR", "KR")],
)
def test_debians_noto_collection_faces_by_their_own_names(language: str, family: str) -> None:
    source, _ = cjk_font()
    if not source.endswith(".ttc"):
        pytest.skip("the CJK font here is no collection")
    names = faces.families(Path(source))
    assert names[0] == "Noto Sans CJK JP" and names[2] == "Noto Sans CJK SC"
    chosen = faces.choose(Path(source), language)
    assert chosen is not None and chosen[1] == f"Noto Sans CJK {family}"
    assert names[chosen[0]] == chosen[1]
