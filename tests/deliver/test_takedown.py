"""Takedowns stay down. A person resets the remote one commit back and force-pushes (taking a
published article down); after a plain `git fetch` on the writer node, the next `run` used to
push the job commit again as an "unpushed hand commit". Now the job is shown withdrawn and the
article stays off the remote until a person retries it."""

from __future__ import annotations

import json
from pathlib import Path

from testing.fixtures import Blog, article

from gitpub.context import open_context
from gitpub.deliver import batch, withdrawn


def take_down(blog: Blog) -> None:
    person = blog.clone("person")
    person.git("reset", "--quiet", "--hard", "HEAD~1")
    person.git("push", "--quiet", "--force", "origin", "HEAD:main")


def test_a_takedown_is_never_pushed_back(blog: Blog) -> None:
    job_id = blog.submit("doomed", article("Doomed", "Published, then taken down."))
    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED" and job["withdrawn"] is False
    path = job["target_path"]

    take_down(blog)
    blog.git("fetch", "--quiet", "origin")
    before = blog.remote_log()
    for _ in range(2):
        blog.ok("run", "--until-idle")
    assert blog.remote_log() == before  # nothing pushed back
    assert path not in blog.remote_git("ls-tree", "-r", "--name-only", "main").splitlines()

    shown = blog.job(job_id)["job"]
    assert shown["state"] == "PUBLISHED" and shown["withdrawn"] is True
    assert "withdrawn" in blog.ok("status", "--all").stdout
    doctor = blog.blogpub("doctor", "--json").json()
    assert any(f["check"] == "withdrawn" and job_id[:8] in f["message"] for f in doctor["findings"])

    # A person decides to publish it again: retry.
    blog.ok("retry", job_id)
    blog.ok("run", "--until-idle")
    again = blog.job(job_id)["job"]
    assert again["state"] == "PUBLISHED" and again["withdrawn"] is False
    assert path in blog.remote_git("ls-tree", "-r", "--name-only", "main").splitlines()


def test_a_published_job_that_is_still_there_cannot_be_retried(blog: Blog) -> None:
    job_id = blog.submit("kept", article("Kept", "Still on the remote."))
    blog.ok("run", "--until-idle")
    res = blog.blogpub("retry", job_id)
    assert res.returncode == 1 and "PUBLISHED" in res.stderr


def test_a_worker_that_keeps_running_notices_a_deletion_after_its_first_look(blog: Blog) -> None:
    """A running worker looks at every publication once, then only at the paths the commits
    since its last look deleted: a deletion commit after that first look is still seen."""
    job_id = blog.submit("removed", article("Removed", "Published, then git rm'd by a person."))
    blog.ok("run", "--until-idle")
    path = blog.job(job_id)["job"]["target_path"]
    with open_context(blog.root) as ctx:
        assert withdrawn.notice(ctx) == []  # the first look: every publication is there
        person = blog.clone("person")
        person.git("rm", "--quiet", path)
        person.git("commit", "--quiet", "-m", "Take the post down")
        person.git("push", "--quiet", "origin", "HEAD:main")
        batch.fetch_repairing(ctx)
        marked = withdrawn.notice(ctx)
    assert [j.job_id for j in marked] == [job_id]
    assert blog.job(job_id)["job"]["withdrawn"] is True


def _on_the_remote(blog: Blog, path: str) -> bool:
    return bool(blog.remote_git("ls-tree", "--name-only", "main", "--", path))


def test_a_revision_queued_before_a_takedown_never_brings_it_back(blog: Blog) -> None:
    """An agent's revision of a post, queued before a person took the post down, waits in
    REVIEW instead of publishing the post again; the person's `retry` publishes it."""
    first = blog.submit("post", article("Post", "The first version, soon taken down."))
    blog.ok("run", "--until-idle")
    path = blog.job(first)["job"]["target_path"]
    revision = article("Post", "A revision, queued for tomorrow.")
    later = blog.submit("post-2", revision, "--target", path, "--at", "+1h")
    blog.clone("person").remove_by_hand(path, "Take the post down")
    blog.ok("run", "--until-idle")  # the takedown noticed; the revision not due yet
    assert blog.job(first)["job"]["withdrawn"] is True

    blog.ok("run", "--until-idle", env={"GITPUB_CLOCK_SKEW": "7200"})
    shown = blog.job(later)
    assert shown["job"]["state"] == "REVIEW", shown["events"]
    assert shown["job"]["failure_code"] == "taken_down"
    assert first in shown["events"][-1]["detail"]["reason"]
    assert not _on_the_remote(blog, path)

    blog.ok("retry", later)
    blog.ok("run", "--until-idle", env={"GITPUB_CLOCK_SKEW": "7200"})
    assert blog.job(later)["job"]["state"] == "PUBLISHED"
    assert b"A revision" in blog.remote_file(path)


def test_a_revision_prepared_on_a_base_from_before_the_takedown_does_not_publish(
    blog: Blog,
) -> None:
    """The takedown lands on the remote while the revision is prepared on an older base: the
    rebase meets the deletion, and the post stays down."""
    first = blog.submit("post", article("Post", "The first version, soon taken down."))
    blog.ok("run", "--until-idle")
    path = blog.job(first)["job"]["target_path"]
    later = blog.submit("post-2", article("Post", "A revision, prepared late."), "--target", path)
    blog.clone("person").remove_by_hand(path, "Take the post down")
    blog.ok("run", "--until-idle")
    assert blog.job(later)["job"]["state"] in ("REVIEW", "CONFLICT"), blog.job(later)["events"]
    assert not _on_the_remote(blog, path)


def _fetches_of_a_pass(blog: Blog, trace: Path) -> int:
    """The `git fetch` commands one `run --until-idle` starts (git's own trace)."""
    trace.unlink(missing_ok=True)
    blog.ok("run", "--until-idle", env={"GIT_TRACE2_EVENT": str(trace)})
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return sum(1 for e in events if e.get("event") == "cmd_name" and e.get("name") == "fetch")


def test_an_idle_worker_fetches_for_takedowns_and_a_delivering_one_not_again(
    blog: Blog, tmp_path: Path
) -> None:
    """With nothing due a pass still fetches once, so a takedown is noticed; a pass that
    delivered fetched already (before stacking, and to confirm): no third fetch."""
    trace = tmp_path / "trace2.json"
    blog.submit("post", article("Post", "Delivered, then the worker idles."))
    assert _fetches_of_a_pass(blog, trace) == 2
    assert _fetches_of_a_pass(blog, trace) == 1


def test_a_push_never_recorded_then_taken_down_is_not_pushed_again(blog: Blog) -> None:
    """The worker dies right after its push landed, before it recorded it; a person then
    force-pushes that commit away. The next worker must not take the missing commit for a
    lost push: the remote held it once (its tracking ref remembers), so it was taken down.
    The remote here cannot push atomically, so no landmark says so (a fleet's other node,
    which has no such history, is tests/store/test_shared_store.py's)."""
    blog.remote_git("config", "receive.advertiseAtomic", "false")
    job_id = blog.submit("post", article("Post", "Pushed, never recorded, then taken down."))
    crashed = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_push_before_db"})
    assert crashed.returncode == 137, crashed.stderr
    assert blog.job(job_id)["job"]["state"] == "PUSHING"
    take_down(blog)
    before = blog.remote_log()

    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)["job"]
    assert (shown["state"], shown["withdrawn"]) == ("PUBLISHED", True), blog.job(job_id)
    assert blog.remote_log() == before  # never pushed back
    assert not _on_the_remote(blog, shown["target_path"])


def test_a_push_found_taken_down_at_delivery_is_withdrawn_in_the_same_record(blog: Blog) -> None:
    """The same job, settled by a process whose takedown look had already seen the tip (it
    looks again only once the tip moves, and a worker's recovery thread settles such a job
    while the first pass runs): the delivery that finds it on the remote once, taken down
    since, marks it withdrawn itself (model seed 22, two nodes of a shared store)."""
    from gitpub.ops import worker

    job_id = blog.submit("post", article("Post", "Pushed, never recorded, then taken down."))
    crashed = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_push_before_db"})
    assert crashed.returncode == 137, crashed.stderr
    take_down(blog)
    with open_context(blog.root) as ctx:
        batch.fetch_repairing(ctx)
        assert withdrawn.notice(ctx) == []  # nothing PUBLISHED yet; this tip is now seen
        worker.run_until_idle(ctx)
        assert withdrawn.notice(ctx) == []  # the tip did not move: no second look
    shown = blog.job(job_id)
    assert (shown["job"]["state"], shown["job"]["withdrawn"]) == ("PUBLISHED", True), shown
    steps = [e["step"] for e in shown["events"]]
    assert steps[-2:] == ["published", "withdrawn"]
    assert not _on_the_remote(blog, shown["job"]["target_path"])


def test_a_push_found_on_the_remote_after_a_deletion_commit_is_withdrawn_once_recorded(
    blog: Blog,
) -> None:
    """The same job taken down by a deletion commit instead: its commit is still in the
    branch's history, so the delivery records it PUBLISHED ("found on remote"), at a tip the
    process's takedown look had already seen. The next look takes in the jobs published since
    the last one, and marks it withdrawn (promise model, seed 247, two nodes)."""
    from gitpub.ops import worker

    job_id = blog.submit("post", article("Post", "Pushed, never recorded, then deleted."))
    crashed = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_push_before_db"})
    assert crashed.returncode == 137, crashed.stderr
    path = str(blog.job(job_id)["job"]["target_path"])
    blog.clone("person").remove_by_hand(path, "Take the post down")
    with open_context(blog.root) as ctx:
        batch.fetch_repairing(ctx)
        assert withdrawn.notice(ctx) == []  # nothing PUBLISHED yet; this tip is now seen
        worker.run_until_idle(ctx)
        assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
        assert [j.job_id for j in withdrawn.notice(ctx)] == [job_id]  # the tip did not move
        assert withdrawn.notice(ctx) == []  # and once is enough
    shown = blog.job(job_id)
    assert shown["job"]["withdrawn"] is True, shown
    assert [e["step"] for e in shown["events"]][-2:] == ["published", "withdrawn"]
    assert not _on_the_remote(blog, path)


def _committed_then_published(blog: Blog, path: str) -> tuple[str, str]:
    """A job prepared while its article did not exist yet (a NEW article at `--target`) and
    committed, not delivered; then another job that publishes that article. Their ids."""
    from gitpub.ops import worker

    early = blog.submit("early", article("Queued", "Committed, delivered late."), "--target", path)
    with open_context(blog.root) as ctx:
        worker.run_until_idle(ctx, only=(early,), deliver=False)
    assert blog.job(early)["job"]["state"] == "LOCAL_COMMITTED"
    later = blog.submit("later", article("Queued", "Published first."), "--target", path)
    with open_context(blog.root) as ctx:
        worker.run_until_idle(ctx, only=(later,))
    assert blog.job(later)["job"]["state"] == "PUBLISHED"
    return early, later


def test_a_job_committed_before_a_takedown_is_held_back_at_delivery(blog: Blog) -> None:
    """The first job's article is published by the second, and a person takes it down.
    Delivering the first job would bring the post back: it waits in REVIEW instead."""
    path = "content/posts/queued.mdx"
    early, _ = _committed_then_published(blog, path)
    blog.clone("person").remove_by_hand(path, "Take the post down")
    before = blog.remote_log()

    blog.ok("run", "--until-idle")
    shown = blog.job(early)
    assert (shown["job"]["state"], shown["job"]["failure_code"]) == ("REVIEW", "taken_down")
    assert blog.remote_log() == before and not _on_the_remote(blog, path)


def test_a_running_worker_holds_back_a_job_for_an_article_forced_away_since_its_last_pass(
    blog: Blog,
) -> None:
    """As above, but a person forces the publication away (a reset and a force-push: the
    tip's history no longer has it) and a long-running worker's next pass delivers before it
    looks for takedowns (last in a pass): nothing it noticed says the article was taken
    down, but its remote-tracking ref held the publication and lost it. The job waits in
    REVIEW instead of bringing the article back."""
    from gitpub.ops.runner import Runner

    path = "content/posts/forced.mdx"
    early, _ = _committed_then_published(blog, path)
    take_down(blog)
    before = blog.remote_log()
    with open_context(blog.root) as ctx:
        Runner(blog.root, concurrency=1).one_pass(ctx)
    shown = blog.job(early)
    assert (shown["job"]["state"], shown["job"]["failure_code"]) == ("REVIEW", "taken_down")
    assert blog.remote_log() == before and not _on_the_remote(blog, path)
