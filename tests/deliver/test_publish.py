"""The publish spine end to end: submit → run → PUBLISHED on a real bare remote."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, git, make_blog, until_due

from gitpub.context import open_context
from gitpub.store.db import parse_time

pytestmark = pytest.mark.both_stores


def test_submit_run_publishes_exactly_one_commit_with_trailers(blog: Blog) -> None:
    before = len(blog.remote_log())
    job_id = blog.submit("k1", article("Durable", "Every publication is a job.", slug="durable"))
    blog.ok("run", "--until-idle")

    log = blog.remote_log()
    assert len(log) == before + 1
    body = blog.remote_git("log", "-1", "--format=%B", "main")
    assert f"Blog-Job-Id: {job_id}" in body
    (job,) = blog.status()
    assert job["state"] == "PUBLISHED"
    assert job["remote_commit"] == log[0]
    assert f"Blog-Manifest-Sha256: {job['artifact_sha256']}" in body
    assert "Blog-Writer-Node: test-node" in body

    # The bytes on the remote are the bytes the manifest promised.
    # (The job's folder: beside state.sqlite3, or this node's copy of the shared store's.)
    with open_context(blog.root) as ctx:
        folder = ctx.job_dir(job_id)
    manifest = json.loads((folder / "manifest.json").read_bytes())
    assert [m["path"] for m in manifest] == ["content/posts/durable.mdx"]
    data = blog.remote_file("content/posts/durable.mdx")
    assert hashlib.sha256(data).hexdigest() == manifest[0]["sha256"]
    assert len(data) == manifest[0]["size"]
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(canonical.encode()).hexdigest() == job["artifact_sha256"]

    # The live checkout was clean, so it was fast-forwarded; the job worktree is gone.
    assert blog.git("rev-parse", "HEAD") == log[0]
    assert "blogpub/job" not in blog.git("worktree", "list")


def test_same_key_five_times_is_one_job_and_one_commit(blog: Blog) -> None:
    text = article("Once", "Submitted again and again by a retrying client.")
    ids = {blog.submit("same-key", text) for _ in range(5)}
    assert len(ids) == 1
    blog.ok("run", "--until-idle")
    assert len(blog.status()) == 1
    assert blog.commits_with_job(ids.pop()) == 1


def test_created_flag_and_same_text_under_new_key_is_a_new_job(blog: Blog) -> None:
    src = blog.root.parent / "s.mdx"
    src.write_text(article("Weekly", "The same question asked next week."))
    first = blog.ok("submit", "--key", "a", "--source", str(src), "--json").json()
    again = blog.ok("submit", "--key", "a", "--source", str(src), "--json").json()
    other = blog.ok("submit", "--key", "b", "--source", str(src), "--json").json()
    assert first["created"] is True and again["created"] is False
    assert again["job_id"] == first["job_id"]
    assert other["created"] is True and other["job_id"] != first["job_id"]


def test_remote_that_moved_is_rebased_onto(blog: Blog) -> None:
    job_id = blog.submit("k", article("Mine", "A job article prepared before the remote moved."))
    other = blog.clone("other")
    (other.root / "about.txt").write_text("an unrelated change pushed by someone else\n")
    other.git("add", "about.txt")
    other.git("commit", "--quiet", "-m", "someone else's change")
    other.git("push", "--quiet", "origin", "main")

    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("about.txt").startswith(b"an unrelated change")
    assert blog.remote_file("content/posts/Mine.mdx").startswith(b"---\ntitle: Mine")
    # Linear history: the job commit sits on top of the other change.
    parents = blog.remote_git("log", "--format=%P", "main").splitlines()
    assert all(len(p.split()) <= 1 for p in parents)
    assert blog.remote_git("log", "-1", "--format=%s", "main~1") == "someone else's change"


def test_unreachable_remote_waits_then_publishes_once(tmp_path: Path) -> None:
    cfg = CONFIG.replace("base_delay = 0.2", "base_delay = 2.0")
    blog = make_blog(tmp_path, cfg.replace("max_delay = 1.0", "max_delay = 8.0"))
    job_id = blog.submit("k", article("Offline", "Written while the network is down."))
    hidden = blog.remote.with_name("remote-away.git")
    blog.remote.rename(hidden)
    try:
        blog.ok("run", "--until-idle")
        shown = blog.job(job_id)
        job = shown["job"]
        assert job["state"] == "RETRY_WAIT"
        assert job["attempt"] == 1
        # Backoff with jitter: the first wait is between half the base delay and all of it.
        (wait,) = [e for e in shown["events"] if e["step"] == "retry:wait"]
        waited = parse_time(job["next_retry_at"]) - parse_time(wait["at"])
        assert 1.0 - 0.01 <= waited <= 2.0 + 0.01, waited
        # Nothing lost: the commit is safe locally, indexed by its job ref.
        assert blog.git("rev-parse", f"refs/blog-jobs/{job_id}") == job["local_commit"]
    finally:
        hidden.rename(blog.remote)
    # Runs before and after the job is due: delivery starts only once it is due, and once.
    blog.ok("run", "--until-idle")
    until_due(job)
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    starts = [e["at"] for e in shown["events"] if e["step"] == "relay:start"]
    assert len(starts) == 2 and starts[1] >= job["next_retry_at"], (starts, job)
    assert blog.commits_with_job(job_id) == 1


def test_trailer_lookup_over_many_commits_finds_each_job(blog: Blog) -> None:
    """The write-up's `%H%x00%B` pairing bug made every record but the first invisible."""
    ids = [blog.submit(f"k{i}", article(f"Post {i}", f"Body number {i} " * 5)) for i in range(4)]
    blog.ok("run", "--until-idle")
    from gitpub.git import trailers
    from gitpub.git.repo import Repo

    repo = Repo(blog.root)
    remote_tip = blog.remote_log()[0]
    for job_id in ids:
        job = blog.job(job_id)["job"]
        by_grep = trailers.grep_local(repo, job_id)
        assert by_grep is not None and repo.trailers(by_grep)[trailers.JOB_ID] == job_id
        (found,) = trailers.find_remote_all(
            repo, "refs/remotes/origin/main", None, job_id, job["artifact_sha256"]
        )
        assert found == job["remote_commit"]
        assert repo.is_ancestor(found, remote_tip)
    assert len(set(blog.job(j)["job"]["remote_commit"] for j in ids)) == 4


def test_remote_confirmation_ignores_local_branches(blog: Blog) -> None:
    """A local branch carrying the trailers must not make an unpublished job look published."""
    from gitpub.git import trailers
    from gitpub.git.repo import Repo

    msg = trailers.format_message("fake", {trailers.JOB_ID: "j-1", trailers.MANIFEST: "m-1"})
    git(blog.root, "commit", "--quiet", "--allow-empty", "-m", msg)
    git(blog.root, "branch", "leftover")
    git(blog.root, "reset", "--quiet", "--hard", "HEAD~1")
    repo = Repo(blog.root)
    assert trailers.find_remote_all(repo, "refs/remotes/origin/main", None, "j-1", "m-1") == []
    assert trailers.grep_local(repo, "j-1") is not None


def test_relay_named_job_delivers_now_without_waiting_for_its_time(tmp_path: Path) -> None:
    slow = CONFIG.replace("base_delay = 0.2", "base_delay = 3600")
    blog = make_blog(tmp_path, slow.replace("max_delay = 1.0", "max_delay = 7200"))
    job_id = blog.submit("k", article("Later", "Not due for an hour."))
    away = blog.remote.with_name("away.git")
    blog.remote.rename(away)
    blog.ok("run", "--until-idle")
    away.rename(blog.remote)
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "RETRY_WAIT"  # its time has not come
    blog.ok("relay", job_id[:8])
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED" and job["attempt"] == 1
    assert blog.commits_with_job(job_id) == 1
