"""The reference-transaction hook guards refs/blog-jobs/* from people, never from gitpub."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from testing.fixtures import Blog, article

from gitpub.git.repo import Repo


def git_proc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=os.environ)


def test_a_person_cannot_delete_or_move_a_job_ref_but_gitpub_can(blog: Blog) -> None:
    blog.ok("install")
    job_id = blog.submit("k", article("Guarded", "A job whose recovery ref must survive."))
    blog.ok("run", "--until-idle")  # gitpub's own ref updates pass the hook
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    # ... and leave no hint behind: gitpub marks every git command it runs.
    assert not (blog.root / ".git" / "blogpub" / "hints").exists()

    ref = f"refs/blog-jobs/{job_id}"
    oid = blog.git("rev-parse", ref)
    proc = git_proc(blog.root, "update-ref", "-d", ref)
    assert proc.returncode != 0
    assert f"refusing to delete {ref}" in proc.stderr and "git blogpub gc" in proc.stderr
    proc = git_proc(blog.root, "update-ref", ref, "HEAD~1")
    assert proc.returncode != 0 and f"refusing to move {ref}" in proc.stderr
    assert blog.git("rev-parse", ref) == oid

    # `git gc` packs refs (a rewrite and a loose-copy deletion in the hook's eyes): not refused.
    proc = git_proc(blog.root, "gc", "--quiet")
    assert proc.returncode == 0 and "refusing" not in proc.stderr
    assert not (blog.root / ".git" / ref).exists()  # now only in packed-refs
    assert blog.git("rev-parse", ref) == oid
    proc = git_proc(blog.root, "update-ref", "-d", ref, oid)
    assert proc.returncode != 0 and "refusing to delete" in proc.stderr

    # gitpub's own deletion (what `gc` does for finished jobs) goes through.
    Repo(blog.root).delete_ref(ref, f"gitpub: gc finished job {job_id}")
    assert git_proc(blog.root, "rev-parse", "--verify", "--quiet", ref).returncode != 0


def test_unrelated_refs_move_freely(blog: Blog) -> None:
    blog.ok("install")
    for args in (
        ("update-ref", "refs/heads/scratch", "HEAD"),
        ("update-ref", "-d", "refs/heads/scratch"),
        ("tag", "v1"),
        ("tag", "-d", "v1"),
        ("update-ref", "refs/blog-jobs/made-by-hand", "HEAD"),  # creating is harmless
    ):
        proc = git_proc(blog.root, *args)
        assert proc.returncode == 0 and proc.stderr == "", (args, proc.stderr)
    assert not (blog.root / ".git" / "blogpub" / "hints").exists()


def test_a_legacy_hook_sees_every_update_and_keeps_its_veto(blog: Blog) -> None:
    legacy = blog.root / ".git" / "hooks" / "reference-transaction"
    legacy.write_text('#!/bin/sh\ncat >> "seen-$1.txt"\n[ "$1" != prepared ] || [ ! -e veto ]\n')
    legacy.chmod(0o755)
    blog.ok("install")
    job_ref = "refs/blog-jobs/a-job"
    Repo(blog.root).update_ref(job_ref, blog.git("rev-parse", "HEAD"), "", "gitpub: test job")

    # Six updates: more than the hook reads line by line before handing the rest to `cat`.
    branches = [f"refs/heads/b{i}" for i in range(6)]
    stdin = "".join(f"create {b} HEAD\n" for b in branches)
    proc = subprocess.run(
        ["git", "update-ref", "--stdin"], cwd=blog.root, input=stdin, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    for phase in ("prepared", "committed"):
        seen = (blog.root / f"seen-{phase}.txt").read_text().splitlines()
        assert [line.split()[2] for line in seen[-6:]] == branches

    # The same big transaction with a job ref deletion in it is refused as a whole.
    stdin = "".join(f"delete {b}\n" for b in branches) + f"delete {job_ref}\n"
    proc = subprocess.run(
        ["git", "update-ref", "--stdin"], cwd=blog.root, input=stdin, capture_output=True, text=True
    )
    assert proc.returncode != 0 and f"refusing to delete {job_ref}" in proc.stderr
    assert blog.git("for-each-ref", "--format=%(refname)", "refs/heads/b*").split() == branches

    (blog.root / "veto").touch()
    proc = git_proc(blog.root, "update-ref", "refs/heads/vetoed", "HEAD")
    assert proc.returncode != 0
    assert git_proc(blog.root, "rev-parse", "--verify", "--quiet", "refs/heads/vetoed").returncode
