"""The shared store on a real PostgreSQL: what a node needs to be disposable, and what it must
never do with the store's URL. (The promise suites — state machine, leases, crash matrix,
idempotency — run on both stores through the `both_stores` marker; the fleet of workers
killed at random is tests/store/test_fleet.py.)"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from testing.fixtures import Blog, article, make_blog, wait_for
from testing.jobs import assert_exactly_once, counting_blog, distinct, draft_spool, drafts

from gitpub.context import open_context
from gitpub.store import leases
from gitpub.store.blogs import blog_identity, schema_name
from gitpub.sync import edits

LONG = 30.0  # seconds no step below comes near: a wait this long is a failure


@pytest.fixture
def shared(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GITPUB_STORE", pg_url)
    return pg_url


def _schemas(pg_url: str) -> set[str]:
    with psycopg.connect(pg_url) as conn:
        exists = conn.execute("SELECT to_regclass('public.gitpub_blog')").fetchone()
        if exists is None or exists[0] is None:
            return set()
        return {r[0] for r in conn.execute("SELECT schema_name FROM public.gitpub_blog")}


def test_a_draft_lands_in_the_store_when_its_worker_and_clone_are_gone(
    tmp_path: Path, shared: str
) -> None:
    """Node A's worker dies while the draft runs and its clone is deleted; the draft's own
    wrapper lands the answer in the store, and node B — a fresh clone that never saw the
    job — adopts it: the draft is paid once and the job published once."""
    blog, draft_log = counting_blog(tmp_path)
    env = {"DRAFT_LOG": str(draft_log), "DRAFT_SECONDS": "1.5"}
    job_id = blog.submit("landed", article("Landed", "An expensive draft."))
    node_a = blog.clone("node-a")
    node_a.trust()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitpub", "-C", str(node_a.root), "run", "--until-idle"],
        env={**os.environ, **env},
    )
    spool = draft_spool(node_a, job_id)
    wait_for(lambda: (spool / "pid").exists() and draft_log.exists(), "the draft to start")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    shutil.rmtree(node_a.root)  # the clone goes; the step, in its own session, runs on
    wait_for(lambda: _landed(shared, blog, job_id), "the draft's answer to land in the store")

    # Node B is another machine: a fresh clone, and a user cache without node A's spool.
    node_b = blog.clone("node-b")
    node_b.trust()
    elsewhere = {"DRAFT_LOG": str(draft_log), "XDG_CACHE_HOME": str(tmp_path / "b-cache")}
    node_b.ok("run", "--until-idle", env=elsewhere)
    assert_exactly_once(node_b, [job_id], draft_log)
    assert drafts(draft_log)[job_id] == 1


def _landed(pg_url: str, blog: Blog, job_id: str) -> bool:
    schema = schema_name(blog_identity(str(blog.remote), "main"))
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            f"SELECT answer IS NOT NULL FROM {schema}.blog_step_spool WHERE job_id = %s",
            (job_id,),
        ).fetchone()
    return bool(row and row[0])


def test_a_fresh_clone_delivers_a_job_another_node_committed(blog: Blog, shared: str) -> None:
    """The job's commit existed only in node A's clone; node B builds it again from the
    artifacts the store holds, and the remote gets it once."""
    node_a = blog.clone("node-a")
    job_id = node_a.committed_not_pushed("orphan", article("Orphan", "Committed, never pushed."))
    shutil.rmtree(node_a.root)
    node_b = blog.clone("node-b")
    node_b.ok("run", "--until-idle")
    job = node_b.job(job_id)["job"]
    assert job["state"] == "PUBLISHED"
    assert node_b.commits_with_job(job_id) == 1
    assert blog.remote_file(job["target_path"]).decode() == article(
        "Orphan", "Committed, never pushed."
    )


def test_every_node_sees_every_job_of_the_blog_and_only_its_blog(
    tmp_path: Path, shared: str
) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "other").mkdir()
    one = make_blog(tmp_path / "one")
    other = make_blog(tmp_path / "other")
    first = one.submit("k1", article("One", "First blog."))
    second = other.submit("k1", article("Other", "Second blog, same key."))
    assert first != second  # one key, two blogs: two jobs
    reader = one.clone("reader")
    assert [j["job_id"] for j in reader.status()] == [first]
    assert [j["job_id"] for j in other.status()] == [second]
    assert len(_schemas(shared)) >= 2


def test_claims_hand_out_growing_fencing_tokens(blog: Blog, shared: str) -> None:
    job_id = blog.submit("fenced", article("Fenced", "Tokens from a sequence."))
    with open_context(blog.root) as ctx:
        first = leases.claim(ctx.store, job_id, "worker-a", 0.0)
        assert first is not None and first.lease_token is not None
        # Expired at once (0 s): the next claim takes it over with a larger token.
        second = leases.claim(ctx.store, job_id, "worker-b", 60.0)
        assert second is not None and second.lease_token is not None
        assert int(second.lease_token) > int(first.lease_token)
        # The first holder is a zombie now: its renewal is refused, nothing changes.
        with pytest.raises(leases.LeaseLost):
            leases.renew(ctx.store, first, 60.0)


def test_the_store_url_and_its_password_are_never_written(
    blog: Blog, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A password in the URL (here one the server ignores: the test server trusts the
    socket) reaches no file, no row and no output."""
    secret = "Hunter2-pg-passw0rd"
    url = pg_url.replace("postgresql://", f"postgresql://postgres:{secret}@", 1)
    monkeypatch.setenv("GITPUB_STORE", url)
    job_id = blog.submit("pw", article("Password", "Where does the URL go?"))
    out = blog.ok("run", "--until-idle")
    shown = blog.read("show", job_id, "--json").stdout + blog.read("status").stdout
    assert secret not in out.stdout + out.stderr + shown
    for path in (blog.root / ".git").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    with psycopg.connect(pg_url) as conn:
        dump = conn.execute(
            "SELECT string_agg(t::text, '') FROM public.gitpub_blog AS t"
        ).fetchone()
    assert dump is not None and secret not in (dump[0] or "")


def test_the_user_config_puts_a_node_on_the_store_and_an_empty_variable_takes_it_off(
    blog: Blog, pg_url: str
) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "gitpub" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[store]\nurl = "{pg_url}"\n')
    blog.submit("user-config", article("User", "The node's own config."))
    assert not (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()
    assert schema_name(blog_identity(str(blog.remote), "main")) in _schemas(pg_url)
    source = blog.root.parent / "embedded.mdx"
    source.write_text(article("Embedded", "GITPUB_STORE empty: the embedded store."))
    blog.ok("submit", "--key", "embedded", "--source", str(source), env={"GITPUB_STORE": ""})
    assert (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()


def test_credentials_in_the_remote_url_do_not_split_a_blog() -> None:
    plain = blog_identity("https://example.invalid/blog.git/", "main")
    assert blog_identity("https://bot:t0ken@example.invalid/blog.git", "main") == plain
    assert blog_identity("https://example.invalid/blog.git", "drafts") != plain


def test_a_hand_edit_is_delivered_by_its_own_clone_not_judged_by_another(
    blog: Blog, shared: str
) -> None:
    """A person's uncommitted fix in node A's checkout is A's to deliver: node B's worker,
    on the same store, neither sees it (its `status` lists no hand edit) nor settles it as
    gone; A's next run delivers it."""
    post = blog.root / "content" / "posts" / "hello.mdx"
    node_b = blog.clone("node-b")
    post.write_text(post.read_text() + "\nA person's fix, not yet committed.\n")
    with open_context(blog.root) as ctx:
        assert edits.scan(ctx) == 1  # registered, not yet delivered
    node_b.ok("run", "--until-idle")
    assert "hand edits" not in node_b.read("status").stdout
    assert "hand edits: 1 waiting" in blog.read("status").stdout  # still A's, still pending
    blog.ok("run", "--until-idle")
    assert b"A person's fix" in blog.remote_file("content/posts/hello.mdx")
    assert "hand edits" not in blog.read("status").stdout


def test_a_shared_store_that_lost_its_rows_is_rebuilt_from_a_node(blog: Blog, shared: str) -> None:
    """The blog's schema is gone (a database restored from before it, a new server): the
    node that worked the jobs puts them back from its copies of their folders, its job refs
    and the remote's trailers. The published one stays published (never pushed again), the
    one committed but not pushed is delivered once, and a client's retry finds its job."""
    text = article("Kept", "Published before the loss.")
    published = blog.submit("kept", text)
    blog.ok("run", "--until-idle")
    waiting = blog.committed_not_pushed("waiting", article("Waiting", "Committed, not pushed."))
    schema = schema_name(blog_identity(str(blog.remote), "main"))
    with psycopg.connect(shared, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.execute("DELETE FROM public.gitpub_blog WHERE schema_name = %s", (schema,))
    assert blog.status() == []

    out = blog.ok("reconcile", "--rebuild").stdout
    assert f"{published} rebuilt PUBLISHED" in out
    assert f"{waiting} rebuilt LOCAL_COMMITTED" in out
    assert blog.job(published)["job"]["state"] == "PUBLISHED"
    assert blog.job(waiting)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(published) == 1
    assert blog.commits_with_job(waiting) == 1
    assert blog.submit("kept", text) == published  # the same key is the same job again


HOLD_AND_DIE = """
import os, sys
from pathlib import Path
from gitpub.context import open_context
with open_context(Path(sys.argv[1])) as ctx:
    ctx.store.lock_seconds = 3600.0
    held = ctx.store.fleet("delivery")  # kept: a collected generator would release it
    held.__enter__()
    os._exit(0)  # dies holding it: no release, as a SIGKILL leaves it
"""


def test_a_push_lock_whose_holder_died_is_taken_at_once(blog: Blog, shared: str) -> None:
    """A worker killed while it pushed leaves the fleet's push lock behind; the next one on
    this host takes it over at once instead of waiting out the lock's hour."""
    subprocess.run([sys.executable, "-c", HOLD_AND_DIE, str(blog.root)], check=True)
    got = threading.Event()

    def take() -> None:
        with open_context(blog.root) as ctx, ctx.store.fleet("delivery"):
            got.set()

    worker = threading.Thread(target=take, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert got.is_set()


def test_a_late_lander_never_answers_a_newer_run_of_its_step(blog: Blog, shared: str) -> None:
    """A worker takes a step's answer as soon as the command wrote its exit status, while
    the wrapper goes on to land it: that landing may come after the step was begun anew.
    It names the run it belongs to, so it answers that run or nothing."""
    from gitpub.store import spools

    job_id = blog.submit("late", article("Late", "A lander that comes late."))
    with open_context(blog.root) as ctx:
        held = leases.claim(ctx.store, job_id, "worker-a", 60)
        assert held is not None
        first = spools.begin(ctx.store, job_id, "draft", "worker-a", held.lease_token)
        second = spools.begin(ctx.store, job_id, "draft", "worker-a", held.lease_token)
        assert second != first
        spools.land(ctx.store, job_id, "draft", first, "0", b'{"answer": "old"}')
        run = spools.get(ctx.store, job_id, "draft")
        assert run is not None and run.landed is None  # the first run's answer is not this one's
        spools.land(ctx.store, job_id, "draft", second, "0", b'{"answer": "new"}')
        run = spools.get(ctx.store, job_id, "draft")
        assert run is not None and run.landed == b'{"answer": "new"}'


def test_a_step_is_begun_only_under_the_jobs_lease(blog: Blog, shared: str) -> None:
    """A worker whose lease was taken, however short the moment since its last checkpoint,
    begins no run of a step: its record is written only under the job's current lease, so
    the new holder finds no run of the old one to wait for and none is started twice."""
    from gitpub.store import spools
    from gitpub.store.jobs import LeaseLost

    job_id = blog.submit("fenced", article("Fenced", "A step begun under a lost lease."))
    with open_context(blog.root) as ctx:
        old = leases.claim(ctx.store, job_id, "worker-a", -1)  # its lease runs out at once
        assert old is not None
        new = leases.claim(ctx.store, job_id, "worker-b", 60)
        assert new is not None and new.lease_token != old.lease_token
        with pytest.raises(LeaseLost):
            spools.begin(ctx.store, job_id, "draft", "worker-a", old.lease_token)
        assert spools.get(ctx.store, job_id, "draft") is None
        spools.begin(ctx.store, job_id, "draft", "worker-b", new.lease_token)
        run = spools.get(ctx.store, job_id, "draft")
        assert run is not None and run.owner == "worker-b"


def test_a_worker_stopped_before_its_step_record_commits_keeps_the_job(
    blog: Blog, shared: str
) -> None:
    """A worker stopped after writing a step's run but before committing it (a stall at a
    random instant) still holds the job: no other worker takes it over meanwhile, finds no
    run yet and begins a second one, which would replace the first once it commits and pay
    for the step twice. Once it commits, the next holder finds its run and waits for it."""
    from gitpub.store import spools

    job_id = blog.submit("stalled", article("Stalled", "A record written, not yet committed."))
    reached, go = threading.Event(), threading.Event()
    begun: list[str] = []
    with open_context(blog.root) as node_a, open_context(blog.root) as node_b:
        old = leases.claim(node_a.store, job_id, "worker-a", -1)  # its lease runs out at once
        assert old is not None
        plain = node_a.store.transaction

        @contextlib.contextmanager
        def stopped_before_commit() -> Iterator[Any]:
            with plain() as conn:
                yield conn
                reached.set()  # the statements are sent; the COMMIT is not
                go.wait(LONG)

        node_a.store.transaction = stopped_before_commit  # type: ignore[method-assign]
        stalled = threading.Thread(
            target=lambda: begun.append(
                spools.begin(node_a.store, job_id, "draft", "worker-a", old.lease_token)
            ),
            daemon=True,
        )
        stalled.start()
        try:
            assert reached.wait(LONG)
            assert leases.claim(node_b.store, job_id, "worker-b", 60) is None
        finally:
            go.set()
            stalled.join(LONG)
        assert len(begun) == 1
        taken = leases.claim(node_b.store, job_id, "worker-b", 60)
        assert taken is not None and taken.lease_token != old.lease_token
        run = spools.get(node_b.store, job_id, "draft")
        assert run is not None and run.owner == "worker-a" and run.landed is None


def test_a_worker_leaves_its_committed_jobs_to_the_node_delivering(blog: Blog, shared: str) -> None:
    """While another node holds the delivery lock, a worker commits what it prepared and
    leaves it, leases given up, instead of waiting its turn to push: nothing of its reaches
    the remote. A node that then finds the lock free delivers those jobs, which it never
    prepared, each exactly once with the submitted bytes."""
    texts = {f"left-{i}": article(f"Left {i}", distinct(i)) for i in range(3)}
    ids = {blog.submit(key, text): text for key, text in texts.items()}
    with open_context(blog.root) as ctx, ctx.store.fleet("delivery"):
        node_b = blog.clone("node-b")
        node_b.ok("run", "--until-idle")
        left = {job_id: node_b.job(job_id)["job"] for job_id in ids}
        assert {j["state"] for j in left.values()} == {"LOCAL_COMMITTED"}
        assert all(blog.commits_with_job(job_id) == 0 for job_id in ids)
        assert all(leases.claim(ctx.store, job_id, "probe", 0.0) for job_id in ids)  # free
    shutil.rmtree(node_b.root)  # its commits are gone with it
    node_c = blog.clone("node-c")
    node_c.ok("run", "--until-idle")
    for job_id, text in ids.items():
        job = node_c.job(job_id)["job"]
        assert job["state"] == "PUBLISHED"
        assert blog.commits_with_job(job_id) == 1
        assert blog.remote_file(job["target_path"]).decode() == text


def test_a_push_a_dead_node_landed_then_a_person_took_down_is_not_pushed_again(
    blog: Blog, shared: str
) -> None:
    """Node A's push lands and A dies before recording it; a person force-pushes the article
    away before anyone fetches. Node B, a fresh clone, never saw the commit (its tracking ref
    has no history of it): only the job's landmark on the remote, created by that same atomic
    push, says it landed. B records the job published and withdrawn and pushes nothing; the
    landmark is gone from the remote once recorded (model seed 22, two nodes)."""
    node_a = blog.clone("node-a")
    job_id = node_a.submit("post", article("Post", "Pushed by a node that died."))
    crashed = node_a.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_push_before_db"})
    assert crashed.returncode == 137, crashed.stderr
    landmark = f"refs/blog-landed/{job_id}"
    assert blog.remote_git("for-each-ref", "--format=%(refname)", landmark).split() == [landmark]
    person = blog.clone("person")
    person.git("reset", "--quiet", "--hard", "HEAD~1")
    person.git("push", "--quiet", "--force", "origin", "HEAD:main")
    shutil.rmtree(node_a.root)
    before = blog.remote_log()

    node_b = blog.clone("node-b")
    node_b.ok("run", "--until-idle")
    shown = node_b.job(job_id)
    assert (shown["job"]["state"], shown["job"]["withdrawn"]) == ("PUBLISHED", True), shown
    assert blog.remote_log() == before  # never pushed back
    assert (
        shown["job"]["target_path"]
        not in blog.remote_git("ls-tree", "-r", "--name-only", "main").split()
    )
    assert blog.remote_git("for-each-ref", "refs/blog-landed/") == ""


def test_two_blogs_whose_remotes_are_both_spelled_relative_are_two_blogs(
    tmp_path: Path, shared: str
) -> None:
    """Each clone names its remote `../remote.git`, beside itself: two repositories, so two
    blogs of the store — neither sees, claims or publishes the other's jobs."""
    blogs = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        blog = make_blog(tmp_path / name)
        blog.git("remote", "set-url", "origin", "../remote.git")
        blogs.append(blog)
    mine = blogs[0].submit("mine", article("Mine", "Only the first blog's."))
    listed = blogs[1].ok("status", "--json", "--all").stdout
    assert mine not in listed
    blogs[1].ok("run", "--until-idle")
    assert blogs[0].job(mine)["job"]["state"] == "RECEIVED"
    blogs[0].ok("run", "--until-idle")
    assert blogs[0].job(mine)["job"]["state"] == "PUBLISHED"
    assert blogs[0].commits_with_job(mine) == 1 and blogs[1].commits_with_job(mine) == 0
