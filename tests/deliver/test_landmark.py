"""A job's landmark on the remote (gitpub.deliver.landmark): created by the very push that
lands the job's commit, holding no article, gone once the publication is recorded."""

from __future__ import annotations

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
