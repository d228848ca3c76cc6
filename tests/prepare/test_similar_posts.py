"""The judge never loses a post: two real short posts written from one template are
near-duplicates by the 3-gram measure and are still two posts. SKIPPED is final and nobody
looks at it again, so only an exact duplicate is skipped; a near-duplicate waits in REVIEW,
naming the other article and the score, until a person retries or abandons it.
Real material: tests/corpus/blogs/awesee/SOURCE.md."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from testing.fixtures import Blog, git
from testing.paths import CORPUS

from gitpub.prepare.builtins import similarity

SITE = CORPUS / "blogs" / "awesee" / "site"
PRE = "leetcode/2017-08-12-n-ary-tree-preorder-traversal.md"
POST = "leetcode/2017-08-13-n-ary-tree-postorder-traversal.md"
CONFIG = """\
[publish]
remote = "origin"
branch = "main"
content = ["leetcode"]
suffixes = [".md"]
path = "leetcode/{date:%Y-%m-%d}-{slug}.md"
"""


def leetcode_blog(tmp_path: Path, steps: str = "") -> Blog:
    """The blog with the preorder post on its remote, as its author pushed it."""
    remote, root = tmp_path / "remote.git", tmp_path / "blog"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(root))
    for rel in ("_config.yml", PRE):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SITE / rel, root / rel)
    (root / ".blogpub.toml").write_text(CONFIG + steps)
    blog = Blog(root, remote)
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "the blog")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    return blog


def submit(blog: Blog, key: str, *extra: str) -> str:
    src = blog.root.parent / f"src-{key}.md"
    shutil.copyfile(SITE / POST, src)
    return str(
        blog.ok("submit", "--key", key, "--source", str(src), "--json", *extra).json()["job_id"]
    )


def outcome(blog: Blog, job_id: str) -> tuple[str, str]:
    shown = blog.job(job_id)
    done = [e for e in shown["events"] if e["step"] in ("prepare:done", "recheck:undecided")]
    return shown["job"]["state"], str(done[-1]["detail"].get("reason"))


SCORE = similarity((SITE / PRE).read_text("utf-8"), (SITE / POST).read_text("utf-8"))
SHOWN = "0.890"  # three decimals, cut: what a person reads in `show`


def test_the_two_real_posts_are_near_duplicates_by_the_measure() -> None:
    assert 0.85 <= SCORE < 1.0  # above similarity_skip: the old judge SKIPPED the second
    assert f"{SCORE:.6f}".startswith(SHOWN)


@pytest.mark.parametrize("target", [None, POST], ids=["derived path", "--target"])
def test_a_near_duplicate_waits_for_a_person_naming_the_other_post(
    tmp_path: Path, target: str | None
) -> None:
    blog = leetcode_blog(tmp_path)
    log = blog.remote_log()
    job_id = submit(blog, "590", *(["--target", target] if target else []))
    blog.ok("run", "--until-idle")
    state, why = outcome(blog, job_id)
    assert state == "REVIEW"
    assert why.startswith(f"{SHOWN} similar to {PRE}: a near-duplicate waits for a person")
    assert blog.job(job_id)["job"]["failure_code"] == "similar"
    assert blog.remote_log() == log

    # The person has looked and wants it: retry publishes it at its own path.
    blog.ok("retry", job_id)
    blog.ok("run", "--until-idle")
    published = blog.job(job_id)["job"]
    # Without --target the path is the config's template, filled from the front matter.
    path = target or "leetcode/2017-08-13-N-叉树的后序遍历.md"
    assert (published["state"], published["target_path"]) == ("PUBLISHED", path)
    assert blog.remote_file(path) == (SITE / POST).read_bytes()
    assert blog.remote_file(PRE) == (SITE / PRE).read_bytes()


def test_similar_skip_skips_a_near_duplicate_unless_the_writer_named_the_path(
    tmp_path: Path,
) -> None:
    blog = leetcode_blog(tmp_path, '\n[steps]\nsimilar = "skip"\n')
    log = blog.remote_log()
    derived = submit(blog, "590")
    named = submit(blog, "590-named", "--target", POST)
    blog.ok("run", "--until-idle")
    assert outcome(blog, derived) == (
        "SKIPPED",
        f'{SHOWN} similar to {PRE} ([steps] similar = "skip")',
    )
    state, why = outcome(blog, named)
    assert state == "REVIEW" and f"similar to {PRE}" in why
    assert blog.remote_log() == log


def test_a_near_duplicate_reaching_the_remote_meanwhile_is_not_skipped_at_delivery(
    tmp_path: Path,
) -> None:
    blog = leetcode_blog(tmp_path)
    other = blog.clone("other")
    # The postorder post first, alone: nothing like it yet, so it is prepared and committed.
    other.git("rm", "--quiet", PRE)
    other.git("commit", "--quiet", "-m", "not yet")
    other.git("push", "--quiet", "origin", "main")
    blog.git("pull", "--quiet", "origin", "main")
    job_id = submit(blog, "590", "--target", POST)
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    assert blog.job(job_id)["job"]["state"] == "LOCAL_COMMITTED"
    # Meanwhile the preorder post reaches the remote by another hand.
    (other.root / PRE).parent.mkdir(exist_ok=True)
    (other.root / PRE).write_bytes((SITE / PRE).read_bytes())
    other.git("add", PRE)
    other.git("commit", "--quiet", "-m", "589")
    other.git("push", "--quiet", "origin", "main")
    log = blog.remote_log()

    blog.ok("run", "--until-idle")
    state, why = outcome(blog, job_id)
    assert state == "REVIEW"
    assert why.startswith(f"{SHOWN} similar to {PRE}, which reached the remote meanwhile")
    assert blog.remote_log() == log
