"""Subsets end to end, through `git blogpub` as a user runs it: what the job commits carry,
two writers colliding on the subset, a crash mid-regeneration, `fonts --check` and
`rebase` in a person's checkout."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from testing.fixtures import Blog, article
from testing.fontkit import (
    COVERED,
    chars,
    cjk_blog,
    cjk_font,
    cmap,
    commit_article,
    coverage,
    tiny_blog,
)

WOFF2 = "public/fonts/blog.woff2"
ASCII = set(range(0x20, 0x7F))


def _remote_article_chars(blog: Blog) -> set[int]:
    listed = blog.remote_git("ls-tree", "-r", "-z", "--name-only", "main", "content/posts")
    out: set[int] = set()
    for name in filter(None, listed.split("\0")):
        out |= chars(blog.remote_file(name).decode("utf-8"))
    return out


def _commit_files(blog: Blog, rev: str) -> set[str]:
    out = blog.remote_git("diff-tree", "--no-commit-id", "--name-only", "-r", rev)
    return set(out.split())


def _events(blog: Blog, job_id: str) -> list[dict[str, object]]:
    return list(blog.job(job_id)["events"])


def test_job_commits_carry_article_and_regenerated_subset_of_a_real_cjk_font(
    tmp_path: Path,
) -> None:
    source, face = cjk_font()
    blog = cjk_blog(tmp_path)
    text = article("春天", "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。🦜", slug="spring")
    job_id = blog.submit("spring", text)
    blog.ok("run", "--until-idle")

    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert _commit_files(blog, "main") == {"content/posts/spring.mdx", WOFF2}
    font = cmap(blog.remote_file(WOFF2))
    assert font == (_remote_article_chars(blog) | ASCII) & coverage(source, face)
    assert chars("春眠晓啼鸟") <= font
    (fonts_step,) = [e for e in _events(blog, job_id) if e["step"] == "step:fonts"]
    detail = fonts_step["detail"]
    assert isinstance(detail, dict) and "🦜" in detail["missing"]["sample"]

    # An article made only of characters the subset already has: the commit is the article.
    again = blog.submit("again", article("春", "春天，花落。", slug="again"))
    blog.ok("run", "--until-idle")
    assert blog.job(again)["job"]["state"] == "PUBLISHED"
    assert _commit_files(blog, "main") == {"content/posts/again.mdx"}
    assert cmap(blog.remote_file(WOFF2)) == font


def test_two_nodes_font_only_conflict_is_regenerated_not_a_conflict(tmp_path: Path) -> None:
    source, face = cjk_font()
    first = cjk_blog(tmp_path)
    second = first.clone("second")
    a = first.submit("a", article("山", "山高月小，水落石出。", slug="mountain"))
    b = second.submit("b", article("海", "海阔凭鱼跃，天空任鸟飞。", slug="sea"))
    first.ok("run", "--until-idle", env={"GITPUB_NODE": "node-a"})
    a_article = first.remote_file("content/posts/mountain.mdx")

    # The second node prepared on the old base: both commits rewrite the subset.
    second.ok("run", "--until-idle", env={"GITPUB_NODE": "node-b"})

    job = second.job(b)
    assert job["job"]["state"] == "PUBLISHED", job
    steps = [e["step"] for e in job["events"]]
    assert "conflict" not in steps
    (regen,) = [e for e in job["events"] if e["step"] == "fonts:regenerated"]
    assert regen["detail"]["conflicted"] == [WOFF2]
    assert regen["detail"]["old_manifest"] != regen["detail"]["new_manifest"]
    assert regen["detail"]["new_manifest"] == job["job"]["artifact_sha256"]
    body = second.remote_git("log", "-1", "--format=%B", "main")
    assert f"Blog-Manifest-Sha256: {job['job']['artifact_sha256']}" in body
    assert "Blog-Writer-Node: node-b" in body

    font = cmap(second.remote_file(WOFF2))
    assert chars("山高月小水落石出海阔凭鱼跃天空任鸟飞") <= font
    assert font == (_remote_article_chars(second) | ASCII) & coverage(source, face)
    assert second.remote_file("content/posts/mountain.mdx") == a_article
    assert first.job(a)["job"]["state"] == "PUBLISHED"
    assert len(second.remote_log()) == 3  # scaffold, a, b: linear, nothing twice


def test_crash_during_font_regeneration_leaves_the_live_checkout_alone(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path, outputs=(WOFF2, "public/fonts/blog.woff"))
    live_before = {p: (blog.root / p).read_bytes() for p in (WOFF2, "public/fonts/blog.woff")}
    job_id = blog.submit("k", article("新文", "我们学习科学技术。", slug="new"))

    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "during_font_regeneration"})
    assert res.returncode == 137

    assert blog.git("status", "--porcelain", "--ignored", "--untracked-files=all") == ""
    for path, data in live_before.items():
        assert (blog.root / path).read_bytes() == data
    assert blog.job(job_id)["job"]["state"] == "PREPARING"

    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    for path in live_before:
        assert cmap(blog.remote_file(path)) == (_remote_article_chars(blog) | ASCII) & COVERED
    assert blog.git("status", "--porcelain", "--untracked-files=all") == ""


def test_fonts_check_detects_a_stale_subset_and_fonts_rebuilds_it(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    assert blog.ok("fonts", "--check").stdout.strip() == "fonts: up to date"
    commit_article(blog, "by-hand.mdx", "手写", "我们学习科学技术。", fonts_too=False)

    res = blog.blogpub("fonts", "--check")
    assert res.returncode == 1
    assert f"{WOFF2}: stale (characters changed)" in res.stderr
    assert blog.git("status", "--porcelain") == ""  # --check writes nothing

    assert f"rebuilt {WOFF2}" in blog.ok("fonts").stdout
    assert chars("科技术") <= cmap((blog.root / WOFF2).read_bytes())
    blog.ok("fonts", "--check")
    data = (blog.root / WOFF2).read_bytes()
    assert blog.ok("fonts").stdout.strip() == "fonts: up to date"
    assert (blog.root / WOFF2).read_bytes() == data


def test_rebase_rebuilds_fonts_on_a_font_only_conflict_in_the_live_checkout(
    tmp_path: Path,
) -> None:
    blog = tiny_blog(tmp_path)
    other = blog.clone("other")
    commit_article(other, "theirs.mdx", "他们", "科学技术发动。", fonts_too=True)
    other.git("push", "--quiet", "origin", "main")
    commit_article(blog, "mine.mdx", "我的", "我们学习中国法。", fonts_too=True)

    res = blog.ok("rebase")
    assert "fonts rebuilt in 1" in res.stdout
    assert blog.git("rev-parse", "HEAD~1") == blog.git("rev-parse", "origin/main")
    assert blog.git("status", "--porcelain") == ""
    font = cmap((blog.root / WOFF2).read_bytes())
    assert chars("科学技术发动我们学习中国法") <= font
    blog.ok("fonts", "--check")  # the rebuilt subset is exactly current
    assert blog.git("log", "-1", "--format=%s") == "add mine.mdx"


def test_rebase_leaves_a_real_article_conflict_to_the_person(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    other = blog.clone("other")
    hello = "content/posts/hello.mdx"
    (other.root / hello).write_text(article("你好", "他们改了这一行：科学。"), encoding="utf-8")
    other.ok("fonts")
    other.git("commit", "--quiet", "-am", "their edit")
    other.git("push", "--quiet", "origin", "main")
    (blog.root / hello).write_text(article("你好", "我们改了这一行：国法。"), encoding="utf-8")
    blog.ok("fonts")
    blog.git("commit", "--quiet", "-am", "my edit")

    res = blog.blogpub("rebase")
    assert res.returncode == 1
    assert hello in res.stderr and WOFF2 not in res.stderr.split("conflict in")[1].split(";")[0]
    status = blog.git("status", "--porcelain")
    assert f"UU {hello}" in status  # stopped like git: the person resolves it

    (blog.root / hello).write_text(article("你好", "两边都改了：科学，国法。"), encoding="utf-8")
    blog.git("add", hello)
    blog.ok("rebase")  # continues: the subset is rebuilt from the resolved article
    assert blog.git("status", "--porcelain") == ""
    assert chars("科学国法") <= cmap((blog.root / WOFF2).read_bytes())
    blog.ok("fonts", "--check")


def test_rebase_after_a_resolved_article_conflict_rebuilds_the_subset_for_the_union(
    tmp_path: Path,
) -> None:
    # Only the article conflicts (this side never rebuilt its subset): after the person
    # resolves it and continues, the replayed commit must carry a subset for the union.
    blog = tiny_blog(tmp_path)
    other = blog.clone("other")
    hello = "content/posts/hello.mdx"
    (other.root / hello).write_text(article("你好", "他们改了这一行：科学。"), encoding="utf-8")
    other.ok("fonts")
    other.git("commit", "--quiet", "-am", "their edit")
    other.git("push", "--quiet", "origin", "main")
    (blog.root / hello).write_text(article("你好", "我们改了这一行：国法。"), encoding="utf-8")
    blog.git("commit", "--quiet", "-am", "my edit")

    res = blog.blogpub("rebase")
    assert res.returncode == 1 and hello in res.stderr
    (blog.root / hello).write_text(article("你好", "两边都改了：科学，国法。"), encoding="utf-8")
    blog.git("add", hello)
    res = blog.ok("rebase")
    assert "fonts rebuilt in 1" in res.stdout
    assert blog.git("status", "--porcelain") == ""
    assert blog.git("rev-parse", "HEAD~1") == blog.git("rev-parse", "origin/main")
    files = set(blog.git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split())
    assert files == {hello, WOFF2}
    font = cmap(
        subprocess.run(
            ["git", "show", f"HEAD:{WOFF2}"], cwd=blog.root, capture_output=True, check=True
        ).stdout
    )
    assert chars("两边都改了科学国法") <= font
    blog.ok("fonts", "--check")


def test_a_clean_rebase_that_adds_characters_rebuilds_the_subset(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    other = blog.clone("other")
    commit_article(other, "theirs.mdx", "他们", "科学技术发动。", fonts_too=True)
    other.git("push", "--quiet", "origin", "main")
    commit_article(blog, "mine.mdx", "我的", "我们学习中国法。", fonts_too=False)

    blog.ok("rebase")
    assert blog.git("rev-parse", "HEAD~1") == blog.git("rev-parse", "origin/main")
    assert blog.git("status", "--porcelain") == ""
    files = set(blog.git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split())
    assert files == {"content/posts/mine.mdx", WOFF2}
    assert chars("科学技术发动我们学习中国法") <= cmap((blog.root / WOFF2).read_bytes())
    blog.ok("fonts", "--check")


def test_a_job_landing_on_articles_pushed_without_subsets_brings_them_up_to_date(
    tmp_path: Path,
) -> None:
    blog = tiny_blog(tmp_path)
    job_id = blog.submit("k", article("新文", "我们学习科学。", slug="new"))
    other = blog.clone("other")
    commit_article(other, "note.mdx", "笔记", "电力水化高物理。", fonts_too=False)
    other.git("push", "--quiet", "origin", "main")

    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert cmap(blog.remote_file(WOFF2)) == (_remote_article_chars(blog) | ASCII) & COVERED


def test_progress_bar_on_a_terminal_and_quiet_otherwise(tmp_path: Path) -> None:
    blog = tiny_blog(tmp_path)
    commit_article(blog, "a.mdx", "一", "我们学习科学。", fonts_too=False)
    quiet = blog.ok("fonts")
    assert quiet.stderr == "" and quiet.stdout.strip() == f"rebuilt {WOFF2}"

    commit_article(blog, "b.mdx", "二", "电力水化。", fonts_too=False)
    primary, secondary = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "gitpub", "-C", str(blog.root), "fonts"],
            stdout=subprocess.PIPE,
            stderr=secondary,
            timeout=120,
        )
        os.close(secondary)
        shown = os.read(primary, 65536).decode("utf-8", "replace")
    finally:
        os.close(primary)
    assert proc.returncode == 0
    assert "writing blog.woff2" in shown and "[" in shown


def test_a_second_job_in_one_process_never_reads_the_first_jobs_removed_checkout(
    tmp_path: Path,
) -> None:
    """Found by the promise model: the source font, known by its blob id, was remembered with
    the path of the first job's private checkout, which is removed once that job is
    published; the next job of the same process then failed inside the subsetter."""
    from gitpub import Publisher

    blog = tiny_blog(tmp_path)
    publisher = Publisher(blog.root)
    other = blog.clone("other")
    # The first lands on a commit that is no article: its subsets are found current after
    # the rebase, by the font's blob id in its own checkout, and nothing is subsetted.
    first = blog.submit("one", article("你好", "这是第一篇。"))
    other.push_by_hand("NOTES.txt", "a person's note\n", "a note")
    publisher.run_until_idle()
    assert blog.job(first)["job"]["state"] == "PUBLISHED"
    # The second lands on a note pushed without subsets: they are rebuilt in its checkout.
    second = blog.submit("two", article("第二", "我们学习科技。"))
    other.git("pull", "--quiet", "--rebase", "origin", "main")
    commit_article(other, "note.mdx", "笔记", "电力水化高物理。", fonts_too=False)
    other.git("push", "--quiet", "origin", "main")
    publisher.run_until_idle()
    shown = blog.job(second)
    assert shown["job"]["state"] == "PUBLISHED", shown["events"]
    assert cmap(blog.remote_file(WOFF2)) == (_remote_article_chars(blog) | ASCII) & COVERED
