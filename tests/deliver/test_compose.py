"""Workflows that compose: review × fleets × fonts × takedowns, each case ending as a person
would expect, on a real bare remote, on the embedded and on the shared store.

Each case once ended wrongly because one workflow decided from its own view: two articles
shared one review branch (one was lost as SKIPPED), a fresh worker read a manifest it did not
have, a merge was judged by font bytes a person had rebuilt, a deletion commit was no
takedown, and the Python API ran another worker."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, make_blog
from testing.fontkit import tiny_blog

from gitpub import Publisher

pytestmark = pytest.mark.both_stores

REVIEW = CONFIG.replace('content = ["content/posts"]', 'content = ["content/posts"]\nreview = true')


def review_branches(blog: Blog) -> dict[str, str]:
    out = blog.remote_git(
        "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/blogpub/review/"
    )
    return dict(line.split() for line in out.splitlines())


def merge_review(
    person: Blog, branch: str, *, how: str = "squash", delete: bool = True, message: str = ""
) -> str:
    """A person merges a review branch into main on their clone and pushes; the new tip."""
    person.git("fetch", "--quiet", "origin")
    person.git("reset", "--quiet", "--hard", "origin/main")
    if how == "squash":
        person.git("merge", "--quiet", "--squash", f"origin/{branch}")
        if message:
            person.git("commit", "--quiet", "-m", message)
        else:
            person.git("commit", "--quiet", "--no-edit")  # git's squash message: names the job
    elif how == "merge":
        person.git("merge", "--quiet", "--no-ff", "-m", f"Merge {branch}", f"origin/{branch}")
    else:  # rebase
        person.git("cherry-pick", f"origin/main..origin/{branch}")
    refs = ["HEAD:main"] + ([f":{branch}"] if delete else [])
    person.git("push", "--quiet", "origin", *refs)
    return person.git("rev-parse", "HEAD")


def edit_on_branch(person: Blog, branch: str, path: str, text: str) -> str:
    """A reviewer commits an edit of the article onto its review branch and pushes it."""
    person.git("fetch", "--quiet", "origin")
    person.git("checkout", "--quiet", "-B", "review-edit", f"origin/{branch}")
    (person.root / path).write_text(text, encoding="utf-8")
    person.git("commit", "--quiet", "-am", "reviewer: tighten the wording")
    person.git("push", "--quiet", "origin", f"HEAD:{branch}")
    person.git("checkout", "--quiet", "main")
    return person.git("rev-parse", "review-edit")


def worker_for(blog: Blog, store_kind: str) -> Blog:
    """The node that watches: on a shared store a brand-new clone (the fleet's disposable
    worker), on the embedded store the clone itself (its store is its own)."""
    return blog.clone("fresh-worker") if store_kind == "postgresql" else blog


def test_two_articles_of_one_file_name_get_two_review_branches_and_both_publish(
    tmp_path: Path,
) -> None:
    blog = make_blog(tmp_path, REVIEW)
    targets = {
        "a": "content/posts/2023/hello.mdx",
        "b": "content/posts/2024/hello.mdx",
        "c": "content/posts/garden/index.mdx",
        "d": "content/posts/river/index.mdx",
    }
    ids = {
        k: blog.submit(k, article(f"Post {k}", f"Body of post {k}."), "--target", t)
        for k, t in targets.items()
    }
    blog.ok("run", "--until-idle")
    branches = {k: blog.job(j)["job"]["review_branch"] for k, j in ids.items()}
    assert len(set(branches.values())) == 4, branches
    assert set(review_branches(blog)) == set(branches.values())
    for k, job_id in ids.items():
        assert blog.job(job_id)["job"]["state"] == "IN_REVIEW"
        assert targets[k] in branches[k] and job_id[:8] in branches[k]

    person = blog.clone("person")
    for k in ids:
        merge_review(person, branches[k])
    blog.ok("run", "--until-idle")
    for k, job_id in ids.items():
        job = blog.job(job_id)["job"]
        assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
        assert blog.remote_file(targets[k]) == article(f"Post {k}", f"Body of post {k}.").encode()


def test_two_titles_that_share_their_ascii_get_two_branches(blog: Blog) -> None:
    first = blog.submit("go1", article("Go 语言入门", "第一篇。"), "--review")
    blog.ok("run", "--until-idle")
    # The second arrives while the first waits in review: another target never supersedes it.
    second = blog.submit("go2", article("Go 并发模式", "第二篇。"), "--review")
    blog.ok("run", "--until-idle")
    a, b = (blog.job(j)["job"] for j in (first, second))
    assert a["state"] == b["state"] == "IN_REVIEW", blog.job(first)["events"]
    assert a["review_branch"] != b["review_branch"]
    assert len(review_branches(blog)) == 2


@pytest.mark.parametrize("delete", [True, False], ids=["branch-deleted", "branch-kept"])
def test_a_fresh_worker_settles_a_squash_merged_review(
    tmp_path: Path, store_kind: str, delete: bool
) -> None:
    blog = make_blog(tmp_path, REVIEW)
    text = article("Fleet", "Reviewed on one node, settled on another.")
    job_id = blog.submit("fleet", text)
    blog.ok("run", "--until-idle")
    branch = blog.job(job_id)["job"]["review_branch"]
    squash = merge_review(blog.clone("person"), branch, delete=delete, message="Add fleet")

    worker = worker_for(blog, store_kind)
    worker.ok("run", "--until-idle")
    job = worker.job(job_id)["job"]
    assert job["state"] == "PUBLISHED", worker.job(job_id)["events"]
    assert job["remote_commit"] == squash
    assert blog.remote_file(job["target_path"]) == text.encode()


@pytest.mark.parametrize("seen", [True, False], ids=["edit-seen", "edit-unseen"])
def test_a_reviewers_edit_then_merge_publishes_the_edit(
    tmp_path: Path, store_kind: str, seen: bool
) -> None:
    blog = make_blog(tmp_path, REVIEW)
    job_id = blog.submit("edited", article("Edited", "A draft with a typo in it."))
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    branch, path = job["review_branch"], job["target_path"]
    person = blog.clone("person")
    edited = article("Edited", "A draft without the typo.")
    reviewer_commit = edit_on_branch(person, branch, path, edited)
    worker = worker_for(blog, store_kind)
    if seen:
        worker.ok("run", "--until-idle")  # the watch sees the branch move and records it
        assert worker.job(job_id)["job"]["state"] == "IN_REVIEW"
    merge_review(person, branch)  # squash with git's message, then the branch is deleted

    worker.ok("run", "--until-idle")
    shown = worker.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED", shown["events"]
    assert blog.remote_file(path) == edited.encode()
    published = shown["events"][-1]["detail"]
    assert "edited in review" in published["how"]
    if seen:
        assert published["edited_in_review"] == reviewer_commit


def test_retry_after_a_rejected_edit_builds_on_the_reviewers_version(
    tmp_path: Path, store_kind: str
) -> None:
    blog = make_blog(tmp_path, REVIEW)
    job_id = blog.submit("redo", article("Redo", "The writer's first words."))
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    branch, path = job["review_branch"], job["target_path"]
    person = blog.clone("person")
    edited = article("Redo", "The reviewer's better words.")
    edit_on_branch(person, branch, path, edited)
    worker = worker_for(blog, store_kind)
    worker.ok("run", "--until-idle")
    person.git("push", "--quiet", "origin", f":{branch}")  # rejected after all
    worker.ok("run", "--until-idle")
    assert worker.job(job_id)["job"]["failure_code"] == "rejected_in_review"

    worker.ok("retry", job_id)
    worker.ok("run", "--until-idle")
    again = worker.job(job_id)["job"]
    assert again["state"] == "IN_REVIEW"
    shown = blog.remote_git("show", f"{again['review_branch']}:{path}")
    assert shown == edited.strip()  # the reviewer's version, not a revert of it


def test_two_font_posts_in_review_both_publish_after_a_fonts_resolved_merge(
    tmp_path: Path,
) -> None:
    blog = tiny_blog(tmp_path, extra="")
    (blog.root / ".blogpub.toml").write_text(
        (blog.root / ".blogpub.toml")
        .read_text()
        .replace('branch = "main"', 'branch = "main"\nreview = true')
    )
    blog.git("commit", "--quiet", "-am", "review mode")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    first = blog.submit("f1", article("第一", "今天天气很好。"))
    second = blog.submit("f2", article("第二", "我们学习科技。"))
    blog.ok("run", "--until-idle")
    branches = [blog.job(j)["job"]["review_branch"] for j in (first, second)]
    person = blog.clone("person")
    merge_review(person, branches[0], message="Add the first")
    # The second's subset conflicts with the first's: the person resolves it as the docs
    # say, by rebuilding the subsets (`git blogpub fonts`), then commits the squash.
    person.git("fetch", "--quiet", "origin")
    person.git("reset", "--quiet", "--hard", "origin/main")
    merged = subprocess.run(
        ["git", "merge", "--squash", f"origin/{branches[1]}"], cwd=person.root, capture_output=True
    )
    assert merged.returncode != 0, merged  # the font output conflicts
    person.ok("fonts")
    person.git("add", "-A", "content", "public")
    person.git("commit", "--quiet", "-m", "Add the second, fonts rebuilt")
    person.git("push", "--quiet", "origin", "HEAD:main", f":{branches[1]}")

    blog.ok("run", "--until-idle")
    for job_id in (first, second):
        shown = blog.job(job_id)
        assert shown["job"]["state"] == "PUBLISHED", shown["events"]


def test_an_ordinary_deletion_commit_is_a_takedown(blog: Blog) -> None:
    job_id = blog.submit("gone", article("Gone", "Published, then removed with git rm."))
    blog.ok("run", "--until-idle")
    path = blog.job(job_id)["job"]["target_path"]
    blog.clone("person").remove_by_hand(path, "Take the post down")
    before = blog.remote_log()

    out = blog.ok("run", "--until-idle").stdout
    shown = blog.job(job_id)["job"]
    assert shown["state"] == "PUBLISHED" and shown["withdrawn"] is True
    assert f"job {job_id}: withdrawn" in out
    blog.ok("run", "--until-idle")
    assert blog.remote_log() == before  # never pushed back
    blog.ok("retry", job_id)
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["withdrawn"] is False
    assert blog.remote_file(path) is not None


def test_a_rename_is_a_takedown_and_an_edit_is_not(blog: Blog) -> None:
    moved = blog.submit("moved", article("Moved", "Renamed by a person."))
    kept = blog.submit("kept", article("Kept", "Edited by a person."))
    blog.ok("run", "--until-idle")
    moved_path = blog.job(moved)["job"]["target_path"]
    kept_path = blog.job(kept)["job"]["target_path"]
    person = blog.clone("person")
    person.git("mv", moved_path, moved_path.replace("Moved", "Renamed"))
    (person.root / kept_path).write_text(article("Kept", "Edited by a person, typo fixed."))
    person.git("commit", "--quiet", "-am", "Rename one post, fix a typo in another")
    person.git("push", "--quiet", "origin", "HEAD:main")
    blog.ok("run", "--until-idle")
    assert blog.job(moved)["job"]["withdrawn"] is True
    assert blog.job(kept)["job"]["withdrawn"] is False


def test_the_python_api_runs_the_whole_worker_pass(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, REVIEW)
    job_id = blog.submit("api", article("Api", "Reviewed, merged, settled through the API."))
    publisher = Publisher(blog.root)
    publisher.run_until_idle()
    branch = blog.job(job_id)["job"]["review_branch"]
    assert branch is not None
    merge_review(blog.clone("person"), branch, message="Add api")
    touched = {j["job_id"]: j for j in publisher.run_until_idle()}
    assert touched[job_id]["state"] == "PUBLISHED"
    assert publisher.status(job_id)["state"] == "PUBLISHED"


def test_every_state_change_of_the_worker_is_one_line(blog: Blog) -> None:
    job_id = blog.committed_not_pushed("told", article("Told", "Recovered at start-up."))
    fresh = blog.submit("new", article("New", "Submitted meanwhile."))
    out = blog.ok("run", "--until-idle").stdout
    # The recovered job's moves, which start-up recovery makes on its own thread, and the
    # new job's whole way.
    assert f"job {job_id}: LOCAL_COMMITTED -> PUSHING" in out, out
    assert f"job {job_id}: PUSHING -> PUBLISHED" in out, out
    assert f"job {fresh}: RECEIVED -> PREPARING" in out, out
    assert f"job {fresh}: PUSHING -> PUBLISHED" in out, out
    quiet = blog.submit("quiet", article("Quiet", "Nothing said."))
    assert blog.ok("run", "--until-idle", "--quiet").stdout == ""
    assert blog.job(quiet)["job"]["state"] == "PUBLISHED"
