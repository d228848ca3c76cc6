"""A remote ref-lock race is a race, like a non-fast-forward: the push is tried again at once
after a fetch, on the new tip, without spending the job's retry budget or waiting for the next
retry. Real git: the bare remote's own pre-receive hook moves `main` to another person's commit
while the job's push holds its old value, so receive-pack's compare-and-swap on the ref fails
("cannot lock ref 'refs/heads/main': is at X but expected Y")."""

from __future__ import annotations

from pathlib import Path

from testing.fixtures import Blog, article

# Once only: the marker file makes the second push go through. Git's quarantine variables are
# cleared so the hook's own ref update is a real, concurrent writer of the ref.
RACING_HOOK = """#!/bin/sh
[ -e "$GIT_DIR/raced" ] && exit 0
touch "$GIT_DIR/raced"
env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES \\
    git update-ref refs/heads/main "$(git rev-parse refs/spare/next)"
exit 0
"""


def another_persons_commit(blog: Blog) -> str:
    """A commit on top of the remote's main, kept aside on the remote (not yet on main)."""
    other = blog.clone("other")
    (other.root / "content/posts/by-hand.md").write_text(article("By hand", "A person's post."))
    other.git("add", ".")
    other.git("commit", "--quiet", "-m", "a post by hand")
    other.git("push", "--quiet", "origin", "HEAD:refs/spare/next")
    return other.git("rev-parse", "HEAD")


def test_a_ref_lock_race_on_the_remote_retries_at_once_without_spending_a_retry(
    blog: Blog, tmp_path: Path
) -> None:
    theirs = another_persons_commit(blog)
    hook = blog.remote / "hooks" / "pre-receive"
    hook.write_text(RACING_HOOK)
    hook.chmod(0o755)
    job_id = blog.submit("k", article("Raced", "Pushed while the remote's ref moved."))

    blog.ok("run", "--until-idle")

    assert (blog.remote / "raced").exists()  # the race happened
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED", shown["job"]
    steps = [e["step"] for e in shown["events"]]
    assert "retry:wait" not in steps and "worker:error" not in steps, steps
    # Every delivery round ran within the first attempt: none of the budget was spent.
    attempts = {e["detail"]["attempt"] for e in shown["events"] if e["step"] == "relay:start"}
    assert attempts == {1}
    # Delivered on top of the racing commit, which is kept: nothing was overwritten.
    assert blog.remote_git("rev-parse", "main~1") == theirs
    assert blog.commits_with_job(job_id) == 1
    assert blog.remote_file("content/posts/by-hand.md").startswith(b"---\ntitle: By hand")
    races = [e for e in shown["events"] if e["step"] == "push:rejected"]
    assert [e["detail"]["reason"] for e in races] == ["remote ref lock race"]
