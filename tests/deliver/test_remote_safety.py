"""Sharing the remote: delta recheck, CAS on updates, explicit CONFLICT, operator exits."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from testing import secret_corpus
from testing.fixtures import CONFIG, Blog, article, git, wait_for

JUDGE = """\
import json, os, subprocess, sys, time
request = json.load(sys.stdin)
log = os.environ["JUDGE_LOG"]
with open(log, "a") as fh:
    fh.write(json.dumps(request) + "\\n")
calls = sum(1 for _ in open(log))
hook = os.environ.get("JUDGE_FIRST_CALL_RUNS")
if hook and calls == 1:
    subprocess.run(hook, shell=True, check=True)
time.sleep(float(os.environ.get("JUDGE_SLEEP", "0")))
mode = os.environ.get("JUDGE_ANSWER", "KEEP")
if mode == "exit":
    sys.exit(3)
if mode == "sleep":
    time.sleep(30)
if mode == "garbage":
    print("certainly! here is my answer")
    sys.exit(0)
print(json.dumps({"decision": mode, "reason": "test judge"}))
"""


def _with_recheck(blog: Blog, timeout: float = 20) -> Path:
    """Configure an external recheck judge that logs every request."""
    script = blog.root.parent / "judge.py"
    script.write_text(JUDGE)
    cfg = CONFIG + f'\n[steps]\nrecheck = ["{sys.executable}", "{script}"]\ntimeout = {timeout}\n'
    (blog.root / ".blogpub.toml").write_text(cfg)
    blog.git("commit", "--quiet", "-am", "configure the recheck judge")
    blog.git("push", "--quiet", "origin", "main")
    blog.trust()
    return blog.root.parent / "judge.log"


def _requests(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_recheck_judges_each_new_remote_delta_once(blog: Blog) -> None:
    log = _with_recheck(blog)
    a = blog.clone("node-a")
    helper = blog.clone("helper")
    env = {"JUDGE_LOG": str(log)}
    job_b = blog.committed_not_pushed(
        "b", article("Garden", "Tomatoes need sun and patience."), env
    )

    # Node A publishes X through gitpub after B's snapshot.
    a_src = a.root.parent / "x.mdx"
    a_src.write_text(article("Rust", "Borrowing rules explained with diagrams.", slug="x"))
    a.ok("submit", "--key", "x", "--source", str(a_src), env={"GITPUB_NODE": "node-a"})
    a.ok("run", "--until-idle", env={"GITPUB_NODE": "node-a"})

    # While B's first recheck runs, someone pushes Y: B must look at Y, and only at Y, next.
    push_y = (
        f"cd {helper.root} && git pull -q --rebase origin main && "
        "printf -- '---\\ntitle: Y\\n---\\nSourdough starters.\\n' > content/posts/y.mdx && "
        "git add content/posts/y.mdx && git commit -qm y && git push -q origin main"
    )
    blog.ok("run", "--until-idle", env={**env, "JUDGE_FIRST_CALL_RUNS": push_y})

    calls = _requests(log)
    assert len(calls) == 2, calls
    assert [d["path"] for d in calls[0]["delta"]] == ["content/posts/x.mdx"]  # type: ignore[index]
    assert [d["path"] for d in calls[1]["delta"]] == ["content/posts/y.mdx"]  # type: ignore[index]
    assert all(c["mode"] == "recheck" for c in calls)
    job = blog.job(job_b)["job"]
    assert job["state"] == "PUBLISHED"
    assert blog.commits_with_job(job_b) == 1
    assert blog.remote_file("content/posts/y.mdx").startswith(b"---\ntitle: Y")


def test_a_delta_already_judged_is_not_judged_again_after_a_rewrite(blog: Blog) -> None:
    """While the judge says KEEP, someone rewrites the remote's history (same articles, new
    commits): the job's last look is no longer an ancestor, but the delta's fingerprint is
    the one already judged, so it is pushed without asking again."""
    log = _with_recheck(blog)
    other = blog.clone("other")
    env = {"JUDGE_LOG": str(log)}
    job_id = blog.committed_not_pushed("b", article("Garden", "Tomatoes need sun."), env)
    other.push_by_hand("content/posts/x.mdx", article("Rust", "Borrowing rules."), "x")
    rewrite = (
        f"cd {other.root} && git commit -q --amend -m 'x, reworded' && "
        "git push -q --force origin main"
    )
    blog.ok("run", "--until-idle", env={**env, "JUDGE_FIRST_CALL_RUNS": rewrite})
    calls = _requests(log)
    assert len(calls) == 1, calls
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED" and blog.commits_with_job(job_id) == 1
    assert blog.remote_git("log", "-1", "--format=%s", "main~1") == "x, reworded"


def test_remote_changes_without_articles_need_no_judge(blog: Blog) -> None:
    log = _with_recheck(blog)
    other = blog.clone("other")
    env = {"JUDGE_LOG": str(log)}
    job_id = blog.committed_not_pushed("b", article("Quiet", "Nothing to compare with."), env)
    other.push_by_hand("public/robots.txt", "User-agent: *\n", "robots")
    blog.ok("run", "--until-idle", env=env)
    assert _requests(log) == []
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"


def test_recheck_skip_discards_the_job_commit(blog: Blog) -> None:
    log = _with_recheck(blog)
    other = blog.clone("other")
    env = {"JUDGE_LOG": str(log), "JUDGE_ANSWER": "SKIP"}
    job_id = blog.committed_not_pushed("b", article("Dup", "Same news, told twice."), env)
    other.push_by_hand("content/posts/dup2.mdx", article("Dup", "Same news, told twice."), "dup")
    before = blog.remote_log()
    blog.ok("run", "--until-idle", env=env)
    job = blog.job(job_id)["job"]
    assert job["state"] == "SKIPPED"
    assert blog.remote_log() == before
    assert (
        blog.git("rev-parse", "--verify", "--quiet", f"refs/blog-jobs/{job_id}", check=False) == ""
    )
    assert f"blogpub/job/{job_id}" not in blog.git("branch", "--list")


@pytest.mark.parametrize("answer", ["UPDATE", "NEW", "garbage", "exit", "sleep"])
def test_recheck_outside_contract_is_review(blog: Blog, answer: str) -> None:
    log = _with_recheck(blog, timeout=1.5)
    other = blog.clone("other")
    env = {"JUDGE_LOG": str(log), "JUDGE_ANSWER": answer}
    job_id = blog.committed_not_pushed("b", article("Mine", "A careful article."), env)
    other.push_by_hand("content/posts/theirs.mdx", article("Theirs", "Another one."), "theirs")
    before = blog.remote_log()
    blog.ok("run", "--until-idle", env=env)
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    reason = next(e for e in shown["events"] if e["step"] == "recheck:undecided")["detail"][
        "reason"
    ]
    expected = {
        "UPDATE": "'UPDATE'",
        "NEW": "'NEW'",
        "garbage": "not JSON",
        "exit": "exited 3",
        "sleep": "timed out",
    }[answer]
    assert expected in reason
    assert blog.remote_log() == before


def test_update_of_a_target_edited_after_the_snapshot_is_conflict(blog: Blog) -> None:
    a = blog.clone("node-a")
    job_id = blog.submit(
        "b",
        article("Hello", "The first post, rewritten by the agent."),
        "--target",
        "content/posts/hello.mdx",
    )
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    edited = article("Hello", "The first post, with a typo fixed by a person.")
    a.push_by_hand("content/posts/hello.mdx", edited, "fix a typo")

    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "CONFLICT"
    assert shown["job"]["failure_code"] == "target_changed"
    conflict = next(e for e in shown["events"] if e["to_state"] == "CONFLICT")
    assert conflict["detail"]["paths"] == ["content/posts/hello.mdx"]
    assert blog.remote_file("content/posts/hello.mdx") == edited.encode()


def test_disjoint_articles_from_two_nodes_both_publish_linearly(blog: Blog) -> None:
    a = blog.clone("node-a")
    job_b = blog.submit("b", article("Birds", "Swallows return in April."))
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    src = a.root.parent / "a.mdx"
    src.write_text(article("Trains", "Night trains across the Alps."))
    job_a = a.ok(
        "submit", "--key", "a", "--source", str(src), "--json", env={"GITPUB_NODE": "node-a"}
    ).json()["job_id"]
    a.ok("run", "--until-idle", env={"GITPUB_NODE": "node-a"})
    blog.ok("run", "--until-idle")

    assert a.job(job_a)["job"]["state"] == "PUBLISHED"
    assert blog.job(job_b)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/Birds.mdx").startswith(b"---\ntitle: Birds")
    assert blog.remote_file("content/posts/Trains.mdx").startswith(b"---\ntitle: Trains")
    merges = blog.remote_git("rev-list", "--merges", "main")
    assert merges == ""
    nodes = blog.remote_git("log", "--format=%(trailers:key=Blog-Writer-Node,valueonly)", "main")
    assert "node-a" in nodes and "test-node" in nodes


def _conflicted_job(blog: Blog) -> tuple[str, Blog, str]:
    person = blog.clone("person")
    job_id = blog.submit(
        "b",
        article("Hello", "The agent's new version of the first post."),
        "--target",
        "content/posts/hello.mdx",
    )
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    theirs = article("Hello", "A person's version of the first post.")
    person.push_by_hand("content/posts/hello.mdx", theirs, "person edits hello")
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "CONFLICT"
    return job_id, person, theirs


def test_conflict_then_abandon_is_skipped(blog: Blog) -> None:
    job_id, _, theirs = _conflicted_job(blog)
    blog.ok("resolve", job_id, "--abandon")
    assert blog.job(job_id)["job"]["state"] == "SKIPPED"
    blog.ok("run", "--until-idle")
    assert blog.commits_with_job(job_id) == 0
    assert blog.remote_file("content/posts/hello.mdx") == theirs.encode()


def test_conflict_then_continue_after_a_person_fixes_it(blog: Blog) -> None:
    job_id, _, _ = _conflicted_job(blog)
    worktree = blog.root / ".git" / "blogpub" / "worktrees" / job_id
    rebase = git(worktree, "rebase", "origin/main", check=False)
    assert "CONFLICT" in rebase or git(worktree, "status", "--porcelain") != ""
    merged = article("Hello", "Both versions, merged by a person.")
    (worktree / "content/posts/hello.mdx").write_text(merged)
    git(worktree, "add", "content/posts/hello.mdx")
    git(worktree, "rebase", "--continue", env={"GIT_EDITOR": "true"})

    blog.ok("resolve", job_id, "--continue")
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/hello.mdx") == merged.encode()
    assert blog.commits_with_job(job_id) == 1
    steps = [e["step"] for e in shown["events"]]
    assert "operator:continue" in steps


def test_continue_without_a_fix_is_refused(blog: Blog) -> None:
    job_id, _, _ = _conflicted_job(blog)
    res = blog.blogpub("resolve", job_id, "--continue")
    assert res.returncode == 1 and "nothing to continue from" in res.stderr
    assert blog.job(job_id)["job"]["state"] == "CONFLICT"


def test_resolve_needs_exactly_one_choice(blog: Blog) -> None:
    assert blog.blogpub("resolve", "x", "--continue", "--abandon").returncode == 2
    assert blog.blogpub("resolve", "x").returncode == 2


def test_topic_close_is_one_job_per_revision(blog: Blog) -> None:
    src = blog.root.parent / "topic.mdx"
    src.write_text(article("Topic", "What we learned in this session."))
    first = blog.ok("topic", "close", "S1", "--source", str(src), "--json").json()
    again = blog.ok("topic", "close", "S1", "--source", str(src), "--json").json()
    assert first["created"] and not again["created"] and again["job_id"] == first["job_id"]
    blog.ok("topic", "reopen", "S1")
    third = blog.ok("topic", "close", "S1", "--source", str(src), "--json").json()
    assert third["created"] and third["job_id"] != first["job_id"]
    keys = sorted(j["idempotency_key"] for j in blog.status())
    assert keys == ["topic:S1:1", "topic:S1:2"]
    again2 = blog.ok("topic", "close", "S1", "--source", str(src), "--json").json()
    assert again2["job_id"] == third["job_id"]


def test_topic_close_with_a_token_is_refused_and_records_nothing(blog: Blog) -> None:
    blog.ok("submit", "--key", "first", "--source", "-", input=article("First", "Plain."))
    src = blog.root.parent / "topic.mdx"
    # A bearer value that looks chosen (a run like `abcdef…123456` is a placeholder).
    src.write_text(article("Topic", "What we learned. Bearer q7Xk2Lm9Pz4Rt8Wv1Yb3Nc6D"))
    res = blog.blogpub("topic", "close", "S1", "--source", str(src))
    assert res.returncode == 1, res.stderr
    assert "bearer-token" in res.stderr and "nothing was recorded" in res.stderr
    assert [j["idempotency_key"] for j in blog.status()] == ["first"]
    # The token reached no file and no status line.
    _assert_never_persisted(blog, "q7Xk2Lm9Pz4Rt8Wv1Yb3Nc6D")


def _assert_never_persisted(blog: Blog, token: str) -> None:
    state = blog.root / ".git" / "blogpub"
    for path in state.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    assert token not in blog.ok("status").stdout


def test_secret_leaked_by_the_draft_step_is_review(blog: Blog) -> None:
    token = secret_corpus.one("np.slack.2")
    draft = blog.root.parent / "draft.py"
    draft.write_text(
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        f"text = req['source'] + '\\nslack token: {token}\\n'\n"
        "print(json.dumps({'text': text}))\n"
    )
    (blog.root / ".blogpub.toml").write_text(
        CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{draft}"]\n'
    )
    blog.trust()
    before = blog.remote_log()
    job_id = blog.submit("s", article("Draft", "A harmless source."))
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    review = next(e for e in shown["events"] if e["to_state"] == "REVIEW")
    assert "slack" in review["detail"]["reason"]
    assert "(line 7)" in review["detail"]["reason"]  # the line the draft added
    assert blog.remote_log() == before
    _assert_never_persisted(blog, token)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('Intro\n\n<Card\n  title="x"\n>\n\nbody\n', "tag <Card> is never closed (line 7)"),
        ("Intro\n\n<Callout>\nimportant\n", "tag <Callout> is never closed (line 7)"),
        ("Intro\n\n<Note>text</Warn>\n", "closing tag </Warn> does not match (line 7)"),
    ],
)
def test_invalid_mdx_is_review_with_line(blog: Blog, body: str, needle: str) -> None:
    before = blog.remote_log()
    job_id = blog.submit("m", article("Broken", body))
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    done = next(e for e in shown["events"] if e["to_state"] == "REVIEW")
    assert needle in done["detail"]["reason"]
    assert blog.remote_log() == before


def test_code_in_fences_does_not_count_as_tags(blog: Blog) -> None:
    body = "```html\n<div>\n```\n\nInline `<span>` too, and <br> and <Img src='x' />.\n"
    job_id = blog.submit("ok", article("Fine", body))
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        ('{"text": null}', "lacks 'text'"),
        ('{"text": 5}', "wrong type"),
        ('{"text": "x", "mood": "happy"}', "unknown field 'mood'"),
        ("[1, 2]", "not an object"),
    ],
)
def test_draft_answers_outside_the_contract_are_review(
    blog: Blog, answer: str, needle: str
) -> None:
    draft = blog.root.parent / "draft.py"
    draft.write_text(f"import sys\nsys.stdin.read()\nprint({answer!r})\n")
    (blog.root / ".blogpub.toml").write_text(
        CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{draft}"]\n'
    )
    blog.trust()
    job_id = blog.submit("d", article("Draft", "Anything."))
    assert blog.blogpub("run", "--until-idle").returncode == 0
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    assert needle in shown["events"][-1]["detail"]["reason"]


def test_worker_killed_during_the_recheck_adopts_the_judge_answer(blog: Blog) -> None:
    log = _with_recheck(blog)
    other = blog.clone("other")
    env = {"JUDGE_LOG": str(log)}
    job_id = blog.committed_not_pushed("b", article("Mine", "A careful article."), env)
    other.push_by_hand("content/posts/theirs.mdx", article("Theirs", "Another one."), "theirs")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--until-idle"],
        env={**os.environ, **env, "JUDGE_SLEEP": "1.5"},
    )
    spool = blog.root / ".git" / "blogpub" / "jobs" / job_id / "steps"
    # The judge has started (its wrapper wrote its pid, the judge logged the request) ...
    wait_for(lambda: list(spool.glob("recheck-*.run/pid")) and log.exists(), "the judge to start")
    proc.send_signal(signal.SIGKILL)  # ... so this kill is mid-judgement; the judge runs on
    assert not list(spool.glob("recheck-*.run/status"))  # it had not answered yet
    proc.wait()
    assert blog.job(job_id)["job"]["state"] == "RECHECK_CANDIDATES"
    blog.ok("run", "--until-idle", env=env)
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
    assert len(_requests(log)) == 1  # adopted, not asked twice


LONG = "\n\n".join(
    f"Paragraph {i}: something worth keeping apart from the rest." for i in range(12)
)


def test_cas_stops_an_update_even_when_git_would_merge_it_cleanly(blog: Blog) -> None:
    """The person's edit and the job's update touch lines far apart, so a rebase would merge
    them without a conflict: only the CAS on the target's bytes keeps the job from publishing a
    version of the article the person never saw."""
    person = blog.clone("person")
    person.push_by_hand("content/posts/long.mdx", article("Long", LONG), "a long article")
    blog.git("pull", "--quiet", "origin", "main")
    rewritten = "\n\n".join(
        f"Paragraph {i} (updated): {word} now says more."
        for i, word in enumerate(["sourdough", "glacier", "violin", "harbor", "saffron", "tundra"])
    )
    updated = article("Long", rewritten + LONG[LONG.index("\n\nParagraph 6:") :])
    job_id = blog.submit("u", updated, "--target", "content/posts/long.mdx")
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    theirs = article("Long", LONG.replace("Paragraph 10:", "Paragraph 10 (typo fixed):"))
    person.push_by_hand("content/posts/long.mdx", theirs, "person fixes a typo")
    # Git itself would combine the two edits without complaint.
    scratch = blog.clone("scratch")
    scratch.git("fetch", "--quiet", str(blog.root), f"refs/blog-jobs/{job_id}")
    scratch.git("merge", "--quiet", "--no-edit", "FETCH_HEAD")  # fails on any conflict
    merged = (scratch.root / "content/posts/long.mdx").read_text()
    assert "Paragraph 1 (updated)" in merged and "(typo fixed)" in merged

    blog.ok("run", "--until-idle")
    job = blog.job(job_id)["job"]
    assert job["state"] == "CONFLICT" and job["failure_code"] == "target_changed"
    assert blog.commits_with_job(job_id) == 0
    assert blog.remote_file("content/posts/long.mdx") == theirs.encode()


def _foreign_commit_with_job_trailers(
    blog: Blog, job_id: str, manifest: str, path: str, text: str
) -> str:
    """Somebody else pushes a commit carrying this job's id trailer."""
    other = blog.clone(f"impostor-{manifest[:6]}")
    target = other.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    other.git("add", path)
    message = f"not the job's commit\n\nBlog-Job-Id: {job_id}\nBlog-Manifest-Sha256: {manifest}\n"
    other.git("commit", "--quiet", "-m", message)
    other.git("push", "--quiet", "origin", "main")
    return other.git("rev-parse", "HEAD")


def _assert_confirmed_by_its_own_commit(blog: Blog, job_id: str, impostor: str) -> None:
    job = blog.job(job_id)["job"]
    assert job["state"] == "PUBLISHED"
    assert job["remote_commit"] != impostor
    body = blog.remote_git("show", "-s", "--format=%B", job["remote_commit"])
    assert f"Blog-Job-Id: {job_id}" in body
    assert f"Blog-Manifest-Sha256: {job['artifact_sha256']}" in body
    # The commit's tree holds the manifest's files with the manifest's bytes.
    manifest = json.loads(
        (blog.root / ".git" / "blogpub" / "jobs" / job_id / "manifest.json").read_bytes()
    )
    for entry in manifest:
        data = subprocess.run(
            ["git", "show", f"{job['remote_commit']}:{entry['path']}"],
            cwd=blog.remote,
            capture_output=True,
            check=True,
        ).stdout
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["path"]


def test_a_remote_commit_with_the_job_id_but_another_manifest_is_no_confirmation(
    blog: Blog,
) -> None:
    text = article("Mine", "The job's own article.")
    job_id = blog.committed_not_pushed("m", text, {})
    impostor = _foreign_commit_with_job_trailers(
        blog, job_id, "0" * 64, "content/posts/other.mdx", article("Other", "Not the job's.")
    )
    blog.ok("run", "--until-idle")
    _assert_confirmed_by_its_own_commit(blog, job_id, impostor)
    assert blog.remote_file(blog.job(job_id)["job"]["target_path"]) == text.encode()


def test_a_remote_commit_with_both_trailers_but_other_bytes_is_no_confirmation(
    blog: Blog,
) -> None:
    text = article("Mine", "The job's own article.")
    job_id = blog.committed_not_pushed("m", text, {})
    manifest = blog.job(job_id)["job"]["artifact_sha256"]
    impostor = _foreign_commit_with_job_trailers(
        blog, job_id, manifest, "content/posts/other.mdx", article("Other", "Not the job's.")
    )
    blog.ok("run", "--until-idle")
    _assert_confirmed_by_its_own_commit(blog, job_id, impostor)
