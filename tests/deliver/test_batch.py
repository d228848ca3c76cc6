"""Batch delivery: jobs ready together travel in one push, each confirmed on its own, and one
job's trouble never holds up the others nor touches their articles."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing.fixtures import Blog, article
from testing.jobs import assert_exactly_once, counting_blog, distinct, pushes

from gitpub.context import open_context
from gitpub.core import crash
from gitpub.ops import worker

# The points from the first job stacked to the cleanup after publication, as gitpub.core.crash
# lists them: a point added there inside a batch joins these tests by itself.
BATCH_POINTS = crash.POINTS[
    crash.POINTS.index("during_batch_stacking") : crash.POINTS.index(
        "after_published_before_cleanup"
    )
    + 1
]


def commit_locally(blog: Blog) -> None:
    """Prepare and commit every submitted job, deliver none (what a worker round does before
    its push), so the test can move the remote in between."""
    with open_context(blog.root) as ctx:
        worker.run_until_idle(ctx, deliver=False)


def test_a_batch_of_twenty_with_one_conflict_publishes_nineteen_in_one_push(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    monkeypatch.setenv("DRAFT_LOG", str(draft_log))  # the in-process worker's draft step
    # One existing article that job 7 revises, and that a person edits meanwhile.
    person = blog.clone("person")
    shared = "content/posts/shared.mdx"
    (person.root / shared).write_text(article("Shared", "The first version, by hand."))
    person.git("add", shared)
    person.git("commit", "-q", "-m", "a hand-written post")
    person.git("push", "-q", "origin", "HEAD:main")
    blog.git("pull", "-q", "origin", "main")
    pushes_before = len(pushes(blog))

    ids = []
    for i in range(20):
        if i == 7:
            ids.append(
                blog.submit("k7", article("Shared", "The writer's revision."), "--target", shared)
            )
        else:
            ids.append(blog.submit(f"k{i}", article(f"Batch {i}", distinct(i))))
    commit_locally(blog)
    assert {blog.job(j)["job"]["state"] for j in ids} == {"LOCAL_COMMITTED"}

    # The person changes the very article job 7 updates, after its snapshot.
    theirs = article("Shared", "The person's second version.")
    (person.root / shared).write_text(theirs)
    person.git("commit", "-q", "-am", "a hand edit")
    person.git("push", "-q", "origin", "HEAD:main")
    remote_before = set(blog.remote_log())
    pushes_before = len(pushes(blog))

    blog.ok("run", "--until-idle", env=env)

    conflicted = blog.job(ids[7])["job"]
    assert conflicted["state"] == "CONFLICT"
    assert conflicted["failure_code"] == "target_changed"
    assert blog.remote_file(shared) == theirs.encode()  # the person's bytes, untouched
    published = [j for i, j in enumerate(ids) if i != 7]
    for job_id in published:
        job = blog.job(job_id)["job"]
        assert job["state"] == "PUBLISHED"
        assert blog.commits_with_job(job_id) == 1
        assert blog.remote_file(job["target_path"]).decode() == article(
            f"Batch {ids.index(job_id)}", distinct(ids.index(job_id))
        )
    assert blog.commits_with_job(ids[7]) == 0
    # All nineteen arrived in one push, as nineteen commits on top of the person's edit.
    assert len(pushes(blog)) == pushes_before + 1
    new = [c for c in blog.remote_log() if c not in remote_before]
    assert len(new) == 19
    # The job branch the person resolves on holds the remote as job 7 found it plus its own
    # article: not the articles committed before it in its round.
    branch = f"blogpub/job/{ids[7]}"
    assert blog.git("rev-parse", f"{branch}~1") == conflicted["base_commit"]
    files = set(blog.git("ls-tree", "-r", "--name-only", branch).split())
    assert files.isdisjoint(blog.job(j)["job"]["target_path"] for j in published)


def test_a_round_on_an_unmoved_tip_is_pushed_as_committed(blog: Blog) -> None:
    """Jobs committed together on the tip they were prepared on are already the line of
    commits the push carries: delivery replays none of them (no new commit, no new ref)."""
    ids = [blog.submit(f"line-{i}", article(f"Line {i}", distinct(i))) for i in range(4)]
    commit_locally(blog)
    committed = [blog.job(j)["job"]["local_commit"] for j in ids]
    blog.ok("run", "--until-idle")
    for job_id, commit in zip(ids, committed, strict=True):
        shown = blog.job(job_id)
        assert shown["job"]["state"] == "PUBLISHED"
        assert shown["job"]["remote_commit"] == commit
        assert "rebase" not in [e["step"] for e in shown["events"]]
    assert blog.remote_log()[: len(ids)] == committed[::-1]


@pytest.mark.parametrize("point", BATCH_POINTS)
def test_a_crash_inside_a_batch_still_publishes_each_job_once(tmp_path: Path, point: str) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    ids = [blog.submit(f"k{i}", article(f"Crash {i}", distinct(i))) for i in range(5)]
    res = blog.blogpub("run", "--until-idle", env={**env, "GITPUB_CRASH_AT": point})
    assert res.returncode == 137, res.stderr
    blog.ok("run", "--until-idle", env=env)
    # One batch in all: a push that reached the remote before the crash is confirmed, never
    # made again; a batch that died before its push is pushed once by the next worker.
    assert_exactly_once(blog, ids, draft_log, batches=1)


@pytest.mark.both_stores
def test_a_revision_of_an_article_still_on_its_way_is_delivered_after_it(blog: Blog) -> None:
    path = "content/posts/draft-then-fix.mdx"
    first = blog.submit("v1", article("Fix", "A first version with a typo: teh."), "--target", path)
    fixed = article("Fix", "A first version with the typo fixed: the.")
    second = blog.submit("v2", fixed, "--target", path)
    blog.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "PUBLISHED"
    assert blog.job(second)["job"]["state"] == "PUBLISHED"
    decisions = [
        e["detail"].get("decision") for e in blog.job(second)["events"] if e["step"] == "target"
    ]
    assert decisions == ["UPDATE"]
    assert blog.remote_file(path) == fixed.encode()


@pytest.mark.both_stores
def test_two_new_posts_at_one_derived_path_never_overwrite_each_other(blog: Blog) -> None:
    first_text = article("Same Title", "The first post of that name.")
    first = blog.submit("a", first_text)
    second = blog.submit("b", article("Same Title", "Another post, same title, other words."))
    blog.ok("run", "--until-idle")
    one = blog.job(first)["job"]
    assert one["state"] == "PUBLISHED"
    assert blog.remote_file(one["target_path"]) == first_text.encode()
    other = blog.job(second)["job"]
    assert other["state"] in ("CONFLICT", "REVIEW")  # a person decides; nothing is replaced
    assert blog.commits_with_job(second) == 0


@pytest.mark.both_stores
def test_one_text_under_two_keys_in_one_batch_publishes_once(blog: Blog) -> None:
    text = article("Twice", distinct(3))
    first = blog.submit("one", text)
    second = blog.submit("two", text, "--target", "content/posts/twice-again.mdx")
    blog.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "PUBLISHED"
    dup = blog.job(second)["job"]
    assert dup["state"] == "SKIPPED"
    assert (
        blog.job(first)["job"]["target_path"] in blog.job(second)["events"][-1]["detail"]["reason"]
    )
    assert blog.commits_with_job(second) == 0


def test_a_batch_in_a_font_blog_goes_out_in_one_push_with_the_subset_of_every_article(
    tmp_path: Path,
) -> None:
    from testing.fontkit import COVERED, HANZI, chars, cmap, tiny_blog
    from testing.jobs import PUSH_LOG_HOOK

    blog = tiny_blog(tmp_path)
    hook = blog.remote / "hooks" / "update"
    hook.write_text(PUSH_LOG_HOOK)
    hook.chmod(0o755)
    # Each article brings characters the others lack: every job commit rewrites the subset,
    # so every job stacked on another one meets a subset conflict.
    texts = [article(f"Font {i}", HANZI[i * 12 : i * 12 + 12]) for i in range(6)]
    ids = [blog.submit(f"f{i}", text) for i, text in enumerate(texts)]

    blog.ok("run", "--until-idle")

    assert len(pushes(blog)) == 1
    for job_id, text in zip(ids, texts, strict=True):
        job = blog.job(job_id)["job"]
        assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
        assert blog.commits_with_job(job_id) == 1
        assert blog.remote_file(job["target_path"]).decode() == text
    assert len(blog.remote_log()) == 1 + len(ids)  # the scaffold, then each job once
    # The subset at the tip is the one of all the articles together (and ASCII, always kept).
    every = set().union(*(chars(t) for t in texts)) | chars(article("你好", "这是第一篇文章。"))
    ascii_ = set(range(0x20, 0x7F))
    assert cmap(blog.remote_file("public/fonts/blog.woff2")) == (every | ascii_) & COVERED
