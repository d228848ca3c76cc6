"""A job's landmark on the remote (gitpub.deliver.landmark): created by the very push that
lands the job's commit, holding no article, gone once the publication is recorded."""

from __future__ import annotations

import pytest
from testing.fixtures import Blog, article

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

REF_LOG_HOOK = """#!/bin/sh
echo "$1 $3" >> "$(dirname "$0")/../refs.log"
"""


def _log_ref_updates(blog: Blog) -> None:
    hook = blog.remote / "hooks" / "update"
    hook.write_text(REF_LOG_HOOK)
    hook.chmod(0o755)


def _updates(blog: Blog) -> list[tuple[str, str]]:
    log = blog.remote / "refs.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [(ref, oid) for ref, _, oid in (line.partition(" ") for line in lines)]


def _landmarks(blog: Blog) -> list[str]:
    return blog.remote_git("for-each-ref", "--format=%(refname)", "refs/blog-landed/").split()


def test_the_push_that_lands_a_job_carries_its_landmark_which_holds_no_article(
    blog: Blog,
) -> None:
    _log_ref_updates(blog)
    job_id = blog.submit("post", article("Post", "Landed with its landmark."))
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"

    updates = _updates(blog)
    created = [oid for ref, oid in updates if ref == f"refs/blog-landed/{job_id}"]
    # One push: the branch and the landmark, then the landmark deleted once recorded.
    assert [ref for ref, _ in updates] == [
        "refs/heads/main",
        f"refs/blog-landed/{job_id}",
        f"refs/blog-landed/{job_id}",
    ]
    assert created[1] == "0" * 40
    body = blog.remote_git("cat-file", "-p", created[0])
    assert body.splitlines()[0] == f"tree {EMPTY_TREE}" and "\nparent " not in body
    landed = blog.remote_git("rev-parse", "main")
    assert f"{job_id} {landed}" in body.splitlines()
    assert _landmarks(blog) == []


def test_a_remote_that_cannot_push_atomically_gets_the_branch_alone(blog: Blog) -> None:
    blog.remote_git("config", "receive.advertiseAtomic", "false")
    _log_ref_updates(blog)
    job_id = blog.submit("post", article("Post", "No atomic pushes here."))
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    assert [ref for ref, _ in _updates(blog)] == ["refs/heads/main"]


def test_gc_removes_the_landmark_of_a_published_job_a_crash_left(blog: Blog) -> None:
    job_id = blog.submit("post", article("Post", "Recorded, then the worker died."))
    crashed = blog.blogpub(
        "run", "--until-idle", env={"GITPUB_CRASH_AT": "after_published_before_cleanup"}
    )
    assert crashed.returncode == 137, crashed.stderr
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert _landmarks(blog) == [f"refs/blog-landed/{job_id}"]
    # Another blog's landmark on the same remote is none of this store's business.
    other = "refs/blog-landed/00000000-0000-4000-8000-000000000000"
    blog.remote_git("update-ref", other, blog.remote_git("rev-parse", "main"))

    said = blog.ok("gc").stdout
    assert "removed 1 landmark(s) of published jobs from the remote" in said
    assert _landmarks(blog) == [other]


@pytest.mark.parametrize("died", [None, "after_rebase_before_push"])
def test_a_retry_publishes_again_past_the_landmark_its_first_attempt_left(
    blog: Blog, died: str | None
) -> None:
    # Found by the promise model (seed 279): the worker died before removing the landmark of
    # a job's first publication; a person took the post down and retried the job. The
    # retry's pushes were refused (the landmark's name was taken), and the next attempt read
    # that landmark as its own push, landed and taken down: the retry never published.
    job_id = blog.submit("post", article("Post", "Published, taken down, retried."))
    crashed = blog.blogpub(
        "run", "--until-idle", env={"GITPUB_CRASH_AT": "after_published_before_cleanup"}
    )
    assert crashed.returncode == 137, crashed.stderr
    assert _landmarks(blog) == [f"refs/blog-landed/{job_id}"]
    # The person's force-push also changes another file: the retry's commit then stands on
    # another base (rebuilt on the same base within the same second, it would be the very
    # commit taken down, which the tracking ref's history rightly calls taken down).
    person = blog.clone("person")
    person.git("reset", "--quiet", "--hard", "HEAD~1")
    (person.root / "README.md").write_text("a blog, its post taken down\n")
    person.git("commit", "--quiet", "-am", "take the post down")
    person.git("push", "--quiet", "--force", "origin", "HEAD:main")
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["withdrawn"] is True

    blog.ok("retry", job_id)
    if died:
        # The retry's worker dies before its push: the next one asks the remote whether that
        # push landed, and must not take the first attempt's landmark for an answer.
        crashed = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": died})
        assert crashed.returncode == 137, crashed.stderr
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)
    assert (job["job"]["state"], job["job"]["withdrawn"]) == ("PUBLISHED", False), job["events"]
    assert job["job"]["remote_commit"] == blog.remote_git("rev-parse", "main")
    assert blog.commits_with_job(job_id) == 1
    assert _landmarks(blog) == []
