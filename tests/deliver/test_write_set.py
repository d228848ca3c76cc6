"""A job changes only its own files. Each path clash below once made the job commit delete
another file on the remote; the write-set guard (gitpub.deliver.guard) stops every one of them
before the push, whatever let it through before: the job ends in REVIEW or is refused at
submit, and every other blob on the remote stays as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, git


def remote_tree(blog: Blog) -> dict[str, str]:
    """path -> 'mode oid' of every entry on the remote branch (symlinks included)."""
    out = blog.remote_git("ls-tree", "-r", "main")
    tree = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        mode, _, oid = meta.split()
        tree[path] = f"{mode} {oid}"
    return tree


def push_from_another_clone(
    blog: Blog, name: str, make: dict[str, str | None], fetched: bool = True
) -> None:
    """Another person's clone adds files (a value of None makes a symlink to /tmp) and pushes;
    the writer node fetches it (its prepare then builds on those files) unless `fetched` is
    False (its job then meets them only when delivered)."""
    other = blog.clone(name)
    for rel, text in make.items():
        path = other.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            os.symlink("/tmp", path)
        else:
            path.write_text(text)
    other.git("add", "-A")
    other.git("commit", "--quiet", "-m", "a person's posts")
    other.git("push", "--quiet", "origin", "HEAD:main")
    if fetched:
        blog.git("fetch", "--quiet", "origin")


def publish(blog: Blog, key: str, text: str, *extra: str) -> tuple[int, str]:
    """Submit and run; (submit exit status, final state or '')."""
    src = blog.root.parent / f"{key}.md"
    src.write_text(text)
    res = blog.blogpub("submit", "--key", key, "--source", str(src), "--json", *extra)
    if res.returncode != 0:
        assert res.returncode == 1 and len(res.stderr.splitlines()) == 1, res.stderr
        return 1, ""
    job_id = res.json()["job_id"]
    blog.ok("run", "--until-idle")
    return 0, blog.job(job_id)["job"]["state"]


def assert_kept(before: dict[str, str], after: dict[str, str]) -> None:
    """Every entry that was on the remote is still there, unchanged."""
    changed = {p: (v, after.get(p)) for p, v in before.items() if after.get(p) != v}
    assert changed == {}


@pytest.mark.parametrize("fetched", [True, False], ids=["fetched", "stale"])
@pytest.mark.parametrize(
    ("name", "others", "extra"),
    [
        (
            "file where the job needs a folder",
            {"content/posts/existing.md": "a person's post\n"},
            ("--target", "content/posts/existing.md/child.md"),
        ),
        (
            "folder where the job writes a file",
            {"content/posts/dir.md/one.md": "one\n", "content/posts/dir.md/two.md": "two\n"},
            ("--target", "content/posts/dir.md"),
        ),
        (
            "a symlink another clone pushed",
            {"content/posts/out": None},
            ("--target", "content/posts/out/evil.md"),
        ),
    ],
)
def test_a_path_clash_never_deletes_another_file(
    blog: Blog, name: str, others: dict[str, str | None], extra: tuple[str, ...], fetched: bool
) -> None:
    push_from_another_clone(blog, "person", others, fetched)
    before = remote_tree(blog)
    code, state = publish(blog, "clash", article("Clash", "A new post."), *extra)
    assert_kept(before, remote_tree(blog))
    # Built on those files, prepare names the clash; not yet fetched, the replay meets them
    # at delivery and names it there: REVIEW either way (or submit refuses), nothing pushed.
    assert code == 1 or state == "REVIEW", (name, state)


def test_a_template_slug_naming_a_file_never_deletes_it(tmp_path: Path) -> None:
    from testing.fixtures import make_blog

    blog = make_blog(
        tmp_path,
        CONFIG + '\n[publish]\npath = "content/posts/{slug}/index.md"\n'
        if "[publish]" not in CONFIG
        else CONFIG.replace(
            'content = ["content/posts"]',
            'content = ["content/posts"]\npath = "content/posts/{slug}/index.md"',
        ),
    )
    push_from_another_clone(blog, "person", {"content/posts/existing.md": "a person's post\n"})
    before = remote_tree(blog)
    code, state = publish(
        blog, "slug", article("Slug", "Its slug names a file.", slug="existing.md")
    )
    assert_kept(before, remote_tree(blog))
    assert code == 1 or state == "REVIEW"


def test_an_asset_named_like_a_folder_never_replaces_it(blog: Blog) -> None:
    push_from_another_clone(
        blog,
        "person",
        {"content/posts/images/a.png": "png a\n", "content/posts/images/b.png": "b\n"},
    )
    before = remote_tree(blog)
    asset = blog.root.parent / "images"
    asset.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    code, state = publish(
        blog,
        "asset",
        article("Asset", "With an image."),
        "--target",
        "content/posts/asset.md",
        "--asset",
        str(asset),
    )
    assert_kept(before, remote_tree(blog))
    assert code == 1 or state == "REVIEW"


def test_the_guard_stops_a_job_commit_that_deletes_another_file(blog: Blog) -> None:
    """Whatever let it through before: here the job's own commit was replaced (its ref moved,
    as anyone with a shell on the node can do when no hook guards it) by one that carries the
    job's trailers and files but also deletes README.md. Only the guard stands in the way."""
    job_id = blog.committed_not_pushed("v", article("V", "Body."))
    blog.forge_job_commit(job_id, deleting="README.md")
    before = remote_tree(blog)

    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    assert shown["job"]["failure_code"] == "write_set_violation"
    assert any("README.md: deleted" in str(e["detail"]) for e in shown["events"])
    assert_kept(before, remote_tree(blog))


def test_the_review_names_the_clash_before_anything_is_built(blog: Blog) -> None:
    push_from_another_clone(blog, "person", {"content/posts/existing.md": "a person's post\n"})
    src = blog.root.parent / "v.md"
    src.write_text(article("V", "Body."))
    target = "content/posts/existing.md/child.md"
    preview = blog.ok("dry-run", "--source", str(src), "--target", target).stdout
    assert "REVIEW" in preview and "existing.md is a file where" in preview
    job_id = blog.ok(
        "submit", "--key", "v", "--source", str(src), "--json", "--target", target
    ).json()["job_id"]
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    assert shown["job"]["failure_code"] == "write_set_violation"
    assert git(blog.remote, "show", "main:content/posts/existing.md") == "a person's post"
