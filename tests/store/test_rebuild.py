"""A lost job database is detected by every command and rebuilt from the job folders,
`refs/blog-jobs` and the remote's trailers: each job published once, no draft paid twice."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article

DRAFT = """\
import json, os, sys
request = json.load(sys.stdin)
with open(os.environ["DRAFT_LOG"], "a") as fh:
    fh.write(request["job_id"] + "\\n")
if "FAIL-DRAFT" in request["source"]:
    sys.exit(3)
print(json.dumps({"text": request["source"]}))
"""

LOST = "git blogpub: job database lost; run `git blogpub reconcile --rebuild` ("


def _counting_drafts(blog: Blog) -> Path:
    script = blog.root.parent / "draft.py"
    script.write_text(DRAFT)
    cfg = CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{script}"]\n'
    (blog.root / ".blogpub.toml").write_text(cfg)
    blog.git("commit", "--quiet", "-am", "a counting draft step")
    blog.git("push", "--quiet", "origin", "main")
    blog.trust()
    log = blog.root.parent / "drafts.log"
    os.environ["DRAFT_LOG"] = str(log)  # the hermetic fixture restores the environment
    return log


def _drafts(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _db(blog: Blog) -> Path:
    return blog.root / ".git" / "blogpub" / "state.sqlite3"


def _jobs_in_every_stage(blog: Blog) -> dict[str, str]:
    """One job per stage a lost database can catch a job in; their ids by stage."""
    ids = {"published": blog.submit("a", article("Alpha", "Delivered long ago.", slug="alpha"))}
    blog.ok("run", "--until-idle")
    ids["abandoned"] = blog.submit("e", article("Echo", "FAIL-DRAFT: a person gave it up."))
    blog.ok("relay", ids["abandoned"])
    assert blog.job(ids["abandoned"])["job"]["state"] == "REVIEW"
    blog.ok("resolve", ids["abandoned"], "--abandon")
    ids["committed"] = blog.submit("b", article("Bravo", "Committed, never pushed.", slug="b"))
    crashed = blog.blogpub(
        "relay", ids["committed"], env={"GITPUB_CRASH_AT": "after_local_committed"}
    )
    assert crashed.returncode == 137
    ids["drafted"] = blog.submit("c", article("Charlie", "Drafted, then killed.", slug="c"))
    crashed = blog.blogpub("relay", ids["drafted"], env={"GITPUB_CRASH_AT": "after_draft"})
    assert crashed.returncode == 137
    ids["received"] = blog.submit("d", article("Delta", "Only submitted.", slug="delta"))
    states = {stage: blog.job(i)["job"]["state"] for stage, i in ids.items()}
    assert states == {
        "published": "PUBLISHED",
        "abandoned": "SKIPPED",
        "committed": "LOCAL_COMMITTED",
        "drafted": "PREPARING",
        "received": "RECEIVED",
    }
    return ids


def _lose(db: Path, how: str) -> None:
    if how == "truncated":
        with db.open("r+b") as fh:
            fh.truncate(0)
    elif how == "cut in half":
        with db.open("r+b") as fh:
            fh.truncate(db.stat().st_size // 2)
    elif how == "overwritten":
        db.write_bytes(b"\0" * 8192)
    else:
        db.unlink()


def test_truncated_database_is_detected_and_rebuilt_each_job_published_once(blog: Blog) -> None:
    how = "truncated"
    log = _counting_drafts(blog)
    ids = _jobs_in_every_stage(blog)
    published_as = blog.job(ids["published"])["job"]["remote_commit"]
    drafted = sorted(i for stage, i in ids.items() if stage != "received")
    assert sorted(_drafts(log)) == drafted
    remote_before = len(blog.remote_log())

    _lose(_db(blog), how)

    # Every command refuses, in one line naming the fix, and writes nothing.
    src = blog.root.parent / "again.mdx"
    src.write_text(article("Alpha", "Delivered long ago.", slug="alpha"))
    for args in (
        ["status"],
        ["status", "--json"],
        ["show", ids["received"]],
        ["submit", "--key", "a", "--source", str(src)],
        ["run", "--until-idle"],
        ["relay"],
        ["gc"],
        ["reconcile"],
    ):
        res = blog.blogpub(*args)
        assert res.returncode == 1, (args, res)
        assert res.stderr.startswith(LOST) and res.stderr.count("\n") == 1, (args, res.stderr)
    doctor = blog.blogpub("doctor", "--json")
    assert doctor.returncode == 1
    (finding,) = [f for f in doctor.json()["findings"] if f["check"] == "database"]
    assert finding["status"] == "problem" and "job database lost" in finding["message"]
    assert "git blogpub reconcile --rebuild" in finding["hint"]
    assert len(blog.remote_log()) == remote_before
    assert len(list((blog.root / ".git" / "blogpub" / "jobs").iterdir())) == 5

    rebuilt = blog.ok("reconcile", "--rebuild")
    assert "rebuilt: 5 job(s)" in rebuilt.stdout
    blog.ok("run", "--until-idle")

    states = {stage: blog.job(i)["job"]["state"] for stage, i in ids.items()}
    assert states == {
        "published": "PUBLISHED",
        "abandoned": "SKIPPED",
        "committed": "PUBLISHED",
        "drafted": "PUBLISHED",
        "received": "PUBLISHED",
    }
    for stage in ("published", "committed", "drafted", "received"):
        assert blog.commits_with_job(ids[stage]) == 1, stage
    assert blog.commits_with_job(ids["abandoned"]) == 0
    assert len(blog.remote_log()) == remote_before + 3
    assert blog.job(ids["published"])["job"]["remote_commit"] == published_as
    # No checkpointed draft was paid again: only the job that never got one drafted now.
    assert sorted(_drafts(log)) == sorted(ids.values())
    for job_id in ids.values():
        (event,) = [e for e in blog.job(job_id)["events"] if e["step"] == "rebuilt"]
        assert event["from_state"] is None and "job.json" in event["detail"]["from"]
    # The lost database is kept aside, never deleted.
    assert [p.name[:19] for p in _db(blog).parent.glob("state.sqlite3.lost-*")] == [
        "state.sqlite3.lost-"
    ]
    # Keys survive as their hashes: the same key and source is still the same job.
    again = blog.ok("submit", "--key", "a", "--source", str(src), "--json").json()
    assert again == {"job_id": ids["published"], "state": "PUBLISHED", "created": False}


@pytest.mark.parametrize("how", ["cut in half", "overwritten", "deleted"])
def test_every_way_of_losing_the_database_is_caught(blog: Blog, how: str) -> None:
    first = blog.submit("one", article("One", "Published before the loss.", slug="one"))
    blog.ok("run", "--until-idle")
    second = blog.submit("two", article("Two", "Submitted before the loss.", slug="two"))

    _lose(_db(blog), how)

    res = blog.blogpub("status")
    assert res.returncode == 1 and res.stderr.startswith(LOST), res.stderr
    assert blog.blogpub("doctor").returncode == 1
    blog.ok("reconcile", "--rebuild")
    blog.ok("run", "--until-idle")
    assert [blog.job(i)["job"]["state"] for i in (first, second)] == ["PUBLISHED"] * 2
    assert blog.commits_with_job(first) == blog.commits_with_job(second) == 1


def test_rebuild_refuses_a_usable_database(blog: Blog) -> None:
    blog.submit("a", article("Alpha", "Still known."))
    res = blog.blogpub("reconcile", "--rebuild")
    assert res.returncode == 1
    assert "the job database is usable and knows 1 job(s); nothing to rebuild" in res.stderr
    assert not list(_db(blog).parent.glob("state.sqlite3.lost-*"))


def test_first_submit_is_not_taken_for_a_loss(blog: Blog) -> None:
    """The first job's folder is written after the new database: a command looking between
    the two sees a database younger than the folder, not a lost one."""
    from gitpub.store import lost
    from gitpub.store.db import SqliteStore

    state = _db(blog).parent
    SqliteStore(_db(blog)).close()
    folder = state / "jobs" / "0b0c1e9e-3f7a-4d8c-9a61-0e7f6b2d4c11"
    folder.mkdir(parents=True)
    (folder / "source.txt").write_text("in progress")
    (folder / "job.json").write_text(json.dumps({"created_at": "2999-01-01T00:00:00.000000Z"}))
    assert lost.why_lost(state, sqlite3.connect(_db(blog))) is None
    (folder / "job.json").write_text(json.dumps({"created_at": "2000-01-01T00:00:00.000000Z"}))
    assert "knows no job" in str(lost.why_lost(state, sqlite3.connect(_db(blog))))
