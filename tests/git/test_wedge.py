"""The repository is never wedged: no instant of a SIGKILL, no second worker, no person's
`git gc --prune=now` leaves state that makes `git fetch` fail, for gitpub or for the person.

Kills here hit the whole process group, git children included, as an OOM killer or a power
cut would: a `git` killed mid-way leaves its lock files and half-written state behind.
The soak is bounded for CI; `GITPUB_WEDGE_SEEDS=1,2,…` and `GITPUB_WEDGE_KILLS=N` run a
longer one."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, git, make_blog
from testing.jobs import (
    DRAFT,
    PUSH_LOG_HOOK,
    assert_exactly_once,
    counting_blog,
    distinct,
    drafts,
    pushes,
)

SEEDS = [int(s) for s in os.environ.get("GITPUB_WEDGE_SEEDS", "11,12,13").split(",")]
KILLS = int(os.environ.get("GITPUB_WEDGE_KILLS", "6"))


def STATE(blog: Blog) -> Path:  # noqa: N802 - reads like the folder it names
    return blog.root / ".git" / "blogpub"


def run_argv(blog: Blog, *args: str) -> list[str]:
    return [sys.executable, "-m", "gitpub", "-C", str(blog.root), *args]


def settle(blog: Blog, env: dict[str, str], ids: list[str], seconds: float = 60) -> None:
    """`run --until-idle` until every job is PUBLISHED (retries wait out their backoff)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        res = blog.blogpub("run", "--until-idle", env=env)
        assert "Traceback" not in res.stderr, res.stderr
        if all(blog.job(j)["job"]["state"] == "PUBLISHED" for j in ids):
            return
        time.sleep(0.3)


def fetch_works(blog: Blog) -> None:
    """A person's plain `git fetch` in the live checkout, and git's own consistency check."""
    proc = subprocess.run(["git", "fetch", "origin"], cwd=blog.root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(
        ["git", "fsck", "--connectivity-only", "--no-dangling"],
        cwd=blog.root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def font_counting_blog(base: Path) -> tuple[Blog, Path]:
    """counting_blog with a [fonts] table: every delivery rebuilds subsets in a job worktree."""
    from testing.fontkit import tiny_blog

    script = base / "draft.py"
    script.write_text(DRAFT)
    blog = tiny_blog(base, f'\n[steps]\ndraft = ["{sys.executable}", "{script}"]\n')
    blog.trust()
    hook = blog.remote / "hooks" / "update"
    hook.write_text(PUSH_LOG_HOOK)
    hook.chmod(0o755)
    return blog, base / "draft.log"


@pytest.mark.parametrize(
    ("seed", "fonts"), [(s, False) for s in SEEDS] + [(s + 1000, True) for s in SEEDS[:1]]
)
def test_sigkill_soak_of_the_process_group_never_wedges(
    tmp_path: Path, seed: int, fonts: bool
) -> None:
    rng = random.Random(seed)
    blog, draft_log = font_counting_blog(tmp_path) if fonts else counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log), "DRAFT_SECONDS": "0.05"}
    cjk = " 今天" if fonts else ""  # characters the subset must gain
    ids = [
        blog.submit(f"soak-{seed}-{n}", article(f"Soak {n}", distinct(seed * 100 + n) + cjk))
        for n in range(3)
    ]
    for _ in range(KILLS):
        proc = subprocess.Popen(
            run_argv(blog, "run", "--until-idle"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(rng.uniform(0, 0.6))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        fetch_works(blog)  # at every instant in between, a person can fetch
    settle(blog, {"DRAFT_LOG": str(draft_log)}, ids)
    if fonts:
        for job_id in ids:
            job = blog.job(job_id)["job"]
            assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
            assert blog.commits_with_job(job_id) == 1
            files = blog.remote_git(
                "-c",
                "core.quotePath=false",
                "show",
                "--name-only",
                "--format=",
                job["remote_commit"],
            )
            assert job["target_path"] in files.split()
        # Whatever instant the kills hit, the published subset draws every published article.
        from testing.fontkit import cmap

        assert {ord(c) for c in "今天"} <= cmap(blog.remote_file("public/fonts/blog.woff2"))
        assert drafts(draft_log) == Counter({j: 1 for j in ids})
        assert 1 <= len(pushes(blog)) <= len(ids)
    else:
        assert_exactly_once(blog, ids, draft_log)
    fetch_works(blog)


def test_a_half_made_worktree_left_by_git_worktree_add_is_repaired(blog: Blog) -> None:
    """What a kill inside `git worktree add` leaves: HEAD of forty zeros, "initializing".
    Every `git fetch` fails on it — and a job waiting for delivery fetches before anything
    else. The next run removes it and publishes."""
    job_id = blog.submit("k", article("Wedge", "A worktree half made."))
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    dead = str(uuid.uuid4())  # a job worktree a killed worker was making
    blog.git(
        "worktree", "add", "--quiet", "--detach", str(STATE(blog) / "worktrees" / dead), "HEAD"
    )
    admin = blog.root / ".git" / "worktrees" / dead
    (admin / "HEAD").write_text("0" * 40 + "\n")
    (admin / "locked").write_text("initializing")
    broken = subprocess.run(
        ["git", "fetch", "origin"], cwd=blog.root, capture_output=True, text=True
    )
    assert broken.returncode != 0 and "bad object" in broken.stderr  # the wedge is real
    doctor = blog.blogpub("doctor")
    assert f"half-made job worktree {STATE(blog) / 'worktrees' / dead}" in doctor.stdout
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED", shown["events"]
    assert blog.commits_with_job(job_id) == 1
    assert not admin.exists()
    fetch_works(blog)


def test_a_kill_while_gitpub_makes_a_worktree_leaves_fetch_working(tmp_path: Path) -> None:
    """gitpub's own worktrees (made to rebuild font subsets) are registered with a valid HEAD
    and gitdir last: killed right before that last write, git does not see a worktree at all."""
    from testing.fontkit import tiny_blog

    blog = tiny_blog(tmp_path)
    job_id = blog.submit("k", article("新文章", "今天学习写字。"))
    # Committed, then the remote moves: delivery replays the job in a worktree, rebuilding
    # the subset from both articles (a job already on the tip is pushed as it is).
    committed = blog.blogpub(
        "run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"}
    )
    assert committed.returncode == 137
    blog.clone("person").push_by_hand("content/posts/spring.mdx", article("春", "春眠。"), "spring")
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "during_worktree_add"})
    assert res.returncode == 137
    assert (STATE(blog) / "worktrees" / job_id / ".git").is_file()  # it was being made
    fetch_works(blog)
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    fetch_works(blog)


def test_a_job_ref_at_a_missing_object_is_dropped_and_the_commit_remade(blog: Blog) -> None:
    job_id = blog.submit("k", article("Pruned", "Its commit was pruned."))
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    commit = blog.git("rev-parse", f"refs/blog-jobs/{job_id}")
    # What a `git gc --prune=now` racing the commit leaves: the ref names a commit that is gone.
    loose = blog.root / ".git" / "objects" / commit[:2] / commit[2:]
    assert loose.exists()
    loose.unlink()
    broken = subprocess.run(
        ["git", "fetch", "origin"], cwd=blog.root, capture_output=True, text=True
    )
    assert broken.returncode != 0
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    assert "commit:remade" in [e["step"] for e in shown["events"]]
    fetch_works(blog)


def test_two_workers_at_once_never_fail_a_fetch(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log)}
    ids = [blog.submit(f"k{i}", article(f"Twin {i}", distinct(i))) for i in range(8)]
    procs = [
        subprocess.Popen(
            run_argv(blog, "run", "--until-idle"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "Traceback" not in err
    settle(blog, {"DRAFT_LOG": str(draft_log)}, ids)
    assert_exactly_once(blog, ids, draft_log)
    for job_id in ids:
        for ev in blog.job(job_id)["events"]:
            assert "fetch failed" not in str(ev["detail"].get("reason", "")), ev
            assert ev["step"] != "worker:error", ev
    fetch_works(blog)


def test_gc_prune_now_during_delivery_publishes_each_job_once(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log), "DRAFT_SECONDS": "0.1"}
    ids = [blog.submit(f"k{i}", article(f"Pruned {i}", distinct(40 + i))) for i in range(8)]
    worker = subprocess.Popen(
        run_argv(blog, "run", "--until-idle"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    for _ in range(3):
        time.sleep(0.4)
        git(blog.root, "gc", "--quiet", "--prune=now")
    _, err = worker.communicate(timeout=300)
    assert "Traceback" not in err
    settle(blog, {"DRAFT_LOG": str(draft_log)}, ids)
    assert_exactly_once(blog, ids, draft_log)
    fetch_works(blog)


def test_a_partial_clone_publishes(tmp_path: Path) -> None:
    (tmp_path / "origin").mkdir()
    origin = make_blog(tmp_path / "origin")
    git(origin.remote, "config", "uploadpack.allowFilter", "true")
    git(origin.remote, "config", "uploadpack.allowAnySHA1InWant", "true")
    root = tmp_path / "partial"
    git(tmp_path, "clone", "--quiet", "--filter=blob:none", f"file://{origin.remote}", str(root))
    assert git(root, "config", "remote.origin.promisor") == "true"
    blog = Blog(root, origin.remote)
    job_id = blog.submit("k", article("Partial", "Written from a clone without old blobs."))
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
    assert b"Written from a clone without old blobs." in blog.remote_file(job["target_path"])
    assert blog.remote_file("content/posts/hello.mdx").startswith(b"---\ntitle: Hello")


def test_a_sha256_repository_is_refused_in_one_line_by_every_command(tmp_path: Path) -> None:
    root = tmp_path / "sha256"
    git(tmp_path, "init", "--quiet", "--object-format=sha256", str(root))
    (root / ".blogpub.toml").write_text(CONFIG)
    blog = Blog(root, tmp_path / "none")
    src = tmp_path / "a.md"
    src.write_text(article("X", "body"))
    for args in (
        ("status",),
        ("run", "--until-idle"),
        ("submit", "--key", "k", "--source", str(src)),
        ("show", "abc"),
    ):
        res = blog.blogpub(*args)
        assert res.returncode == 1, (args, res)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "SHA-256 repository" in lines[0], (args, res.stderr)
    doctor = blog.blogpub("doctor")  # a report: the problem is one of its lines
    assert doctor.returncode == 1 and "SHA-256 repository" in doctor.stdout
    assert not (root / ".git" / "blogpub").exists()
