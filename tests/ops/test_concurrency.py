"""`run --concurrency N`: prepares overlap, each job under its own lease, and delivery still
stacks every ready job into one push; `[steps] concurrency` caps the external steps running
at once. The draft step observes the overlap itself: it logs its start and end to one file
opened for appending, so the file's order is the order in which they happened."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, make_blog, wait_for
from testing.jobs import PUSH_LOG_HOOK, assert_exactly_once, counting_blog, distinct, drafts, pushes

from gitpub import Publisher
from gitpub.core.errors import InputError

STEP = """\
import json, os, sys, time
req = json.load(sys.stdin)
log, barrier = sys.argv[1], int(sys.argv[2])
patience, seconds = float(sys.argv[3]), float(sys.argv[4])

def mark(sign):
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, f"{sign} {req['job_id']}\\n".encode())
    os.close(fd)

def started():
    with open(log) as fh:
        return sum(1 for line in fh if line.startswith("+"))

mark("+")
# Wait until `barrier` drafts have started, this one counted (or `patience` runs out): when
# drafts can overlap, the first one is still running when the second starts, however slow
# the machine; when they cannot, only the first waits, and it waits `patience`.
deadline = time.monotonic() + patience
while started() < barrier and time.monotonic() < deadline:
    time.sleep(0.02)
time.sleep(seconds + (1.5 if "slow-draft" in req["source"] else 0.0))
mark("-")
print(json.dumps({"text": req["source"]}))
"""


def _blog(tmp_path: Path, *, barrier: int, patience: float, extra: str = "") -> tuple[Blog, Path]:
    script = tmp_path / "draft.py"
    script.write_text(STEP)
    log = tmp_path / "drafts.log"
    argv = [sys.executable, str(script), str(log), str(barrier), str(patience), "0.2"]
    blog = make_blog(tmp_path, CONFIG + f"\n[steps]\ndraft = {json.dumps(argv)}\n{extra}")
    blog.trust()
    hook = blog.remote / "hooks" / "update"
    hook.write_text(PUSH_LOG_HOOK)
    hook.chmod(0o755)
    return blog, log


def _most_at_once(log: Path) -> int:
    running = most = 0
    for line in log.read_text().splitlines():
        running += 1 if line.startswith("+") else -1
        most = max(most, running)
    return most


def _published_once_in_one_push(blog: Blog, ids: list[str], log: Path) -> None:
    for job_id in ids:
        job = blog.job(job_id)["job"]
        assert job["state"] == "PUBLISHED", blog.job(job_id)["events"]
        assert blog.commits_with_job(job_id) == 1
    assert len(pushes(blog)) == 1
    started = Counter(line.split()[1] for line in log.read_text().splitlines() if line[0] == "+")
    assert started == Counter(dict.fromkeys(ids, 1))  # each draft paid for once


def test_drafts_overlap_up_to_the_concurrency_and_go_out_in_one_push(tmp_path: Path) -> None:
    blog, log = _blog(tmp_path, barrier=2, patience=60)
    ids = [blog.submit(f"k{i}", article(f"Overlap {i}", distinct(i))) for i in range(6)]
    blog.ok("run", "--until-idle", "--concurrency", "3")
    most = _most_at_once(log)
    assert 2 <= most <= 3, log.read_text()
    _published_once_in_one_push(blog, ids, log)


def test_steps_concurrency_one_caps_overlap_at_one(tmp_path: Path) -> None:
    # The first draft waits 2 s for a second one to start next to it: one would, were the
    # cap not kept (three jobs are prepared at once).
    blog, log = _blog(tmp_path, barrier=2, patience=2, extra="concurrency = 1\n")
    ids = [blog.submit(f"k{i}", article(f"Capped {i}", distinct(i))) for i in range(3)]
    blog.ok("run", "--until-idle", "--concurrency", "3")
    assert _most_at_once(log) == 1, log.read_text()
    _published_once_in_one_push(blog, ids, log)


def test_a_job_is_judged_against_the_article_of_one_prepared_beside_it(tmp_path: Path) -> None:
    # The same article under two titles (two paths): both drafts run at once and the
    # first one's ends last, yet the second job is judged once the first is prepared,
    # against its article, as one by one. (The judge reads no front matter: the title.)
    blog, log = _blog(tmp_path, barrier=2, patience=60)
    body = distinct(7)
    first = blog.submit("one", article("Twice at once slow-draft", body))
    second = blog.submit("two", article("Twice again", body))
    blog.ok("run", "--until-idle", "--concurrency", "3")
    assert _most_at_once(log) == 2, log.read_text()
    published = blog.job(first)["job"]
    assert published["state"] == "PUBLISHED"
    twin = blog.job(second)
    assert twin["job"]["state"] in ("SKIPPED", "REVIEW"), twin["events"]
    assert published["target_path"] in json.dumps(twin["events"][-1]["detail"])
    assert blog.commits_with_job(second) == 0


def _set_lease(blog: Blog, job_id: str, owner: str, token: str, expires: str) -> None:
    """What another worker's claim (or the end of its lease) writes in the job's row."""
    with sqlite3.connect(blog.root / ".git" / "blogpub" / "state.sqlite3", timeout=30) as db:
        db.execute(
            "UPDATE blog_publication SET lease_owner = ?, lease_token = ?, lease_expires_at = ?"
            " WHERE job_id = ?",
            (owner, token, expires, job_id),
        )


def test_a_lost_lease_stops_only_its_own_job(tmp_path: Path) -> None:
    blog, draft_log = counting_blog(tmp_path)
    release = tmp_path / "release-the-drafts"
    ids = [
        blog.submit(f"k{i}", article(f"Lease {i}", distinct(i) + f" waitfor:{release}"))
        for i in range(3)
    ]
    env = {**os.environ, "DRAFT_LOG": str(draft_log)}
    argv = [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--until-idle"]
    worker = subprocess.Popen(
        [*argv, "--concurrency", "3"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    wait_for(lambda: len(drafts(draft_log)) == 3, "three drafts running at once")
    stolen = ids[1]
    _set_lease(blog, stolen, "another-node:1", "taken", "9999-01-01T00:00:00.000000Z")
    release.write_text("")
    _, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    # The two others went on and out, together; the stolen one is its new holder's.
    for job_id in (ids[0], ids[2]):
        assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert len(pushes(blog)) == 1
    assert blog.job(stolen)["job"]["state"] == "PREPARING"
    assert blog.commits_with_job(stolen) == 0
    # Its holder never comes back: once the lease ran out, the next worker finishes it with
    # the answer the draft left in its spool, never drafting it twice.
    _set_lease(blog, stolen, "another-node:1", "taken", "2000-01-01T00:00:00.000000Z")
    blog.ok("run", "--until-idle", env={"DRAFT_LOG": str(draft_log)})
    assert_exactly_once(blog, ids, draft_log, batches=2)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("concurrency = 0", "steps.concurrency"),
        ("concurrency = -2", "steps.concurrency"),
        ('concurrency = "4"', "steps.concurrency"),
        ("concurrency = true", "steps.concurrency"),
        ("concurrency = 2.5", "steps.concurrency"),
        ('rate = "fast"', "steps.rate"),
        ('rate = "0/min"', "steps.rate"),
        ('rate = "5/day"', "steps.rate"),
        ('rate = "1.5/s"', "steps.rate"),
        ("rate = 60", "steps.rate"),
        ('rate = ""', "steps.rate"),
    ],
)
def test_a_bad_step_limit_is_refused_with_one_line(tmp_path: Path, line: str, key: str) -> None:
    blog = make_blog(tmp_path, CONFIG + f"\n[steps]\n{line}\n")
    res = blog.blogpub("run", "--until-idle")
    assert res.returncode == 1, res
    assert res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert key in res.stderr and "Traceback" not in res.stderr
    assert not (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()  # nothing written


def test_a_concurrency_below_one_is_a_usage_error(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    res = blog.blogpub("run", "--until-idle", "--concurrency", "0")
    assert res.returncode == 2, res
    with pytest.raises(InputError, match="concurrency"):
        Publisher(blog.root).run_until_idle(concurrency=0)


def test_the_crew_threads_share_what_the_judge_keeps(tmp_path: Path) -> None:
    # A thread's Context is a sibling of the worker's: its own store connection, the same
    # memos. A judge on one thread then meets the 3-grams of the articles the crew's other
    # threads judged instead of reading each again (300 jobs: twice the time without it).
    from gitpub.context import memo, open_context, sibling
    from gitpub.prepare.builtins import Grams

    blog = make_blog(tmp_path)
    with open_context(blog.root) as ctx:
        grams = memo(ctx.memos, Grams)
        grams.of("an article one thread judged")
        with sibling(ctx) as twin:
            assert twin.store is not ctx.store
            assert memo(twin.memos, Grams).holds("an article one thread judged")
