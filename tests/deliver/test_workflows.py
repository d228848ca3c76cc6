"""Publishing workflows people run: a post scheduled for later (`submit --at`), and review
before publish (`[publish] review`, `submit --review`), each on a real bare remote."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from testing.fixtures import CONFIG, Blog, article, make_blog, until_due, wait_for


def due_time(job: dict[str, object]) -> float:
    stamp = str(job["scheduled_at"])
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_a_scheduled_post_waits_then_publishes(blog: Blog) -> None:
    before = blog.remote_log()
    text = article("Later", "Written now, published in an hour.")
    submitted = time.time()
    # An hour ahead, reached by moving gitpub's clock: a loaded machine never makes it due.
    job_id = blog.submit("later", text, "--at", "+1h")
    # Nothing is due: the worker returns at once, leaving the job to wait for its time.
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert job["state"] == "SCHEDULED"
    assert submitted + 3599 < due_time(job) <= time.time() + 3600
    assert blog.remote_log() == before  # nothing reached the remote
    assert "scheduled for" in blog.ok("status").stdout

    until_due({**job, "next_retry_at": job["scheduled_at"]})  # moves gitpub's clock
    blog.ok("run", "--until-idle")
    done = blog.job(job_id)
    assert done["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    assert len(blog.remote_log()) == len(before) + 1
    steps = [e["step"] for e in done["events"]]
    assert steps[:2] == ["submit", "schedule:due"]


def test_the_worker_loop_publishes_a_scheduled_post_within_one_interval(blog: Blog) -> None:
    import subprocess
    import sys

    job_id = blog.submit("loop", article("Loop", "Published by the running worker."), "--at", "+2s")
    worker = subprocess.Popen(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--interval", "0.5"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: blog.job(job_id)["job"]["state"] == "PUBLISHED", "the post published", 30)
    finally:
        worker.terminate()
        worker.wait(10)
    assert blog.commits_with_job(job_id) == 1


def test_retry_publishes_a_scheduled_post_now_and_abandon_drops_it(blog: Blog) -> None:
    now_id = blog.submit("now", article("Now", "Not worth waiting for."), "--at", "+3d")
    never_id = blog.submit("never", article("Never", "Changed my mind."), "--at", "+3d")
    blog.ok("retry", now_id)
    blog.ok("resolve", never_id, "--abandon")
    blog.ok("run", "--until-idle")
    assert blog.job(now_id)["job"]["state"] == "PUBLISHED"
    assert blog.job(never_id)["job"]["state"] == "SKIPPED"
    assert blog.commits_with_job(never_id) == 0


def test_an_iso_time_with_an_offset_is_the_same_instant_anywhere(blog: Blog) -> None:
    job_id = blog.submit("iso", article("Iso", "Christmas."), "--at", "2099-12-24T08:00:00+01:00")
    job = blog.job(job_id)["job"]
    assert job["state"] == "SCHEDULED"
    assert job["scheduled_at"].startswith("2099-12-24T07:00:00")


def test_a_bad_time_is_one_line_and_records_nothing(blog: Blog) -> None:
    src = blog.root.parent / "bad.mdx"
    src.write_text(article("Bad", "Never recorded."))
    for when in ("tomorrow", "2099-12-24T08:00", "+3x"):
        res = blog.blogpub("submit", "--key", "bad", "--source", str(src), "--at", when)
        assert res.returncode == 2, res  # a value that does not parse: usage, as --since
        errors = [x for x in res.stderr.splitlines() if x.startswith("Error: ")]
        assert len(errors) == 1 and "'--at'" in errors[0], res.stderr
        assert "Traceback" not in res.stderr
    assert not (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()


# ------------------------------------------------------------------------- review mode

REVIEW_CONFIG = CONFIG.replace(
    'content = ["content/posts"]', 'content = ["content/posts"]\nreview = true'
)


def review_branches(blog: Blog) -> dict[str, str]:
    out = blog.remote_git(
        "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/blogpub/review/"
    )
    return dict(line.split() for line in out.splitlines())


def branch_of(job_id: str, target: str) -> str:
    """The review branch of one job: the whole target path and the job's short id."""
    return f"blogpub/review/{target}/{job_id[:8]}"


def test_review_mode_publishes_what_a_person_merges_and_nothing_else(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, REVIEW_CONFIG)
    before = blog.remote_log()
    kept_text = article("Kept", "A post the reviewer squash-merges.", slug="kept")
    kept = blog.submit("kept", kept_text)
    dropped = blog.submit(
        "dropped", article("Dropped", "A post the reviewer turns down.", slug="dropped")
    )
    blog.ok("run", "--until-idle")
    kept_branch = branch_of(kept, "content/posts/kept.mdx")
    dropped_branch = branch_of(dropped, "content/posts/dropped.mdx")

    # Two branches, the published branch untouched, both jobs waiting for a person.
    assert set(review_branches(blog)) == {kept_branch, dropped_branch}
    assert blog.remote_log() == before
    for job_id in (kept, dropped):
        job = blog.job(job_id)["job"]
        assert job["state"] == "IN_REVIEW", blog.job(job_id)["events"]
        assert job["review_branch"] == (kept_branch if job_id == kept else dropped_branch)
    assert f"waiting for a merge of {kept_branch}" in blog.ok("status").stdout
    # Each review branch is one job commit on the published tip, with the job's trailers.
    tip = blog.remote_git("rev-parse", "main")
    assert blog.remote_git("rev-parse", f"{kept_branch}~1") == tip
    assert f"Blog-Job-Id: {kept}" in blog.remote_git("log", "-1", "--format=%B", kept_branch)

    # The person squash-merges one (the trailers are lost) and deletes the other.
    person = blog.clone("person")
    person.git("fetch", "--quiet", "origin")
    person.git("merge", "--quiet", "--squash", f"origin/{kept_branch}")
    person.git("commit", "--quiet", "-m", "Add the kept post")
    person.git("push", "--quiet", "origin", "HEAD:main", f":{kept_branch}", f":{dropped_branch}")
    squash = person.git("rev-parse", "HEAD")

    blog.ok("run", "--until-idle")
    done = blog.job(kept)["job"]
    assert done["state"] == "PUBLISHED"
    assert done["remote_commit"] == squash  # confirmed by content: the squash commit
    assert blog.remote_file(done["target_path"]) == kept_text.encode()
    rejected = blog.job(dropped)
    assert rejected["job"]["state"] == "REVIEW"
    assert rejected["job"]["failure_code"] == "rejected_in_review"
    assert "rejected in review" in rejected["events"][-1]["detail"]["reason"]
    files = blog.remote_git("ls-tree", "-r", "--name-only", "main").splitlines()
    assert rejected["job"]["target_path"] not in files
    assert blog.remote_log() == [squash, *before]
    # Settled: further passes change nothing.
    blog.ok("run", "--until-idle")
    assert blog.remote_log() == [squash, *before]
    assert blog.job(dropped)["job"]["state"] == "REVIEW"


def test_a_new_revision_supersedes_the_old_one_visibly_and_a_merge_commit_publishes(
    blog: Blog,
) -> None:
    target = "content/posts/story.mdx"
    first = blog.submit(
        "rev1", article("Story", "First version.", slug="story"), "--review", "--target", target
    )
    blog.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "IN_REVIEW"
    old_head = review_branches(blog)[branch_of(first, target)]

    second_text = article("Story", "Second version, after the editor's notes.", slug="story")
    second = blog.submit("rev2", second_text, "--review", "--target", target)
    blog.ok("run", "--until-idle")
    assert blog.job(second)["job"]["state"] == "IN_REVIEW"
    branches = review_branches(blog)
    # Each job its own branch: the older one is left as it was, for the person to compare.
    assert branches[branch_of(first, target)] == old_head
    new_head = branches[branch_of(second, target)]
    assert blog.remote_git("show", f"{new_head}:{target}") == second_text.strip()
    # Superseded, but not silently final: a person sees it in REVIEW and may retry it.
    superseded = blog.job(first)
    assert superseded["job"]["state"] == "REVIEW"
    assert superseded["job"]["failure_code"] == "superseded_in_review"
    assert second in superseded["events"][-1]["detail"]["reason"]

    person = blog.clone("person")
    person.git("fetch", "--quiet", "origin")
    person.git(
        "merge", "--quiet", "--no-ff", "-m", "Merge story", f"origin/{branch_of(second, target)}"
    )
    person.git("push", "--quiet", "origin", "HEAD:main")
    blog.ok("run", "--until-idle")
    job = blog.job(second)["job"]
    assert job["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/story.mdx") == second_text.encode()
    # The merge kept the job commit: it is on the published branch's history, trailers and all.
    assert blog.commits_with_job(second) == 1
    assert blog.commits_with_job(first) == 0


def test_a_review_merged_with_its_history_then_edited_before_a_pass_is_published(
    blog: Blog,
) -> None:
    """A reviewer merges the branch with a merge commit and deletes it, and a person fixes a
    typo in the article before any worker looks: the watch no longer finds the job's bytes
    at the tip, but the job's commit is in its history. That merge was a yes: PUBLISHED by
    the merge commit, never "deleted unmerged"."""
    target = "content/posts/merged.mdx"
    job_id = blog.submit(
        "merged", article("Merged", "Read me, then merge me.", slug="merged"), "--review"
    )
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "IN_REVIEW"
    branch = branch_of(job_id, target)
    person = blog.clone("person")
    person.git("fetch", "--quiet", "origin")
    person.git("merge", "--quiet", "--no-ff", "-m", "Merge the post", f"origin/{branch}")
    merge = person.git("rev-parse", "HEAD").strip()
    post = person.root / target
    post.write_text(post.read_text().replace("Read me", "Read this"))
    person.git("commit", "--quiet", "-am", "typo")
    person.git("push", "--quiet", "origin", "HEAD:main", f":refs/heads/{branch}")

    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert (job["state"], job["remote_commit"]) == ("PUBLISHED", merge), job
    assert b"Read this" in blog.remote_file(target)  # the person's fix stands
    assert review_branches(blog) == {}


def test_an_unreachable_remote_never_reads_as_a_rejection(blog: Blog) -> None:
    job_id = blog.submit("net", article("Net", "Waiting for review.", slug="net"), "--review")
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "IN_REVIEW"
    moved = blog.remote.with_name("moved.git")
    blog.remote.rename(moved)
    try:
        blog.blogpub("run", "--until-idle")
        assert blog.job(job_id)["job"]["state"] == "IN_REVIEW"
    finally:
        moved.rename(blog.remote)


def test_a_review_push_goes_through_the_write_set_guard(blog: Blog) -> None:
    """The job commit was replaced (its ref moved by anyone with a shell on the node) by one
    carrying the job's trailers and files but also deleting README.md: it never reaches a
    review branch either. Only the guard stands in the way."""
    job_id = blog.submit("forged", article("Forged", "Body.", slug="forged"), "--review")
    died = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert died.returncode == 137
    blog.forge_job_commit(job_id, deleting="README.md")

    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW", shown["events"]
    assert shown["job"]["failure_code"] == "write_set_violation"
    assert any("README.md: deleted" in str(e["detail"]) for e in shown["events"])
    assert review_branches(blog) == {}
    assert blog.remote_file("README.md") == b"a blog\n"


def test_a_lost_database_is_rebuilt_with_the_schedule_and_the_review_mode(blog: Blog) -> None:
    later = blog.submit("later", article("Later", "Next week."), "--at", "+7d")
    reviewed = blog.submit(
        "reviewed", article("Reviewed", "Read me first.", slug="reviewed"), "--review"
    )
    due = blog.job(later)["job"]["scheduled_at"]
    state = blog.root / ".git" / "blogpub"
    for name in ("state.sqlite3", "state.sqlite3-wal", "state.sqlite3-shm"):
        (state / name).unlink(missing_ok=True)
    blog.ok("reconcile", "--rebuild")
    job = blog.job(later)["job"]
    assert job["state"] == "SCHEDULED" and job["scheduled_at"] == due
    blog.ok("run", "--until-idle")
    assert blog.job(later)["job"]["state"] == "SCHEDULED"
    assert blog.job(reviewed)["job"]["state"] == "IN_REVIEW"
    assert set(review_branches(blog)) == {branch_of(reviewed, "content/posts/reviewed.mdx")}


def test_a_merge_made_while_the_push_answer_was_lost_is_not_pushed_again(blog: Blog) -> None:
    job_id = blog.submit(
        "lost", article("Lost", "Merged before gitpub knew.", slug="lost"), "--review"
    )
    died = blog.blogpub(
        "run", "--until-idle", env={"GITPUB_CRASH_AT": "after_review_push_before_db"}
    )
    assert died.returncode == 137
    branch = branch_of(job_id, "content/posts/lost.mdx")
    assert set(review_branches(blog)) == {branch}
    person = blog.clone("person")
    person.git("fetch", "--quiet", "origin")
    person.git("merge", "--quiet", "--squash", f"origin/{branch}")
    person.git("commit", "--quiet", "-m", "Add lost")
    person.git("push", "--quiet", "origin", "HEAD:main", f":{branch}")
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
    assert job["remote_commit"] == person.git("rev-parse", "HEAD")
    assert review_branches(blog) == {}  # the branch the person deleted stays deleted


WAITING = article("Waiting", "Waits for a reviewer.", slug="waiting")


def _review_stacked_on_a_post(blog: Blog) -> tuple[str, str, str]:
    """A post published, then a review job (WAITING) stacked on it, its branch's history
    holding the post: the post's job, the review job and its branch."""
    gone = blog.submit("gone", article("Gone", "Published, then taken down.", slug="gone"))
    blog.ok("run", "--until-idle")
    assert blog.job(gone)["job"]["state"] == "PUBLISHED"
    job_id = blog.submit("waiting", WAITING, "--review")
    blog.ok("run", "--until-idle")
    branch = branch_of(job_id, "content/posts/waiting.mdx")
    assert set(review_branches(blog)) == {branch}
    return gone, job_id, branch


def test_a_review_branch_standing_on_a_force_pushed_takedown_is_withdrawn_not_merged_back(
    blog: Blog,
) -> None:
    gone, job_id, branch = _review_stacked_on_a_post(blog)

    # A reviewer edits the branch; a person force-pushes the published post away.
    person = blog.clone("person")
    person.git("fetch", "--quiet", "origin")
    person.git("checkout", "--quiet", "-B", "edit", f"origin/{branch}")
    edited = WAITING.replace("Waits for a reviewer.", "Edited by the reviewer.")
    (person.root / "content/posts/waiting.mdx").write_text(edited, encoding="utf-8")
    person.git("commit", "--quiet", "-am", "reviewer's edit")
    person.git("push", "--quiet", "origin", f"HEAD:{branch}")
    person.git("checkout", "--quiet", "main")
    person.git("reset", "--quiet", "--hard", "origin/main~1")
    person.git("push", "--quiet", "--force", "origin", "HEAD:main")
    tip = blog.remote_git("rev-parse", "main")

    # The branch would bring the post back with any merge: it is withdrawn, the job waits
    # for a person, and the reviewer's edit is kept for the retry.
    blog.ok("run", "--until-idle")
    waiting = blog.job(job_id)
    assert waiting["job"]["state"] == "REVIEW", waiting["events"]
    assert waiting["job"]["failure_code"] == "review_base_rewritten"
    assert branch in waiting["events"][-1]["detail"]["reason"]
    assert review_branches(blog) == {}
    assert blog.remote_git("rev-parse", "main") == tip  # the published branch untouched
    assert blog.job(gone)["job"]["withdrawn"] is True

    # `retry` builds the reviewer's version on today's tip: merging it brings only that.
    blog.ok("retry", job_id)
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "IN_REVIEW", blog.job(job_id)["events"]
    assert blog.remote_git("rev-parse", f"{branch}~1") == tip
    shown = blog.remote_git("show", f"{branch}:content/posts/waiting.mdx")
    assert "Edited by the reviewer." in shown
    files = blog.remote_git("ls-tree", "-r", "--name-only", branch).splitlines()
    assert "content/posts/gone.mdx" not in files


def test_a_worker_that_dies_after_withdrawing_a_stranded_review_branch_leaves_it_stranded(
    blog: Blog,
) -> None:
    # Found by the promise model (seed 143): the withdrawal was on the remote, its record was
    # not, and the next pass read the gone branch as a reviewer's deletion ("rejected").
    _, job_id, branch = _review_stacked_on_a_post(blog)
    person = blog.clone("person")
    person.git("reset", "--quiet", "--hard", "origin/main~1")
    person.git("push", "--quiet", "--force", "origin", "HEAD:main")

    died = blog.blogpub(
        "run", "--until-idle", env={"GITPUB_CRASH_AT": "after_review_merged_before_db"}
    )
    assert died.returncode == 137, died.stderr
    assert review_branches(blog) == {}  # withdrawn before the worker died
    assert blog.job(job_id)["job"]["state"] == "IN_REVIEW"

    blog.ok("run", "--until-idle")
    waiting = blog.job(job_id)
    assert waiting["job"]["state"] == "REVIEW", waiting["events"]
    assert waiting["job"]["failure_code"] == "review_base_rewritten", waiting["events"]
    assert branch in waiting["events"][-1]["detail"]["reason"]
    assert "rejected" not in waiting["events"][-1]["detail"]["reason"]
