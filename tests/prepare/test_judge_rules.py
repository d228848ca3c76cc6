"""The writer's intent decides the path, never a similarity score.

Every test here checks, after every job, that the remote's other files kept their blob ids:
a job writes its own target and nothing else."""

from __future__ import annotations

import stat
import sys
import unicodedata
from pathlib import Path

from testing.fixtures import CONFIG, Blog, article, make_blog

from gitpub.prepare.builtins import similarity

BOX = (
    '<div class="post-note">\n<p>本文首发于我的博客，转载请注明出处。'
    "欢迎关注公众号获取更新，如有问题请在评论区留言。</p>\n</div>\n"
)


def tree(blog: Blog) -> dict[str, str]:
    """path → blob id of every file on the remote's main branch."""
    out = blog.remote_git("ls-tree", "-r", "-z", "main")
    rows = (entry.split("\t", 1) for entry in out.split("\0") if entry)
    return {path: meta.split()[2] for meta, path in rows}


def publish_one(blog: Blog, key: str, text: str, *extra: str) -> dict[str, object]:
    """Submit and run one job; assert it touched no file on the remote but its own target."""
    before = tree(blog)
    job_id = blog.submit(key, text, *extra)
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    after = tree(blog)
    own = shown["job"]["target_path"] if shown["job"]["state"] == "PUBLISHED" else None
    assert {p: b for p, b in after.items() if p != own} == {
        p: b for p, b in before.items() if p != own
    }, "a job changed a file other than its own target"
    return dict(shown)


def reason(shown: dict[str, object]) -> str:
    events = shown["events"]
    assert isinstance(events, list)
    return str(next(e for e in events if e["step"] == "prepare:done")["detail"]["reason"])


def step(shown: dict[str, object], name: str) -> dict[str, object]:
    events = shown["events"]
    assert isinstance(events, list)
    return dict(next(e for e in events if e["step"] == f"step:{name}")["detail"])


def test_two_short_posts_sharing_boilerplate_both_publish_at_their_own_paths(blog: Blog) -> None:
    first = article("周末读书", BOX + "\n这周读完了一本关于城市规划的书。", slug="weekend-books")
    second = article("修好了自行车", BOX + "\n换了新的刹车片，骑起来安静多了。", slug="bike")
    score = similarity(first, second)
    assert 0.5 <= score < 0.85  # between the thresholds: the old judge made this an UPDATE

    a = publish_one(blog, "a", first)
    b = publish_one(blog, "b", second)
    assert a["job"]["state"] == b["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/weekend-books.mdx") == first.encode()
    assert blog.remote_file("content/posts/bike.mdx") == second.encode()
    judged = step(b, "judge")
    assert judged["decision"] == "NEW"
    assert judged["similar"] == "content/posts/weekend-books.mdx"
    assert judged["score"] == round(score, 4)


def test_title_derived_path_that_exists_goes_to_review_and_the_file_stays(blog: Blog) -> None:
    hand_written = tree(blog)["content/posts/hello.mdx"]
    shown = publish_one(
        blog, "a", article("hello", "A different post that happens to share a title.")
    )
    assert shown["job"]["state"] == "REVIEW"
    assert reason(shown) == (
        "content/posts/hello.mdx already exists; pass --target content/posts/hello.mdx to update it"
    )
    # The title as the hand-written post spells it gives `Hello.mdx`: the same file where
    # case does not count, so it waits too.
    shown = publish_one(blog, "b", article("Hello", "Another post of the same title."))
    assert shown["job"]["state"] == "REVIEW"
    assert reason(shown) == (
        "content/posts/Hello.mdx collides with content/posts/hello.mdx "
        "on case-insensitive file systems"
    )
    assert tree(blog)["content/posts/hello.mdx"] == hand_written
    assert "content/posts/Hello.mdx" not in tree(blog)


def test_revision_at_its_own_path_is_an_update_even_when_nearly_identical(blog: Blog) -> None:
    body = "\n\n".join(
        f"Paragraph {i}: the harbour wall at pier {i} was rebuilt in granite after storm {i * 7}."
        for i in range(200)
    )
    original = article("Harbour", body, slug="harbour")
    publish_one(blog, "v1", original)
    revised = article("Harbour", body + "\n\nOne more.", slug="harbour")
    assert similarity(original, revised) >= 0.99

    shown = publish_one(blog, "v2", revised, "--target", "content/posts/harbour.mdx")
    assert shown["job"]["state"] == "PUBLISHED"
    assert step(shown, "judge")["decision"] == "UPDATE"
    assert blog.remote_file("content/posts/harbour.mdx") == revised.encode()
    # The front-matter slug names the path as surely as --target does.
    again = article("Harbour", body + "\n\nTwo lines more.\n", slug="harbour")
    shown = publish_one(blog, "v3", again)
    assert shown["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/harbour.mdx") == again.encode()


def test_exact_duplicate_under_a_new_key_is_skipped(blog: Blog) -> None:
    text = article("Tides", "Spring tides come twice a month, with the new and the full moon.")
    first = publish_one(blog, "a", text)
    assert first["job"]["state"] == "PUBLISHED"
    log = blog.remote_log()

    same_path = publish_one(blog, "b", text)
    assert same_path["job"]["state"] == "SKIPPED"
    assert reason(same_path).startswith("no change")

    elsewhere = publish_one(blog, "c", text, "--target", "content/posts/tides-again.mdx")
    assert elsewhere["job"]["state"] == "SKIPPED"
    assert reason(elsewhere) == "1.000 similar to content/posts/Tides.mdx: the same article"
    assert blog.remote_log() == log


def test_similar_review_sends_scores_between_the_thresholds_to_review(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, CONFIG + '\n[steps]\nsimilar = "review"\n')
    publish_one(blog, "a", article("周末读书", BOX + "\n这周读完了一本关于城市规划的书。"))
    shown = publish_one(blog, "b", article("修好了自行车", BOX + "\n换了新的刹车片。"))
    assert shown["job"]["state"] == "REVIEW"
    assert "similar to content/posts/周末读书.mdx" in reason(shown)


def test_external_judge_pointing_at_another_article_goes_to_review(tmp_path: Path) -> None:
    judge = tmp_path / "judge.py"
    judge.write_text(
        "import json, sys\njson.load(sys.stdin)\n"
        'print(json.dumps({"decision": "UPDATE", "target": "content/posts/hello.mdx"}))\n'
    )
    judge.chmod(judge.stat().st_mode | stat.S_IXUSR)
    blog = make_blog(tmp_path, CONFIG + f'\n[steps]\njudge = ["{sys.executable}", "{judge}"]\n')
    blog.trust()
    shown = publish_one(
        blog, "a", article("Owls", "Owls hunt by ear."), "--target", "content/posts/owls.mdx"
    )
    assert shown["job"]["state"] == "REVIEW"
    assert reason(shown).startswith("judge pointed at another article (content/posts/hello.mdx)")


def test_a_target_equal_up_to_case_or_normalization_goes_to_review(blog: Blog) -> None:
    upper = publish_one(
        blog, "a", article("Hi", "Another hello."), "--target", "content/posts/HELLO.mdx"
    )
    assert upper["job"]["state"] == "REVIEW"
    assert reason(upper) == (
        "content/posts/HELLO.mdx collides with content/posts/hello.mdx "
        "on case-insensitive file systems"
    )
    composed = unicodedata.normalize("NFC", "content/posts/café.mdx")
    first = publish_one(blog, "b", article("Café", "Coffee notes."), "--target", composed)
    assert first["job"]["state"] == "PUBLISHED"
    decomposed = unicodedata.normalize("NFD", composed)
    second = publish_one(blog, "c", article("Café", "Tea notes."), "--target", decomposed)
    assert second["job"]["state"] == "REVIEW"
    assert reason(second) == (
        f"{decomposed} collides with {composed} by Unicode normalization "
        "(NFC and NFD spell one name on macOS file systems)"
    )
    both = unicodedata.normalize("NFD", "content/posts/CAFÉ.mdx")
    third = publish_one(blog, "d", article("Café", "Cocoa notes."), "--target", both)
    assert third["job"]["state"] == "REVIEW"
    assert reason(third) == (
        f"{both} collides with {composed} by case and Unicode normalization "
        "(one name on macOS file systems)"
    )
