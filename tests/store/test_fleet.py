"""The shared store's promise to a fleet of disposable workers (SPEC §13), with real processes.

Every node here is on one real PostgreSQL (`pg_url`). Workers run in fresh clones that hold no
`.git/blogpub`, die by SIGKILL, stall past their lease, and are replaced by workers in new
clones; what a user would check afterwards is on the remote: one commit per job, each article
with the submitted bytes, a clean `git fsck`, and each draft paid for once."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from testing.fixtures import (
    CONFIG,
    SOAK_ROUNDS,
    SOAK_SEEDS,
    Blog,
    article,
    git,
    make_blog,
    wait_for,
)
from testing.jobs import distinct

from gitpub.core.states import TERMINAL
from gitpub.store.blogs import blog_identity, schema_name

# States a job stays in until a person acts: once every job is in one, waiting changes nothing.
SETTLED = {s.value for s in TERMINAL}
LEASE = 2.5  # seconds; a worker stopped for longer than this has lost its jobs
FLEET_CONFIG = CONFIG.replace("[retry]\n", f"[retry]\nlease_seconds = {LEASE}\n")

# The draft step: one line per call (the job id) in a counter file outside every clone, a
# random little think, then the source back unchanged, so the published bytes are the ones
# submitted.
DRAFT = """\
import json, os, random, sys, time
req = json.load(sys.stdin)
with open(os.environ["FLEET_DRAFTS"], "a") as fh:
    fh.write(req["job_id"] + "\\n")
time.sleep(random.uniform(0.1, 0.5))
print(json.dumps({"text": req["source"]}))
"""


def fleet_blog(base: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Blog, Path]:
    """A blog whose every node (the processes this test starts, and its in-process reads) is
    on the shared store, with the counting draft step in the node's user config, so no clone
    needs to trust it; the counter file."""
    script = base / "draft.py"
    script.write_text(DRAFT)
    counter = base / "drafts.log"
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "gitpub" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(f'[steps]\ndraft = ["{sys.executable}", "{script}"]\n')
    monkeypatch.setenv("GITPUB_STORE", pg_url)
    monkeypatch.setenv("FLEET_DRAFTS", str(counter))
    return make_blog(base, FLEET_CONFIG), counter


def fresh_clone(blog: Blog, name: str) -> Blog:
    clone = blog.clone(name)
    assert not (clone.root / ".git" / "blogpub").exists()
    return clone


def drafts(counter: Path) -> Counter[str]:
    return Counter(counter.read_text().split()) if counter.exists() else Counter()


def every_job(blog: Blog) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = blog.read("status", "--json", "--all").json()["jobs"]
    return jobs


@dataclass
class Worker:
    """`git blogpub run` in a clone of its own, the leader of its own process group."""

    clone: Blog
    proc: subprocess.Popen[bytes]

    @classmethod
    def start(cls, blog: Blog, name: str) -> Worker:
        clone = fresh_clone(blog, name)
        log = (blog.root.parent / f"{name}.log").open("wb")
        argv = [sys.executable, "-m", "gitpub", "-C", str(clone.root), "run", "--interval", "0.2"]
        proc = subprocess.Popen(
            argv,
            env={**os.environ, "GITPUB_NODE": name},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return cls(clone, proc)

    def signal(self, sig: signal.Signals) -> None:
        # The group: the worker and the git it runs. Steps run in sessions of their own.
        os.killpg(self.proc.pid, sig)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.signal(signal.SIGKILL)
        self.proc.wait()

    def discard(self) -> None:
        self.kill()
        shutil.rmtree(self.clone.root)


def lease_holders(pg_url: str, blog: Blog) -> dict[int, list[str]]:
    """Worker pid → the jobs whose lease it holds now, straight from the shared store."""
    schema = schema_name(blog_identity(str(blog.remote), "main"))
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            f"SELECT lease_owner, job_id FROM {schema}.blog_publication"
            " WHERE lease_token IS NOT NULL"
        ).fetchall()
    held: dict[int, list[str]] = {}
    for owner, job_id in rows:
        held.setdefault(int(owner.rpartition(":")[2]), []).append(job_id)
    return held


def stall_a_lease_holder(
    pg_url: str, blog: Blog, fleet: list[Worker], rng: random.Random
) -> list[str]:
    """Stop a worker that holds leases for twice the lease, then let it go on (a zombie, if
    anything in it still believed its lease); the jobs it held."""
    pids = {w.proc.pid: w for w in fleet}
    held: dict[int, list[str]] = wait_for(
        lambda: {p: j for p, j in lease_holders(pg_url, blog).items() if p in pids},
        "a worker holding a lease",
    )
    pid = rng.choice(sorted(held))
    pids[pid].signal(signal.SIGSTOP)
    time.sleep(2 * LEASE)
    # Stopped on until another worker took one of its jobs: only then is it a zombie.
    wait_for(lambda: taken_over(blog, held[pid]), "a takeover of the stopped worker's jobs")
    pids[pid].signal(signal.SIGCONT)
    return held[pid]


def taken_over(blog: Blog, job_ids: list[str]) -> list[dict[str, Any]]:
    """The events of these jobs that took a lease after it expired."""
    return [
        e
        for job_id in job_ids
        for e in blog.job(job_id)["events"]
        if e["step"] == "lease:takeover" and e["detail"]["why"] == "its lease expired"
    ]


def lost_mid_draft(shown: dict[str, Any]) -> int:
    """How many times the job was taken from a worker before any draft answer was recorded."""
    steps = [e["step"] for e in shown["events"]]
    drafted = steps.index("step:draft") if "step:draft" in steps else len(steps)
    return steps[:drafted].count("lease:takeover")


@pytest.mark.soak
def test_fleet_of_disposable_workers_publishes_each_job_once(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(SOAK_SEEDS[0])
    blog, counter = fleet_blog(tmp_path, pg_url, monkeypatch)
    texts = {f"fleet-{i}": article(f"Fleet {i}", distinct(i), slug=f"fleet-{i}") for i in range(40)}
    ids = {key: blog.submit(key, text) for key, text in texts.items()}
    assert len(set(ids.values())) == 40

    born = 0

    def spawn() -> Worker:
        nonlocal born
        born += 1
        return Worker.start(blog, f"worker-{born}")

    fleet = [spawn() for _ in range(3)]
    stalled: list[str] = []  # the jobs a stopped worker held when it was stopped
    try:
        deadline = time.monotonic() + 900
        # First, while most jobs are still in flight (a fleet publishes these 40 in a few
        # seconds: a stall after a random wait or two could find nothing left to hold).
        stalled = stall_a_lease_holder(pg_url, blog, fleet, rng)
        for _ in range(SOAK_ROUNDS):
            time.sleep(rng.uniform(0.3, 2.0))
            states = Counter(j["state"] for j in every_job(blog))
            if states["PUBLISHED"] == 40:
                break
            i = rng.randrange(len(fleet))
            fleet[i].discard()
            fleet[i] = spawn()
        while True:
            states = Counter(j["state"] for j in every_job(blog))
            if set(states) <= SETTLED:
                break
            assert time.monotonic() < deadline, f"not all published in time: {dict(states)}"
            time.sleep(0.5)
        unpublished = [j for j in every_job(blog) if j["state"] != "PUBLISHED"]
        assert not unpublished, f"not all published: {dict(states)}; " + "; ".join(
            f"{j['idempotency_key']} {j['state']} {j['failure_code']}" for j in unpublished
        )
    finally:
        for worker in fleet:
            worker.kill()
    assert stalled, "no worker was ever stopped"
    assert taken_over(blog, stalled)  # and its lease stayed taken

    auditor = fresh_clone(blog, "auditor")
    listed = {j["job_id"]: j for j in every_job(auditor)}
    assert sorted(listed) == sorted(ids.values())
    assert {j["state"] for j in listed.values()} == {"PUBLISHED"}
    for key, job_id in ids.items():
        assert blog.commits_with_job(job_id) == 1, key
        assert blog.remote_file(listed[job_id]["target_path"]) == texts[key].encode()
    assert len(blog.remote_log()) == 1 + 40  # the scaffold and one commit per job
    posts = blog.remote_git("ls-tree", "-r", "--name-only", "main", "content/posts").split()
    assert sorted(posts) == sorted(
        ["content/posts/hello.mdx", *(j["target_path"] for j in listed.values())]
    )
    git(blog.remote, "fsck", "--strict")  # fails on any error
    # No draft paid twice: a step still running when its worker lost the job (it died, or
    # stalled past its lease) lands its answer in the store, and the next worker adopts it.
    paid = drafts(counter)
    assert sorted(paid) == sorted(ids.values())
    extra = {j: (n, lost_mid_draft(blog.job(j))) for j, n in paid.items() if n > 1}
    assert not extra, extra


def test_the_same_key_from_two_nodes_is_one_job(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    blog, counter = fleet_blog(tmp_path, pg_url, monkeypatch)
    nodes = {name: fresh_clone(blog, name) for name in ("node-a", "node-b")}
    text = article("Twice", distinct(1))
    source = tmp_path / "twice.mdx"
    source.write_text(text)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gitpub", "-C", str(node.root), "submit", "--key", "twice"]
            + ["--source", str(source), "--json"],
            env={**os.environ, "GITPUB_NODE": name},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, node in nodes.items()
    ]
    answers = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], answers
    job_ids = {json.loads(out)["job_id"] for out, _ in answers}
    assert len(job_ids) == 1
    (job_id,) = job_ids
    for node in nodes.values():
        assert [j["job_id"] for j in every_job(node)] == [job_id]
    nodes["node-b"].ok("run", "--until-idle", env={"GITPUB_NODE": "node-b"})
    assert nodes["node-a"].job(job_id)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_id) == 1
    assert len(blog.remote_log()) == 2
    assert drafts(counter) == Counter({job_id: 1})


def test_a_store_table_in_the_shared_config_never_moves_jobs(tmp_path: Path, pg_url: str) -> None:
    blog = make_blog(tmp_path, CONFIG + f'\n[store]\nurl = "{pg_url}"\n')
    job_id = blog.submit("local", article("Local", distinct(2)))
    blog.ok("run", "--until-idle")
    assert (blog.root / ".git" / "blogpub" / "state.sqlite3").is_file()
    assert [(j["job_id"], j["state"]) for j in every_job(blog)] == [(job_id, "PUBLISHED")]
    assert blog.commits_with_job(job_id) == 1
    with psycopg.connect(pg_url) as conn:
        registry = conn.execute("SELECT to_regclass('public.gitpub_blog')").fetchone()
        blogs = (
            conn.execute(
                "SELECT blog FROM public.gitpub_blog WHERE blog LIKE %s", (f"%{tmp_path}%",)
            ).fetchall()
            if registry and registry[0]
            else []
        )
        schema = schema_name(blog_identity(str(blog.remote), "main"))
        schemas = conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (schema,)
        ).fetchall()
    assert blogs == [] and schemas == []
    said = blog.blogpub("doctor").stdout.splitlines()
    warned = [line for line in said if line.split()[:2] == ["warning", "config"]]
    assert any("[store]" in line and "ignored" in line for line in warned), said


@pytest.mark.parametrize("point", ["after_draft", "after_local_committed"])
def test_a_worker_in_a_fresh_clone_takes_over_a_job_another_began(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    blog, counter = fleet_blog(tmp_path, pg_url, monkeypatch)
    text = article("Handed on", distinct(3))
    node_a = fresh_clone(blog, "node-a")
    job_id = node_a.submit("handed-on", text)
    crashed = node_a.blogpub(
        "run", "--until-idle", env={"GITPUB_NODE": "node-a", "GITPUB_CRASH_AT": point}
    )
    assert crashed.returncode == 137, crashed.stderr
    assert drafts(counter) == Counter({job_id: 1})  # the draft was paid before node A died
    shutil.rmtree(node_a.root)

    node_b = fresh_clone(blog, "node-b")
    node_b.ok("run", "--until-idle", env={"GITPUB_NODE": "node-b"})
    job = node_b.job(job_id)["job"]
    assert job["state"] == "PUBLISHED", node_b.job(job_id)["events"]
    assert blog.commits_with_job(job_id) == 1
    assert len(blog.remote_log()) == 2
    assert blog.remote_file(job["target_path"]) == text.encode()
    assert drafts(counter) == Counter({job_id: 1})  # node B adopted the paid draft
    git(blog.remote, "fsck", "--strict")


def test_a_worker_whose_clone_is_behind_takes_over_a_job_another_began(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base a job was prepared on is the remote tip another clone fetched: a worker whose
    clone was made before it must still commit the job (fetching what it lacks)."""
    blog, counter = fleet_blog(tmp_path, pg_url, monkeypatch)
    behind = fresh_clone(blog, "node-b")
    blog.push_by_hand("content/posts/later.mdx", article("Later", distinct(4)), "A later post")
    node_a = fresh_clone(blog, "node-a")
    text = article("Handed back", distinct(5))
    job_id = node_a.submit("handed-back", text)
    crashed = node_a.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "before_local_commit"})
    assert crashed.returncode == 137, crashed.stderr
    behind.ok("run", "--until-idle")
    job = behind.job(job_id)["job"]
    assert job["state"] == "PUBLISHED", behind.job(job_id)["events"]
    assert blog.commits_with_job(job_id) == 1
    assert blog.remote_file(job["target_path"]) == text.encode()
    assert drafts(counter) == Counter({job_id: 1})


def test_a_publication_newer_than_a_clones_last_fetch_is_no_takedown(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker reads from the shared store jobs other nodes published after its own clone
    last fetched: its takedown look must not take their absence from its stale tip for a
    deletion. A real deletion is still noticed from that clone."""
    from gitpub.context import open_context
    from gitpub.deliver import withdrawn

    blog, _ = fleet_blog(tmp_path, pg_url, monkeypatch)
    behind = fresh_clone(blog, "node-b")
    node_a = fresh_clone(blog, "node-a")
    kept = node_a.submit("kept", article("Kept", distinct(6)))
    gone = node_a.submit("gone", article("Gone", distinct(7)))
    node_a.ok("run", "--until-idle")
    assert {node_a.job(j)["job"]["state"] for j in (kept, gone)} == {"PUBLISHED"}

    # Node B's takedown look in the window between its last fetch and another node's push.
    with open_context(behind.root) as ctx:
        assert withdrawn.notice(ctx) == []
    assert [behind.job(j)["job"]["withdrawn"] for j in (kept, gone)] == [False, False]

    path = node_a.job(gone)["job"]["target_path"]
    blog.clone("person").remove_by_hand(path, "Take one post down")
    assert f"job {gone}: withdrawn" in behind.ok("run", "--until-idle").stdout
    assert [behind.job(j)["job"]["withdrawn"] for j in (kept, gone)] == [False, True]
