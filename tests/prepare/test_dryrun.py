"""`git blogpub dry-run`: the real prepare steps, with the blog left exactly as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from testing import secret_corpus
from testing.fixtures import CONFIG, Blog, article, make_blog
from testing.fontkit import tiny_blog

from gitpub.cli.commands import dryrun, submit
from gitpub.core.errors import GitpubError


def _files(root: Path, skip: str | None = None) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if skip and (rel == skip or rel.startswith(skip + "/")):
            continue
        if path.is_file() or path.is_symlink():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


def snapshot(blog: Blog) -> dict[str, Any]:
    """Everything a user would check: status, every ref, worktrees, the state dir's bytes,
    the git dir's layout and the live checkout's files."""
    state = blog.root / ".git" / "blogpub"
    return {
        "status": blog.git(
            "status", "--porcelain=v2", "--branch", "--untracked-files=all", "--ignored"
        ),
        "refs": blog.git("for-each-ref", "--format=%(refname) %(objectname)"),
        "head": blog.git("symbolic-ref", "HEAD") + " " + blog.git("rev-parse", "HEAD"),
        "worktrees": blog.git("worktree", "list", "--porcelain"),
        "state": _files(state) if state.exists() else None,
        "git dir": sorted(p.name for p in (blog.root / ".git").iterdir()),
        "checkout": _files(blog.root, skip=".git"),
    }


def _source(blog: Blog, name: str, text: str) -> str:
    path = blog.root.parent / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_dry_run_prints_target_manifest_and_diff_and_changes_nothing(blog: Blog) -> None:
    published = blog.submit("k1", article("Gardening", "Tomatoes need sun, water and patience."))
    blog.ok("run", "--until-idle")
    (blog.root / "notes.txt").write_text("a person's unsaved work\n")  # a dirty live checkout
    before = snapshot(blog)

    text = article("Sailing", "Reefing early keeps the boat upright in a squall.")
    out = blog.ok("dry-run", "--source", _source(blog, "new.mdx", text)).stdout
    data = text.encode("utf-8")
    assert "outcome:  READY_TO_COMMIT" in out
    assert "target:   content/posts/Sailing.mdx (NEW)" in out
    assert f"content/posts/Sailing.mdx  sha256 {hashlib.sha256(data).hexdigest()}" in out
    assert f"{len(data)} bytes" in out
    assert "--- /dev/null\n+++ b/content/posts/Sailing.mdx\n" in out
    assert "+Reefing early keeps the boat upright in a squall." in out
    assert snapshot(blog) == before

    # From stdin, an update of an existing article: the diff is against the base's version.
    update = article("Hello", "The first post of this blog, written by hand. And a new line.")
    out = blog.ok(
        "dry-run", "--source", "-", "--target", "content/posts/hello.mdx", input=update
    ).stdout
    assert "target:   content/posts/hello.mdx (UPDATE)" in out
    assert "--- a/content/posts/hello.mdx\n+++ b/content/posts/hello.mdx\n" in out
    assert "-The first post of this blog, written by hand.\n" in out
    assert "+The first post of this blog, written by hand. And a new line.\n" in out
    assert snapshot(blog) == before
    assert [(j["job_id"], j["state"]) for j in blog.status()] == [(published, "PUBLISHED")]


def test_dry_run_before_any_job_creates_no_state_and_reports_a_skip(blog: Blog) -> None:
    before = snapshot(blog)
    assert before["state"] is None
    duplicate = article("Hello", "The first post of this blog, written by hand.")
    source = _source(blog, "dup.mdx", duplicate)
    out = blog.ok("dry-run", "--source", source, "--target", "content/posts/again.mdx").stdout
    assert "outcome:  SKIPPED" in out and "1.000 similar to content/posts/hello.mdx" in out
    assert "manifest:" not in out
    assert snapshot(blog) == before
    assert not (blog.root / ".git" / "blogpub").exists()


def test_dry_run_validates_source_and_target_exactly_like_submit(blog: Blog) -> None:
    good = _source(blog, "good.mdx", article("Fine", "A perfectly fine article body."))
    empty = _source(blog, "empty.mdx", "   \n")
    leaky = _source(blog, "leaky.mdx", article("Leak", f"token {secret_corpus.one('np.github.1')}"))
    cases = [
        (good, "../outside.mdx"),
        (good, "content/posts/x.txt"),
        (empty, None),
        (leaky, None),
        (str(blog.root.parent / "missing.mdx"), None),
    ]
    for source, target in cases:
        with pytest.raises(GitpubError) as dry:
            dryrun.main(blog.root, source=source, target=target)
        with pytest.raises(GitpubError) as sub:
            submit.main(blog.root, key="k", source=source, target=target, topic=None, as_json=False)
        assert dry.value.message == sub.value.message, (source, target)
    res = blog.ok("dry-run", "--source", good, "--target", "content/posts/chosen.mdx")
    assert "target:   content/posts/chosen.mdx (NEW)" in res.stdout


def test_dry_run_runs_the_font_gate_in_its_scratch_checkout(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    before = snapshot(blog)
    text = article("新文章", "今天学习新的技术。")
    out = blog.ok("dry-run", "--source", _source(blog, "cjk.mdx", text)).stdout
    assert "outcome:  READY_TO_COMMIT" in out
    assert "  public/fonts/blog.woff2  sha256 " in out
    assert "Binary files a/public/fonts/blog.woff2 and b/public/fonts/blog.woff2 differ" in out
    assert "+今天学习新的技术。" in out
    assert snapshot(blog) == before


BUNDLES = CONFIG.replace(
    'content = ["content/posts"]',
    'content = ["content/posts"]\nsuffixes = [".md"]\npath = "content/posts/{slug}/index.md"',
)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def test_dry_run_places_assets_beside_the_article_as_submit_would(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, BUNDLES)
    cover = tmp_path / "cover.png"
    cover.write_bytes(PNG)
    text = "---\ntitle: 带图\nslug: with-image\n---\n\n![](cover.png)\n"
    source = _source(blog, "post.md", text)
    before = snapshot(blog)

    out = blog.ok("dry-run", "--source", source, "--asset", str(cover)).stdout
    assert "outcome:  READY_TO_COMMIT" in out
    assert "asset:    cover.png -> content/posts/with-image/cover.png (new)" in out
    digest = hashlib.sha256(PNG).hexdigest()
    assert f"  content/posts/with-image/cover.png  sha256 {digest}  {len(PNG)} bytes" in out
    assert "Binary files /dev/null and b/content/posts/with-image/cover.png differ" in out
    assert snapshot(blog) == before

    # Published for real; then the same asset name with other bytes would stop in REVIEW.
    blog.ok("submit", "--key", "a", "--source", source, "--asset", str(cover))
    blog.ok("run", "--until-idle")
    blob = blog.remote_git("rev-parse", "main:content/posts/with-image/cover.png")
    other = tmp_path / "other" / "cover.png"
    other.parent.mkdir()
    other.write_bytes(PNG[::-1])
    second = _source(blog, "second.md", text.replace("![](cover.png)", "A new cover."))
    before = snapshot(blog)
    out = blog.ok("dry-run", "--source", second, "--asset", str(other)).stdout
    assert out.startswith(
        "outcome:  REVIEW (a submit would stop in REVIEW): asset "
        "content/posts/with-image/cover.png already exists with other bytes"
    )
    assert "asset:    cover.png -> content/posts/with-image/cover.png (other bytes)" in out
    assert "manifest:" not in out
    assert snapshot(blog) == before
    assert blog.remote_git("rev-parse", "main:content/posts/with-image/cover.png") == blob

    # The same bytes again are no change for the asset.
    out = blog.ok("dry-run", "--source", second, "--asset", str(cover)).stdout
    assert "asset:    cover.png -> content/posts/with-image/cover.png (same bytes)" in out


def test_dry_run_refuses_a_bad_asset_exactly_like_submit(blog: Blog) -> None:
    good = _source(blog, "good.mdx", article("Fine", "A perfectly fine article body."))
    folder = blog.root.parent / "a-folder"
    folder.mkdir()
    for asset in (str(blog.root.parent / "missing.png"), str(folder), ".hidden"):
        with pytest.raises(GitpubError) as dry:
            dryrun.main(blog.root, source=good, target=None, assets=(asset,))
        with pytest.raises(GitpubError) as sub:
            submit.main(
                blog.root,
                key="k",
                source=good,
                target=None,
                topic=None,
                as_json=False,
                assets=(asset,),
            )
        assert dry.value.message == sub.value.message, asset
    res = blog.blogpub("dry-run", "--source", good, "--asset", str(folder))
    assert res.returncode == 1
    assert res.stderr == f"git blogpub: --asset {folder}: is a directory, not a file\n"


def test_dry_run_of_a_taken_down_post_says_review_as_run_does(blog: Blog) -> None:
    """The dry run reads what the blog published from the blog's own store: a post a person
    took down stops the dry run's job as it stops the run's, and the store is left as it was."""
    first = blog.submit("post", article("Post", "The first version, soon taken down."))
    blog.ok("run", "--until-idle")
    path = blog.job(first)["job"]["target_path"]
    blog.clone("person").remove_by_hand(path, "Take the post down")
    blog.ok("run", "--until-idle")  # fetched: the takedown noticed
    before = snapshot(blog)

    revision = _source(blog, "revision.mdx", article("Post", "A revision of the post."))
    out = blog.ok("dry-run", "--source", revision, "--target", path).stdout
    assert "outcome:  REVIEW" in out and f"{path} left the branch after job {first}" in out
    assert snapshot(blog) == before

    again = blog.submit_args("post-2", Path(revision), "--target", path)
    blog.ok("run", "--until-idle")
    assert blog.job(again)["job"]["state"] == "REVIEW"
