"""Operator exits: retry reuses the draft, and never republishes what already arrived."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, article, make_blog, until_due
from testing.jobs import DRAFT, drafts

GATE = """\
import json, os, sys
req = json.load(sys.stdin)
closed = os.path.exists(os.environ["GATE_FLAG"])
print(json.dumps({"ok": not closed, "reason": "an editor has not approved it yet"}))
"""


def test_retry_after_review_reuses_the_draft(tmp_path: Path) -> None:
    (tmp_path / "draft.py").write_text(DRAFT)
    (tmp_path / "gate.py").write_text(GATE)
    py = sys.executable
    cfg = CONFIG + (
        f'\n[steps]\ndraft = ["{py}", "{tmp_path / "draft.py"}"]\n'
        f'review = [["{py}", "{tmp_path / "gate.py"}"]]\n'
    )
    blog = make_blog(tmp_path, cfg)
    blog.trust()
    flag = tmp_path / "closed"
    flag.write_text("")
    env = {"DRAFT_LOG": str(tmp_path / "draft.log"), "GATE_FLAG": str(flag)}
    job_id = blog.submit("k", article("Gated", "Waits for an editor."))
    blog.ok("run", "--until-idle", env=env)
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    assert "not approved" in shown["events"][-1]["detail"]["reason"]

    flag.unlink()
    assert blog.ok("retry", job_id).returncode == 0
    assert blog.job(job_id)["job"]["state"] == "RECEIVED"
    blog.ok("run", "--until-idle", env=env)
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    assert drafts(tmp_path / "draft.log") == {job_id: 1}
    assert blog.commits_with_job(job_id) == 1
    assert [e["step"] for e in shown["events"]].count("operator:retry") == 1


def test_retry_refuses_jobs_that_are_not_stopped(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    job_id = blog.submit("k", article("Fresh", "Just submitted."))
    res = blog.blogpub("retry", job_id)
    assert res.returncode == 1
    assert "applies to REVIEW, CONFLICT or FAILED" in res.stderr


def test_retry_of_a_failed_job_that_did_arrive_is_refused(tmp_path: Path) -> None:
    blog = make_blog(tmp_path)
    job_id = blog.submit("k", article("Arrived", "The push went through; every answer was lost."))
    # Push accepted, then the worker died; the remote goes away before anyone confirms it.
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_push_before_db"})
    assert res.returncode == 137
    away = blog.remote.with_name("away.git")
    blog.remote.rename(away)
    try:
        for _ in range(12):
            blog.ok("run", "--until-idle")
            job = blog.job(job_id)["job"]
            if job["state"] == "FAILED":
                break
            until_due(job)
        assert blog.job(job_id)["job"]["state"] == "FAILED"
    finally:
        away.rename(blog.remote)
    res = blog.blogpub("retry", job_id)
    assert res.returncode == 1 and "already on the remote" in res.stderr
    assert blog.commits_with_job(job_id) == 1


BAD_JUDGES = {
    "exit 3": "import sys\nsys.stderr.write('model quota exhausted\\n')\nsys.exit(3)\n",
    "not JSON": "print('I think this one is new')\n",
    "wrong type": "import json\nprint(json.dumps({'decision': 7}))\n",
}
JUDGE_LOG = """\
import json, os, sys
req = json.load(sys.stdin)
with open(os.environ["JUDGE_LOG"], "a") as fh:
    fh.write(os.path.basename(__file__) + "\\n")
"""


@pytest.mark.parametrize("fault", sorted(BAD_JUDGES))
def test_retry_runs_a_failed_judge_again_with_the_fixed_config(tmp_path: Path, fault: str) -> None:
    (tmp_path / "draft.py").write_text(DRAFT)
    (tmp_path / "bad_judge.py").write_text(JUDGE_LOG + BAD_JUDGES[fault])
    good = "print(json.dumps({'decision': 'NEW'}))\n"
    (tmp_path / "good_judge.py").write_text(JUDGE_LOG + good)
    py = sys.executable
    steps = f'\n[steps]\ndraft = ["{py}", "{tmp_path / "draft.py"}"]\njudge = ["{py}", "%s"]\n'
    blog = make_blog(tmp_path, CONFIG + steps % (tmp_path / "bad_judge.py"))
    blog.trust()
    log = tmp_path / "judge.log"
    env = {"DRAFT_LOG": str(tmp_path / "draft.log"), "JUDGE_LOG": str(log)}
    job_id = blog.submit("k", article("Judged", "A judge that fails first, then works."))
    blog.ok("run", "--until-idle", env=env)
    assert blog.job(job_id)["job"]["state"] == "REVIEW"
    assert log.read_text().split() == ["bad_judge.py"]

    # The operator fixes steps.judge and retries: the judge is asked again, not the spool.
    (blog.root / ".blogpub.toml").write_text(CONFIG + steps % (tmp_path / "good_judge.py"))
    blog.trust()  # a changed command is allowed again by the operator who changed it
    blog.ok("retry", job_id)
    blog.ok("run", "--until-idle", env=env)
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED", shown["events"][-1]
    assert log.read_text().split() == ["bad_judge.py", "good_judge.py"]
    assert drafts(tmp_path / "draft.log") == {job_id: 1}  # the draft stays paid for
    assert blog.commits_with_job(job_id) == 1


def test_retry_runs_a_failed_draft_again(tmp_path: Path) -> None:
    draft = tmp_path / "draft.py"
    draft.write_text(DRAFT.replace("print(json.dumps", "sys.exit(5)\nprint(json.dumps"))
    py = sys.executable
    blog = make_blog(tmp_path, CONFIG + f'\n[steps]\ndraft = ["{py}", "{draft}"]\n')
    blog.trust()
    env = {"DRAFT_LOG": str(tmp_path / "draft.log")}
    job_id = blog.submit("k", article("Drafted", "A draft that fails first."))
    blog.ok("run", "--until-idle", env=env)
    assert blog.job(job_id)["job"]["state"] == "REVIEW"
    draft.write_text(DRAFT)
    blog.ok("retry", job_id)
    blog.ok("run", "--until-idle", env=env)
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert drafts(tmp_path / "draft.log") == {job_id: 2}
