"""Faults from a real machine end in an explicit state (or PUBLISHED) within three runs, with
git's own words in `show` — never a job looping "in flight", never a traceback.

And job commits do not depend on the person's git configuration: their identity is
`[publish] author` (gitpub at the node by default), signed only under `[publish] sign`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, make_blog

IN_FLIGHT = {
    "RECEIVED",
    "PREPARING",
    "READY_TO_COMMIT",
    "LOCAL_COMMITTING",
    "LOCAL_COMMITTED",
    "PUSHING",
    "RECHECK_CANDIDATES",
    "RECOVERING",
}


def three_runs(blog: Blog, job_id: str, env: dict[str, str] | None = None) -> dict:
    """At most three `run --until-idle`; the job must have left "in flight" by then."""
    for _ in range(3):
        res = blog.blogpub("run", "--until-idle", env=env)
        assert "Traceback" not in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) <= 8, res.stderr
        shown = blog.job(job_id)
        if shown["job"]["state"] not in IN_FLIGHT and shown["job"]["state"] != "RETRY_WAIT":
            return dict(shown)
    raise AssertionError(f"still in flight after three runs: {blog.job(job_id)}")


def no_identity(blog: Blog) -> dict[str, str]:
    """An environment where git knows no name and may guess none."""
    blog.git("config", "user.useConfigOnly", "true")
    env = dict(os.environ)
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        env.pop(key, None)
    return env


def run_clean(blog: Blog, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_person_without_identity_and_with_gpgsign_still_publishes(
    blog: Blog, tmp_path: Path
) -> None:
    env = no_identity(blog)
    gnupg = tmp_path / "gnupg-empty"
    gnupg.mkdir(mode=0o700)
    env["GNUPGHOME"] = str(gnupg)
    blog.git("config", "commit.gpgsign", "true")
    # The person's own commit would fail here: that is the configuration under test.
    refused = subprocess.run(
        ["git", "commit", "--allow-empty", "-m", "x"], cwd=blog.root, env=env, capture_output=True
    )
    assert refused.returncode != 0
    job_id = blog.submit("k", article("Mine", "Published whatever the person's git says."))
    for _ in range(3):
        res = run_clean(blog, env, "run", "--until-idle")
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
    who = blog.remote_git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%G?", job["remote_commit"])
    assert who == "gitpub <gitpub@test-node>|gitpub <gitpub@test-node>|N"


def test_publish_author_names_the_job_commits(tmp_path: Path) -> None:
    config = CONFIG.replace(
        'branch = "main"', 'branch = "main"\nauthor = "Jane Writer <jane@example.org>"'
    )
    blog = make_blog(tmp_path, config)
    job_id = blog.submit("k", article("Jane", "Jane's own words."))
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    who = blog.remote_git("log", "-1", "--format=%an <%ae>|%cn <%ce>", job["remote_commit"])
    assert who == "Jane Writer <jane@example.org>|Jane Writer <jane@example.org>"


def test_bad_publish_author_is_refused_naming_the_key(tmp_path: Path) -> None:
    blog = make_blog(
        tmp_path, CONFIG.replace('branch = "main"', 'branch = "main"\nauthor = "nobody"')
    )
    res = blog.blogpub("run", "--until-idle")
    assert res.returncode == 1
    assert "publish.author" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_sign_without_a_key_is_review_with_gpgs_message(tmp_path: Path) -> None:
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    blog = make_blog(tmp_path, CONFIG.replace('branch = "main"', 'branch = "main"\nsign = true'))
    gnupg = tmp_path / "gnupg-empty"
    gnupg.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(gnupg)}
    before = blog.remote_log()
    job_id = blog.submit("k", article("Signed", "Needs a key nobody has."))
    shown = three_runs(blog, job_id, env)
    assert shown["job"]["state"] == "REVIEW"
    assert shown["job"]["failure_code"] == "sign_failed"
    words = " ".join(str(e["detail"]) for e in shown["events"])
    assert "gpg failed to sign the data" in words
    assert blog.remote_log() == before
    row = next(ln for ln in blog.ok("status").stdout.splitlines() if job_id[:8] in ln)
    assert "sign_failed" in row and "gpg failed to sign the data" in row


LONG_NAME_DRAFT = """\
import json, sys
req = json.load(sys.stdin)
print(json.dumps({"text": req["source"], "path": req["source"].split("PATH:")[1].split()[0]}))
"""


@pytest.mark.parametrize(
    "path",
    ["content/posts/" + "a" * 300 + ".md", "content/posts/.git/x.md", "content/posts/.GIT/y.md"],
)
def test_a_path_the_filesystem_or_git_refuses_is_review(tmp_path: Path, path: str) -> None:
    script = tmp_path / "draft.py"
    script.write_text(LONG_NAME_DRAFT)
    blog = make_blog(tmp_path, CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{script}"]\n')
    blog.trust()
    before = blog.remote_log()
    job_id = blog.submit("k", article("Odd path", f"PATH:{path} and some words."))
    shown = three_runs(blog, job_id)
    assert shown["job"]["state"] == "REVIEW"
    assert shown["job"]["failure_code"] == "path_refused"
    assert blog.remote_log() == before
    assert not any(p.name == "x.md" for p in (blog.root / ".git").rglob("x.md"))


def test_submit_refuses_a_target_inside_dot_git(blog: Blog) -> None:
    src = blog.root.parent / "s.md"
    src.write_text(article("T", "words"))
    res = blog.blogpub(
        "submit", "--key", "k", "--source", str(src), "--target", "content/posts/.git/x.md"
    )
    assert res.returncode == 1 and ".git" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


REJECTING_HOOK = """#!/bin/sh
echo "error: RPC failed; curl 52 Empty reply from server" >&2
exit 1
"""


def test_push_failure_keeps_gits_cause_not_done(blog: Blog) -> None:
    hook = blog.remote / "hooks" / "pre-receive"
    hook.write_text(REJECTING_HOOK)
    hook.chmod(0o755)
    job_id = blog.submit("k", article("Refused", "The remote says no."))
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "RETRY_WAIT"
    waits = [e for e in shown["events"] if e["step"] == "retry:wait"]
    reason = waits[-1]["detail"]["reason"]
    assert "RPC failed; curl 52 Empty reply from server" in reason, reason
    assert "Done" not in reason
    assert "pre-receive hook declined" in waits[-1]["detail"]["git"]  # the whole output too
    row = next(ln for ln in blog.ok("status").stdout.splitlines() if job_id[:8] in ln)
    assert "RPC failed" in row


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return proc.returncode == 0


def test_a_full_disk_ends_explicitly_then_publishes_once_space_is_back(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "4m"):
        pytest.skip("needs root and a mountable tmpfs for a small full disk")
    try:
        blog = make_blog(disk)
        job_id = blog.submit("k", article("Full", "Written on a full disk. " * 50))
        filler = disk / "filler"
        with filler.open("wb") as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        outcomes = []
        for _ in range(3):
            res = blog.blogpub("run", "--until-idle")
            assert "Traceback" not in res.stderr, res.stderr
            outcomes.append((res.returncode, res.stderr.strip()))
        filler.unlink()
        shown = blog.job(job_id)
        state = shown["job"]["state"]
        if state == "REVIEW":
            assert shown["job"]["failure_code"] == "disk_full"
            assert "No space left on device" in str(shown["events"])
            blog.ok("retry", job_id)
        else:
            # The store itself could not take a write: each run said so in one line.
            said = [err for rc, err in outcomes if rc == 1]
            assert said and all(len(e.splitlines()) == 1 for e in said), outcomes
            assert all("space" in e or "full" in e for e in said), outcomes
        for _ in range(3):
            blog.ok("run", "--until-idle")
            if blog.job(job_id)["job"]["state"] == "PUBLISHED":
                break
        assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
        assert blog.commits_with_job(job_id) == 1
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_gits_words_are_kept_sanitized(blog: Blog) -> None:
    """git quotes the remote URL in its errors; a token in it never reaches the store."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    blog.git("remote", "set-url", "origin", f"https://writer:{token}@127.0.0.1:9/blog.git")
    job_id = blog.submit("k", article("Secret URL", "The remote's URL holds a token."))
    blog.ok("run", "--until-idle")
    shown = blog.blogpub("show", job_id)
    assert shown.returncode == 0
    assert "fetch failed" in shown.stdout  # git's own words are there…
    assert token not in shown.stdout  # …without the token
    for stored in (blog.root / ".git" / "blogpub").glob("state.sqlite3*"):  # WAL included
        assert token.encode() not in stored.read_bytes(), stored
