"""Crash recovery and exactly-once delivery, with real process deaths.

Each scenario kills gitpub at a named point (`GITPUB_CRASH_AT`, which ends the process like a
SIGKILL), restarts it, and checks what a user would: every job ends PUBLISHED, the remote
holds exactly one commit per job, every push the remote received is accounted for, and the
draft command (a script that counts its own runs) was paid for once per job."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from testing.fixtures import (
    SOAK_ROUNDS,
    SOAK_SEEDS,
    STORES,
    Blog,
    article,
    until_due,
    wait_for,
)
from testing.jobs import (
    DRAFT,
    assert_exactly_once,
    counting_blog,
    distinct,
    draft_spool,
    drafts,
    pushes,
)

from gitpub.core import crash

# Every crash point on a job's path; a point added to gitpub.core.crash joins the matrix by itself.
# The others belong to paths a plain job never takes: fonts (the font test below and
# test_fonts_publish; a job worktree is made only to rebuild subsets or for a person) and
# external_sync (test_external_sync), and the workflows' own points, which the second matrix
# below drives with scheduled and reviewed jobs.
SCHEDULE_POINTS = ("after_schedule_due",)
REVIEW_POINTS = ("after_review_push_before_db", "after_review_merged_before_db")
ELSEWHERE = (
    "during_font_regeneration",
    "during_external_sync_push",
    "during_worktree_add",
    *SCHEDULE_POINTS,
    *REVIEW_POINTS,
)
POINTS = [p for p in crash.POINTS if p not in ELSEWHERE]
assert POINTS[0] == "after_received"  # the one point in `submit`, handled apart below


# Every point on both stores with one job; the batch of three on the embedded store (the
# shared store's batches are the fleet soak's, tests/store/test_fleet.py).
CRASH_CASES = [
    *((point, 1, store) for point in POINTS for store in STORES),
    *((point, 3, "sqlite") for point in POINTS),
]


@pytest.mark.parametrize(("point", "jobs", "store_kind"), CRASH_CASES)
def test_crash_at_every_point_then_restart(
    tmp_path: Path, point: str, jobs: int, store_kind: str
) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    texts = [
        article(f"Post {i}", f"Article number {i} about crash safety. " * 3) for i in range(jobs)
    ]
    ids: list[str] = []
    for i, text in enumerate(texts):
        src = tmp_path / f"s{i}.mdx"
        src.write_text(text)
        args = ("submit", "--key", f"k{i}", "--source", str(src), "--json")
        if point == "after_received":
            res = blog.blogpub(*args, env={**env, "GITPUB_CRASH_AT": point})
            assert res.returncode == 137 and res.stdout == ""  # died before answering
            again = blog.ok(*args).json()  # the client retries with the same key
            assert again["created"] is False
            ids.append(again["job_id"])
        else:
            ids.append(blog.ok(*args).json()["job_id"])
    if point != "after_received":
        res = blog.blogpub("run", "--until-idle", env={**env, "GITPUB_CRASH_AT": point})
        assert res.returncode == 137, res.stderr
    blog.ok("run", "--until-idle", env=env)
    assert_exactly_once(blog, ids, draft_log)
    if point == "after_local_commit_before_db":
        # The commit existed before the database knew it: recovery found it, no second one.
        steps = [e["step"] for e in blog.job(ids[0])["events"]]
        assert "recover:found-commit" in steps


def test_every_crash_point_is_in_a_matrix() -> None:
    """A point nobody kills gitpub at is a promise nobody checks."""
    workflow = [p for p, _ in WORKFLOW_CASES]
    fonts = ["during_font_regeneration", "during_worktree_add"]
    assert set(crash.POINTS) <= {*POINTS, *workflow, *fonts, "during_external_sync_push"}


# The workflows' crash matrix: each new point, and the shared points a review job passes on
# its own path (its commit is stacked alone on the published tip, then pushed to its branch).
WORKFLOW_CASES = [
    *[(p, "scheduled") for p in SCHEDULE_POINTS],
    *[
        (p, "review")
        for p in (*REVIEW_POINTS, "during_batch_stacking", "after_batch_refs_before_db")
    ],
]


def person_merges_every_review_branch(blog: Blog) -> None:
    """A person merges each review branch with a merge commit (which keeps the job commit and
    its trailers on the published branch), deletes the branches, pushes once."""
    person = blog.clone("person")
    person.git("fetch", "--quiet", "origin")
    branches = person.git(
        "for-each-ref", "--format=%(refname:short)", "refs/remotes/origin/blogpub/review/"
    ).split()
    assert branches
    for ref in branches:
        person.git("merge", "--quiet", "--no-ff", "-m", f"Merge {ref}", ref)
    gone = [":" + ref.removeprefix("origin/") for ref in branches]
    person.git("push", "--quiet", "origin", "HEAD:main", *gone)


@pytest.mark.both_stores
@pytest.mark.parametrize(("point", "flow"), WORKFLOW_CASES)
def test_crash_at_every_workflow_point_then_restart(tmp_path: Path, point: str, flow: str) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    # An hour ahead, and the clock moved (until_due): a second job must not come due by
    # itself on a loaded machine.
    extra = ("--at", "+1h") if flow == "scheduled" else ("--review",)
    ids = [blog.submit(f"k{i}", article(f"Post {i}", distinct(i)), *extra) for i in range(2)]
    if flow == "scheduled":
        for job_id in ids:
            job = blog.job(job_id)["job"]
            assert job["state"] == "SCHEDULED"
            until_due({**job, "next_retry_at": job["scheduled_at"]})
    if point == "after_review_merged_before_db":
        blog.ok("run", "--until-idle", env=env)
        person_merges_every_review_branch(blog)
    res = blog.blogpub("run", "--until-idle", env={**env, "GITPUB_CRASH_AT": point})
    assert res.returncode == 137, res.stderr
    blog.ok("run", "--until-idle", env=env)
    if flow == "scheduled":
        assert_exactly_once(blog, ids, draft_log)
        return
    if point != "after_review_merged_before_db":
        for job_id in ids:
            job = blog.job(job_id)["job"]
            assert job["state"] == "IN_REVIEW", blog.job(job_id)["events"]
            # One job commit on the published tip: a re-push after the crash replaced it.
            branch = job["review_branch"]
            assert blog.remote_git("rev-parse", f"{branch}~1") == blog.remote_git(
                "rev-parse", "main"
            )
        person_merges_every_review_branch(blog)
        blog.ok("run", "--until-idle", env=env)
    for job_id in ids:
        job = blog.job(job_id)["job"]
        assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
        assert blog.commits_with_job(job_id) == 1
    assert drafts(draft_log) == Counter({j: 1 for j in ids})
    # gitpub never pushed to the published branch: the person's merge is its only push.
    assert [p for p in pushes(blog) if p.startswith("refs/heads/main ")] == [
        f"refs/heads/main {blog.remote_git('rev-parse', 'main')}"
    ]


def test_recovery_falls_back_to_trailer_search_without_the_job_ref(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    job_id = blog.submit("k", article("Lost ref", "The job ref is gone; trailers remain."))
    res = blog.blogpub(
        "run", "--until-idle", env={**env, "GITPUB_CRASH_AT": "after_local_commit_before_db"}
    )
    assert res.returncode == 137
    # Simulate the ref never having been written: only `git log --grep` can find the commit.
    blog.git("update-ref", "-d", f"refs/blog-jobs/{job_id}", check=False)
    if blog.git("rev-parse", "--verify", "--quiet", f"refs/blog-jobs/{job_id}", check=False):
        pytest.skip("job refs are protected by installed hooks here")
    blog.ok("run", "--until-idle", env=env)
    assert_exactly_once(blog, [job_id], draft_log)
    assert "recover:found-commit" in [e["step"] for e in blog.job(job_id)["events"]]


def test_damaged_artifacts_during_recovery_go_to_review(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    job_id = blog.submit("k", article("Fragile", "Artifacts will be tampered with."))
    res = blog.blogpub("run", "--until-idle", env={**env, "GITPUB_CRASH_AT": "before_local_commit"})
    assert res.returncode == 137
    job = blog.job(job_id)["job"]
    artifact = blog.root / ".git" / "blogpub" / "jobs" / job_id / "artifacts" / job["target_path"]
    artifact.write_text("tampered\n")
    before = blog.remote_log()
    blog.ok("run", "--until-idle", env=env)
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    assert shown["job"]["failure_code"] == "artifacts_damaged"
    assert any(e["step"] == "recover:unsafe" for e in shown["events"])
    assert blog.remote_log() == before


@pytest.mark.both_stores
def test_draft_killed_mid_run_is_adopted_not_paid_again(tmp_path: Path) -> None:
    """SIGKILL while the (slow) draft command runs: it finishes on its own and the next
    worker adopts its answer."""
    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log), "DRAFT_SECONDS": "1.5"}
    job_id = blog.submit("k", article("Slow", "An expensive draft."))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--until-idle"], env=env
    )
    spool = draft_spool(blog, job_id)
    wait_for(lambda: (spool / "pid").exists() and draft_log.exists(), "the draft to start")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (spool / "status").exists()  # killed while the draft was still running
    blog.ok("run", "--until-idle", env={"DRAFT_LOG": str(draft_log)})
    assert_exactly_once(blog, [job_id], draft_log)


def test_a_long_recovery_does_not_hold_up_new_jobs(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log)}
    argv = [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--until-idle"]
    release = tmp_path / "release-the-slow-draft"
    slow = blog.submit("slow", article("Slow", distinct(1) + f" waitfor:{release}"))
    first = subprocess.Popen(argv, env=env)
    spool = draft_spool(blog, slow)
    wait_for(lambda: (spool / "pid").exists() and draft_log.exists(), "the draft to start")
    first.send_signal(signal.SIGKILL)  # dies mid-draft; the draft itself runs on
    first.wait()
    fast = blog.submit("fast", article("Fast", distinct(2)))

    second = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    wait_for(lambda: blog.job(fast)["job"]["state"] == "PUBLISHED", "the fast job to publish")
    # The new job was delivered while recovery still waited for the adopted draft.
    assert blog.job(fast)["job"]["state"] == "PUBLISHED"
    assert blog.job(slow)["job"]["state"] == "PREPARING"
    release.write_text("")
    second.wait(timeout=120)
    assert second.returncode == 0
    assert_exactly_once(blog, [slow, fast], draft_log)


@pytest.mark.soak
@pytest.mark.parametrize("seed", SOAK_SEEDS)
def test_soak_random_sigkill(tmp_path: Path, seed: int) -> None:
    """Workers killed at random instants, round after round; knobs GITPUB_SOAK_ROUNDS and
    GITPUB_SOAK_SEEDS (comma-separated) are read by conftest (docs/testing.md)."""
    rounds = SOAK_ROUNDS
    rng = random.Random(seed)
    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log), "DRAFT_SECONDS": "0.2"}
    ids: list[str] = []
    argv = [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--interval", "0.1"]
    for _ in range(rounds):
        while sum(1 for j in blog.status() if j["state"] != "PUBLISHED") < 5:
            n = len(ids)
            ids.append(blog.submit(f"soak-{n}", article(f"Soak {n}", distinct(n))))
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 2))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    blog.ok("run", "--until-idle", env={"DRAFT_LOG": str(draft_log)})
    assert_exactly_once(blog, ids, draft_log)


@pytest.mark.both_stores
def test_two_reconcilers_at_once_deliver_each_job_once(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log)}
    ids = [blog.submit(f"k{i}", article(f"Twin {i}", distinct(i))) for i in range(4)]
    argv = [sys.executable, "-m", "gitpub", "-C", str(blog.root), "reconcile"]
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert_exactly_once(blog, ids, draft_log)


def test_prepare_is_not_blocked_by_a_held_delivery_lock(tmp_path: Path) -> None:
    """A push stuck on the network must not hold up preparing and committing other jobs."""
    from gitpub.git.locks import Locks

    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log)}
    job_id = blog.submit("k", article("Independent", "Prepared while delivery is stuck."))
    before = blog.remote_log()
    locks = Locks(blog.root / ".git" / "blogpub" / "locks")
    with locks.hold("delivery"):
        proc = subprocess.Popen(
            [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--until-idle"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        state = wait_for(
            lambda: (
                blog.job(job_id)["job"]["state"] in ("LOCAL_COMMITTED", "PUSHING", "PUBLISHED")
                and blog.job(job_id)["job"]["state"]
            ),
            "the job to be committed while delivery is held",
        )
        assert state != "PUBLISHED"  # delivery waits for its lock ...
        # ... and goes on waiting: a worker that ignored the lock would push within a second.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            assert blog.remote_log() == before and blog.commits_with_job(job_id) == 0
            assert blog.job(job_id)["job"]["state"] != "PUBLISHED"
            time.sleep(0.1)
        assert proc.poll() is None  # in a worker that is still running
    proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert_exactly_once(blog, [job_id], draft_log)


def _waiting(db: Path, job_id: str) -> tuple[str, int, str] | None:
    """(state, attempt, updated_at) of the job, straight from the store, read-only."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        row = conn.execute(
            "SELECT state, attempt, updated_at FROM blog_publication WHERE job_id = ?", (job_id,)
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return None if row is None else (row[0], row[1], row[2])


def test_retry_waits_hold_no_lock(tmp_path: Path) -> None:
    """While a job sits in RETRY_WAIT under a live worker, delivery and checkout are free.
    A sample counts only when the store shows the same wait before and after the probe, so
    nothing is counted while the worker is still starting or busy pushing."""
    from gitpub.git.locks import Locks

    blog, draft_log = counting_blog(tmp_path)
    env = {**os.environ, "DRAFT_LOG": str(draft_log)}
    job_id = blog.submit("k", article("Patient", "Waiting for the network."))
    away = blog.remote.with_name("away.git")
    blog.remote.rename(away)
    db = blog.root / ".git" / "blogpub" / "state.sqlite3"
    locks = Locks(blog.root / ".git" / "blogpub" / "locks")
    free = {"delivery": 0, "checkout": 0}
    held = {"delivery": 0, "checkout": 0}
    attempts_seen: set[int] = set()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--interval", "0.1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(attempts_seen) < 3:
            before = _waiting(db, job_id)
            if before is None or before[0] != "RETRY_WAIT":
                time.sleep(0.02)
                continue
            probed = {name: locks.is_free(name) for name in free}
            if _waiting(db, job_id) != before or proc.poll() is not None:
                continue  # the wait ended while we looked: the sample proves nothing
            attempts_seen.add(before[1])
            for name, is_free in probed.items():
                (free if is_free else held)[name] += 1
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        away.rename(blog.remote)
    assert len(attempts_seen) >= 3, attempts_seen  # it waited between several attempts
    assert held == {"delivery": 0, "checkout": 0}, (held, free)
    assert free["delivery"] >= 5 and free["checkout"] >= 5, free


@pytest.mark.both_stores
def test_budget_exhaustion_then_probe_publishes_without_new_draft(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    job_id = blog.submit("k", article("Exhausted", "Delivered by a probe, in the end."))
    away = blog.remote.with_name("away.git")
    blog.remote.rename(away)
    try:
        for _ in range(8):  # four attempts exhaust the test config's budget
            blog.ok("run", "--until-idle", env=env)
            job = blog.job(job_id)["job"]
            if job["state"] == "FAILED":
                break
            until_due(job)
        assert job["state"] == "FAILED"
        assert job["failure_code"] == "delivery_exhausted"
        assert job["attempt"] == job["max_attempts"] == 4
        # Probes while the remote is still away change nothing, and never reset the budget.
        until_due(job)
        blog.ok("run", "--until-idle", env=env)
        shown = blog.job(job_id)
        job = shown["job"]
        assert job["state"] == "FAILED" and job["attempt"] == 4
        assert [e["step"] for e in shown["events"]].count("probe") == 1  # it did probe
    finally:
        away.rename(blog.remote)
    until_due(job)  # the next probe
    blog.ok("run", "--until-idle", env=env)
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    published = next(e for e in shown["events"] if e["to_state"] == "PUBLISHED")
    assert published["from_state"] == "FAILED" and published["detail"]["probe"] is True
    assert_exactly_once(blog, [job_id], draft_log)


@pytest.mark.both_stores
def test_stolen_lease_stops_the_old_worker_without_side_effects(blog: Blog) -> None:
    from gitpub.context import open_context
    from gitpub.core.states import State
    from gitpub.store import jobs, leases
    from gitpub.store.jobs import LeaseLost

    job_id = blog.submit("k", article("Leased", "Two workers, one job."))
    with open_context(blog.root) as ctx:
        mine = leases.claim(ctx.store, job_id, "worker-a", 0.05)
        assert mine is not None
        assert leases.claim(ctx.store, job_id, "worker-b", 60) is None  # lost race: a no-op
        time.sleep(0.1)  # worker-a stalls past its lease
        theirs = leases.claim(ctx.store, job_id, "worker-b", 60)
        assert theirs is not None
        with pytest.raises(LeaseLost):
            jobs.transition(ctx.store, mine, State.PREPARING, "prepare:start")
        with pytest.raises(LeaseLost):
            leases.renew(ctx.store, mine, 60)
        assert jobs.require(ctx.store, job_id).state is State.RECEIVED
        # The old worker wrote nothing; the history holds only the takeover, by worker-b.
        history = jobs.events(ctx.store, job_id)
        assert [e["step"] for e in history] == ["submit", "lease:takeover"]
        assert history[1]["detail"]["previous_owner"] == "worker-a"
        assert history[1]["detail"]["why"] == "its lease expired"


@pytest.mark.both_stores
def test_a_checkpoint_asks_the_store_once_half_the_lease_is_spent(
    blog: Blog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody takes a lease before it runs out and only its holder writes the job, so while
    the job in hand shows more than half of its lease left a checkpoint sends nothing. Past
    that it asks the store: a lease still held is renewed; one another worker took once it
    had run out stops the old holder there, before its next step."""
    from gitpub.context import open_context
    from gitpub.core.clock import SKEW
    from gitpub.store import leases
    from gitpub.store.jobs import LeaseLost

    job_id = blog.submit("k", article("Leased", "Checked at each step."))
    with open_context(blog.root) as ctx:
        mine = leases.claim(ctx.store, job_id, "worker-a", 60)
        assert mine is not None
        sent = ctx.store.conn.statements
        assert leases.checkpoint(ctx.store, mine, 60) == mine
        assert ctx.store.conn.statements == sent

        monkeypatch.setenv(SKEW, "40")  # two thirds of the lease spent: renewed
        renewed = leases.checkpoint(ctx.store, mine, 60)
        assert ctx.store.conn.statements > sent
        assert renewed.lease_token == mine.lease_token
        assert renewed.lease_expires_at > mine.lease_expires_at

        monkeypatch.setenv(SKEW, "120")  # worker-a stalls past its lease; worker-b takes it
        assert leases.claim(ctx.store, job_id, "worker-b", 60) is not None
        with pytest.raises(LeaseLost):
            leases.checkpoint(ctx.store, renewed, 60)


@pytest.mark.both_stores
def test_a_scheduled_job_claimed_by_a_dead_worker_is_taken_at_once(blog: Blog) -> None:
    # A worker that claims a due scheduled job and dies before moving it (with several
    # prepares at once, a crash in one thread leaves the others' claims behind) must not
    # hold the job up until its lease runs out: its process is provably gone.
    import socket

    from gitpub.context import open_context
    from gitpub.store import jobs, leases

    job_id = blog.submit("k", article("Later", "Claimed by a worker that died."), "--at", "+1h")
    until_due({**blog.job(job_id)["job"], "next_retry_at": blog.job(job_id)["job"]["scheduled_at"]})
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with open_context(blog.root) as ctx:
        dead = f"{socket.gethostname()}:{gone.pid}"
        assert leases.claim(ctx.store, job_id, dead, 3600) is not None

    blog.ok("run", "--until-idle")

    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    with open_context(blog.root) as ctx:
        takeover = [e for e in jobs.events(ctx.store, job_id) if e["step"] == "lease:takeover"]
    assert [e["detail"]["why"] for e in takeover] == ["its process is gone"]


STEAL = """\
import sqlite3, sys
db, job_id, marker = sys.argv[1:]
conn = sqlite3.connect(db, timeout=30)
with conn:
    taken = conn.execute(
        "UPDATE blog_publication SET lease_owner = 'worker-b', lease_token = 'stolen',"
        " lease_expires_at = '2999-01-01T00:00:00.000000Z'"
        " WHERE job_id = ? AND state = 'PUSHING'",
        (job_id,),
    ).rowcount
if taken:
    open(marker, "w").close()
"""


def test_a_lease_taken_during_the_fetch_stops_the_push(tmp_path: Path) -> None:
    """Another worker takes the job while this one's fetch is on the network; the check
    before the push must notice, so the job is pushed by its new holder or not at all."""
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log)}
    job_id = blog.submit("k", article("Leased away", "Taken over mid-delivery."))
    res = blog.blogpub(
        "run", "--until-idle", env={**env, "GITPUB_CRASH_AT": "after_local_committed"}
    )
    assert res.returncode == 137
    db = blog.root / ".git" / "blogpub" / "state.sqlite3"
    (tmp_path / "steal.py").write_text(STEAL)
    stolen = tmp_path / "stolen"
    slow_network = tmp_path / "upload-pack.sh"
    slow_network.write_text(
        f'#!/bin/sh\n"{sys.executable}" "{tmp_path / "steal.py"}" "{db}" {job_id} "{stolen}"\n'
        'exec git upload-pack "$@"\n'
    )
    slow_network.chmod(0o755)
    blog.git("config", "remote.origin.uploadpack", str(slow_network))
    before = blog.remote_log()
    blog.ok("run", "--until-idle", env=env)
    assert stolen.exists()  # the lease was taken while the job was being delivered
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUSHING"
    assert blog.remote_log() == before and blog.commits_with_job(job_id) == 0
    assert len(pushes(blog)) == 0

    # The other worker dies; its lease runs out, and the job is delivered once.
    blog.git("config", "--unset", "remote.origin.uploadpack")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE blog_publication SET lease_expires_at = '2000-01-01T00:00:00.000000Z'")
    conn.close()
    blog.ok("run", "--until-idle", env=env)
    assert_exactly_once(blog, [job_id], draft_log)


def test_locks_taken_out_of_order_raise(tmp_path: Path) -> None:
    from gitpub.core.errors import LockOrderError
    from gitpub.git.locks import Locks

    locks = Locks(tmp_path / "locks")
    with locks.hold("delivery"), locks.hold("checkout"), locks.hold("repo"):
        pass
    with locks.hold("repo"), pytest.raises(LockOrderError), locks.hold("delivery"):
        pass
    with locks.hold("checkout"), pytest.raises(LockOrderError), locks.hold("checkout"):
        pass


@pytest.mark.both_stores
@pytest.mark.parametrize("point", [*POINTS[1:], "during_font_regeneration", "during_worktree_add"])
def test_crash_with_fonts_never_splits_article_and_subset(tmp_path: Path, point: str) -> None:
    """With a [fonts] table, a job commit carries the article and its rebuilt subset together,
    whatever instant the worker died at."""
    from testing.fontkit import cmap, tiny_blog

    script = tmp_path / "draft.py"
    script.write_text(DRAFT)
    blog = tiny_blog(tmp_path, f'\n[steps]\ndraft = ["{sys.executable}", "{script}"]\n')
    blog.trust()
    draft_log = tmp_path / "draft.log"
    env = {"DRAFT_LOG": str(draft_log)}
    text = article("新文章", "今天学习写字。")
    job_id = blog.submit("k", text)
    if point == "during_worktree_add":
        # A worktree is made when the remote moved after the job's commit: a job already on
        # the tip is pushed as it is.
        at = {**env, "GITPUB_CRASH_AT": "after_local_committed"}
        assert blog.blogpub("run", "--until-idle", env=at).returncode == 137
        blog.clone("person").push_by_hand(
            "content/posts/spring.mdx", article("春", "春眠。"), "spring"
        )
    res = blog.blogpub("run", "--until-idle", env={**env, "GITPUB_CRASH_AT": point})
    assert res.returncode == 137, res.stderr
    blog.ok("run", "--until-idle", env=env)

    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    files = blog.remote_git(
        "-c", "core.quotePath=false", "show", "--name-only", "--format=", job["remote_commit"]
    ).split()
    assert sorted(files) == sorted([job["target_path"], "public/fonts/blog.woff2"])
    font = subprocess.run(
        ["git", "show", f"{job['remote_commit']}:public/fonts/blog.woff2"],
        cwd=blog.remote,
        capture_output=True,
        check=True,
    ).stdout
    assert {ord(c) for c in "今天学习写字新文章"} <= cmap(font)
    assert drafts(draft_log) == Counter({job_id: 1})
