"""Trust: a command named by the blog's shared `.blogpub.toml` runs on a node only after that
node allowed exactly that command set (`git blogpub trust`). Real git, real processes."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, make_blog

from gitpub import config
from gitpub.trust import allowances

MESSAGE = (
    "the blog's config names commands this node has not allowed: "
    "run `git blogpub trust` on node test-node"
)
# The attacker's step: leaves a file behind and answers "ok", so a job it gates publishes.
PWN = ["sh", "-c", "touch PWNED && echo '{\"ok\": true}'"]


def steps_toml(**steps: object) -> str:
    return "\n[steps]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in steps.items())


def push_config(clone: Blog, text: str, message: str) -> None:
    (clone.root / ".blogpub.toml").write_text(text)
    clone.git("commit", "--quiet", "-am", message)
    clone.git("push", "--quiet", "origin", "HEAD:main")


def reason(blog: Blog, job_id: str) -> str:
    shown = blog.job(job_id)
    entered = [e for e in shown["events"] if e["to_state"] == "REVIEW"]
    return str(entered[-1]["detail"]["reason"])


def marker_gate(marker: Path) -> list[str]:
    """A review gate that appends one line to `marker` each time it runs, and says ok."""
    return ["sh", "-c", f"echo ran >> '{marker}' && echo '{{\"ok\": true}}'"]


def runs(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


# ------------------------------------------------------------------------------ the attack


def test_a_pushed_command_never_runs_until_this_node_trusts_it(blog: Blog) -> None:
    attacker = blog.clone("attacker")
    push_config(attacker, CONFIG + steps_toml(review=[PWN]), "tidy the config")

    # The writer's next publication rebases over that commit and fast-forwards the checkout.
    first = blog.submit("k1", article("First", "Published before the change arrives."))
    blog.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "PUBLISHED"
    assert "PWNED" in (blog.root / ".blogpub.toml").read_text()

    jobs = [blog.submit(f"k{i}", article(f"Post {i}", f"Body number {i}.")) for i in (2, 3)]
    published = blog.remote_log()
    res = blog.ok("run", "--until-idle")
    assert res.stderr.count(MESSAGE) == 1  # said once, not once per job
    for job_id in jobs:
        shown = blog.job(job_id)["job"]
        assert (shown["state"], shown["failure_code"]) == ("REVIEW", "not_allowed")
        assert reason(blog, job_id) == MESSAGE
        # Nothing was recorded for the refused step: no answer, no spool to adopt later.
        steps_dir = blog.root / ".git" / "blogpub" / "jobs" / job_id / "steps"
        assert sorted(p.name for p in steps_dir.iterdir()) == ["draft.json", "judge.json"]
    assert not (blog.root / "PWNED").exists()
    assert blog.remote_log() == published

    doctor = blog.blogpub("doctor")
    assert doctor.returncode == 1
    assert f"{MESSAGE}; 2 job(s) wait in REVIEW for it" in doctor.stdout
    assert "fix: git blogpub trust" in doctor.stdout

    shown = blog.ok("trust", "--yes").stdout
    assert f"  + review: {shlex.join(PWN)}\n" in shown
    assert not (blog.root / "PWNED").exists()  # trusting runs nothing by itself
    for job_id in jobs:
        blog.ok("retry", job_id)
    blog.ok("run", "--until-idle")
    assert [blog.job(j)["job"]["state"] for j in jobs] == ["PUBLISHED", "PUBLISHED"]
    assert (blog.root / "PWNED").exists()  # the allowed command did run, for the retried jobs
    assert len(blog.remote_log()) == len(published) + 2
    findings = blog.blogpub("doctor", "--json").json()["findings"]
    assert [f["status"] for f in findings if f["check"] == "trust"] == ["ok"]


def test_the_recheck_judge_at_delivery_is_held_too(blog: Blog) -> None:
    log = blog.root.parent / "judge.log"
    judge = blog.root.parent / "judge.py"
    judge.write_text(
        "import json, sys\nsys.stdin.read()\n"
        f"open({str(log)!r}, 'a').write('judged\\n')\n"
        "print(json.dumps({'decision': 'KEEP'}))\n"
    )
    push_config(blog, CONFIG + steps_toml(recheck=[sys.executable, str(judge)]), "recheck")
    job_id = blog.submit("k", article("Mine", "A careful article."))
    crashed = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert crashed.returncode == 137
    other = blog.clone("other")
    (other.root / "content" / "posts" / "theirs.mdx").write_text(
        article("Theirs", "Somebody else's article, published meanwhile.")
    )
    other.git("add", ".")
    other.git("commit", "--quiet", "-m", "theirs")
    other.git("push", "--quiet", "origin", "HEAD:main")

    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)["job"]
    assert (shown["state"], shown["failure_code"]) == ("REVIEW", "not_allowed")
    assert reason(blog, job_id) == MESSAGE
    assert not log.exists()
    assert blog.commits_with_job(job_id) == 0

    blog.trust()
    blog.ok("retry", job_id)
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"


def test_dry_run_runs_no_command_this_node_has_not_allowed(blog: Blog, tmp_path: Path) -> None:
    marker = tmp_path / "gate.log"
    push_config(blog, CONFIG + steps_toml(review=[marker_gate(marker)]), "gate")
    src = tmp_path / "src.mdx"
    src.write_text(article("Dry", "Only a preview."))
    res = blog.ok("dry-run", "--source", str(src))
    assert f"outcome:  REVIEW (a submit would stop in REVIEW): {MESSAGE}" in res.stdout
    assert runs(marker) == 0
    blog.trust()
    assert "outcome:  READY_TO_COMMIT" in blog.ok("dry-run", "--source", str(src)).stdout
    assert runs(marker) == 1


# --------------------------------------------------------------- what needs a new allowance


def test_a_changed_argv_is_refused_until_trusted_again(blog: Blog, tmp_path: Path) -> None:
    marker = tmp_path / "gate.log"
    push_config(blog, CONFIG + steps_toml(review=[marker_gate(marker)]), "gate")
    blog.trust()
    first = blog.submit("k1", article("One", "First body."))
    blog.ok("run", "--until-idle")
    assert (blog.job(first)["job"]["state"], runs(marker)) == ("PUBLISHED", 1)

    changed = [*marker_gate(marker)[:2], marker_gate(marker)[2] + " # and more"]
    push_config(blog, CONFIG + steps_toml(review=[changed]), "gate, changed")
    second = blog.submit("k2", article("Two", "Second body."))
    blog.ok("run", "--until-idle")
    assert reason(blog, second) == MESSAGE
    assert runs(marker) == 1

    shown = blog.ok("trust", "--yes").stdout
    assert sum(line.startswith("  - review:") for line in shown.splitlines()) == 1
    assert sum(line.startswith("  + review:") for line in shown.splitlines()) == 1
    blog.ok("retry", second)
    blog.ok("run", "--until-idle")
    assert (blog.job(second)["job"]["state"], runs(marker)) == ("PUBLISHED", 2)


@pytest.mark.parametrize(
    ("argv", "rewritten"),
    [
        (["sh", "tools/gate.sh"], "tools/gate.sh"),  # the script the argv names
        (["sh", "tools/gate.sh"], "tools/lib/answer.sh"),  # a file it sources, beside it
        (["sh", "-c", "sh tools/gate.sh"], "tools/gate.sh"),  # named inside a shell string
    ],
)
def test_rewriting_a_repository_script_the_step_runs_needs_trust_again(
    blog: Blog, argv: list[str], rewritten: str
) -> None:
    tools = blog.root / "tools"
    (tools / "lib").mkdir(parents=True)
    (tools / "gate.sh").write_text(". tools/lib/answer.sh\n")
    (tools / "lib" / "answer.sh").write_text("echo '{\"ok\": true}'\n")
    (blog.root / ".blogpub.toml").write_text(CONFIG + steps_toml(review=[argv]))
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "a gate kept in the repository")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    blog.trust()
    first = blog.submit("k0", article("First", "Published: the gate is allowed."))
    blog.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "PUBLISHED"  # and publishing asks nothing new

    # Same argv, new code behind it: the attack through a file the trusted step runs.
    attacker = blog.clone("attacker")
    (attacker.root / rewritten).write_text("touch PWNED; echo '{\"ok\": true}'\n")
    attacker.git("commit", "--quiet", "-am", "faster gate")
    attacker.git("push", "--quiet", "origin", "HEAD:main")
    blog.git("pull", "--quiet", "--ff-only", "origin", "main")

    job_id = blog.submit("k", article("Post", "A body."))
    blog.ok("run", "--until-idle")
    assert reason(blog, job_id) == MESSAGE
    assert not (blog.root / "PWNED").exists()
    shown = blog.ok("trust", "--yes").stdout
    assert f"  - file {rewritten} blob" in shown and f"  + file {rewritten} blob" in shown


def test_a_data_only_change_needs_no_new_allowance(blog: Blog, tmp_path: Path) -> None:
    marker = tmp_path / "gate.log"
    steps = steps_toml(review=[marker_gate(marker)])
    push_config(blog, CONFIG + steps, "gate")
    blog.trust()
    data_only = CONFIG.replace("max_attempts = 4", "max_attempts = 6").replace(
        'content = ["content/posts"]', 'content = ["content/posts", "content/notes"]'
    )
    data_only += "\n[gc]\nkeep_days = 7\n" + steps + "timeout = 30\n"
    assert data_only != CONFIG + steps
    push_config(blog, data_only, "data only")
    job_id = blog.submit("k", article("Post", "A body."))
    res = blog.ok("run", "--until-idle")
    assert MESSAGE not in res.stderr
    assert (blog.job(job_id)["job"]["state"], runs(marker)) == ("PUBLISHED", 1)


def test_steps_of_the_node_own_user_config_run_without_trust(blog: Blog, tmp_path: Path) -> None:
    marker = tmp_path / "gate.log"
    user = config.user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text("# this node's own gate\n" + steps_toml(review=[marker_gate(marker)]))
    # The shared file names a command too, for the same step: the node's own replaces it.
    push_config(blog, CONFIG + steps_toml(review=[PWN]), "shared gate")
    job_id = blog.submit("k", article("Post", "A body."))
    res = blog.ok("run", "--until-idle")
    assert MESSAGE not in res.stderr
    assert (blog.job(job_id)["job"]["state"], runs(marker)) == ("PUBLISHED", 1)
    assert not (blog.root / "PWNED").exists()
    assert not allowances.path().exists()


# ------------------------------------------------------------------ the allowance itself


def test_list_and_revoke_round_trip(blog: Blog, tmp_path: Path) -> None:
    marker = tmp_path / "gate.log"
    push_config(blog, CONFIG + steps_toml(review=[marker_gate(marker)]), "gate")
    assert "nothing allowed for" in blog.ok("trust", "--list").stdout
    blog.trust()
    listed = blog.ok("trust", "--list").stdout
    assert f"  review: sh -c 'echo ran >> '\"'\"'{marker}'\"'\"'" in listed
    assert "names exactly these commands now" in listed
    assert "already allowed" in blog.ok("trust", "--yes").stdout

    assert "revoked" in blog.ok("trust", "--revoke").stdout
    assert "nothing allowed for" in blog.ok("trust", "--list").stdout
    job_id = blog.submit("k", article("Post", "A body."))
    assert MESSAGE in blog.ok("run", "--until-idle").stderr
    assert (reason(blog, job_id), runs(marker)) == (MESSAGE, 0)
    assert "nothing was allowed" in blog.ok("trust", "--revoke").stdout


def test_each_clone_trusts_on_its_own_and_the_allowance_survives_restarts(
    blog: Blog, tmp_path: Path
) -> None:
    marker = tmp_path / "gate.log"
    push_config(blog, CONFIG + steps_toml(review=[marker_gate(marker)]), "gate")
    blog.trust()
    second = blog.clone("second")
    job_id = second.submit("k", article("Post", "A body."))
    second.ok("run", "--until-idle")
    assert (reason(second, job_id), runs(marker)) == (MESSAGE, 0)
    # The first clone's allowance is untouched, in a file every later process reads again.
    mine = blog.submit("k", article("Mine", "Another body."))
    blog.ok("run", "--until-idle")
    assert (blog.job(mine)["job"]["state"], runs(marker)) == ("PUBLISHED", 1)


def test_trust_without_a_terminal_asks_nothing_and_records_nothing(blog: Blog) -> None:
    push_config(blog, CONFIG + steps_toml(review=[PWN]), "gate")
    res = blog.blogpub("trust", input="y\n")
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [
        "git blogpub: trust: not asking without a terminal; review the commands above and "
        "run `git blogpub trust --yes` to allow them"
    ]
    assert "+ review: sh -c" in res.stdout  # what would be allowed is still shown
    assert not allowances.path().exists()
    assert blog.blogpub("trust", "--yes", "--list").returncode == 2


def test_the_allowance_file_keeps_other_repositories_and_no_secret(blog: Blog) -> None:
    user = config.user_config_path()
    user.parent.mkdir(parents=True)
    own = '# my node\nnode = "test-node"  # keep this comment\n'
    user.write_text(own)
    (blog.root.parent / "elsewhere").mkdir()
    other = make_blog(blog.root.parent / "elsewhere")
    push_config(other, CONFIG + steps_toml(review=[["sh", "-c", "echo other"]]), "other")
    other.trust()
    token = "ghp_" + "A1b2C3d4" * 4 + "Zz9Y"
    odd = ["sh", "-c", 'printf "%s\\n" "quote\\" back\\\\slash\x7f"', f"--token={token}"]
    push_config(blog, CONFIG + steps_toml(review=[odd]), "odd argv")
    blog.trust()

    text = allowances.path().read_text("utf-8")
    assert token not in text  # the sanitized view is stored; the hash decides
    entries = allowances.read_all(allowances.path())
    assert sorted(Path(e.repository).parent.name for e in entries) == ["blog", "blog"]
    assert len({e.repository for e in entries}) == 2
    assert user.read_text() == own  # the person's own config file, untouched byte for byte
    assert "already allowed" in blog.ok("trust", "--yes").stdout
    assert "already allowed" in other.ok("trust", "--yes").stdout
    assert not [p for p in allowances.path().parent.iterdir() if p.name.endswith(".tmp")]


def test_an_unreadable_allowance_file_allows_nothing(blog: Blog, tmp_path: Path) -> None:
    marker = tmp_path / "gate.log"
    push_config(blog, CONFIG + steps_toml(review=[marker_gate(marker)]), "gate")
    blog.trust()
    allowances.path().write_text("[[allowed]\nbroken", encoding="utf-8")
    job_id = blog.submit("k", article("Post", "A body."))
    res = blog.ok("run", "--until-idle")
    assert f"{MESSAGE} ({allowances.path()}: not valid TOML" in res.stderr
    assert reason(blog, job_id).startswith(MESSAGE)
    assert runs(marker) == 0
    bad = blog.blogpub("trust", "--yes")
    assert bad.returncode == 1 and str(allowances.path()) in bad.stderr
    assert os.path.getsize(allowances.path()) == len("[[allowed]\nbroken")


# ------------------------------------------------------------------ a long-running worker


def wait_for(blog: Blog, job_id: str, state: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if blog.job(job_id)["job"]["state"] == state:
            return
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} never reached {state}: {blog.job(job_id)['job']}")


def test_a_running_worker_follows_the_fast_forwarded_config_and_a_later_trust(
    blog: Blog, tmp_path: Path
) -> None:
    log = tmp_path / "worker.err"
    with log.open("w") as err:
        worker = subprocess.Popen(
            [sys.executable, "-m", "gitpub", "-C", str(blog.root), "run", "--interval", "0.2"],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        attacker = blog.clone("attacker")
        push_config(attacker, CONFIG + steps_toml(review=[PWN]), "tidy the config")
        first = blog.submit("k1", article("First", "Published before the change arrives."))
        wait_for(blog, first, "PUBLISHED")
        # The live checkout is fast-forwarded right after the publication is recorded.
        config = blog.root / ".blogpub.toml"
        deadline = time.monotonic() + 30
        while "PWNED" not in config.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "PWNED" in config.read_text()  # fast-forwarded

        second = blog.submit("k2", article("Second", "Held until this node allows it."))
        wait_for(blog, second, "REVIEW")
        assert reason(blog, second) == MESSAGE
        assert not (blog.root / "PWNED").exists()

        blog.trust()  # read again before each step: no restart needed
        blog.ok("retry", second)
        wait_for(blog, second, "PUBLISHED")
        assert (blog.root / "PWNED").exists()
        assert worker.poll() is None
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert log.read_text().count(MESSAGE) == 1


def answer_on_a_terminal(blog: Blog, answer: str) -> subprocess.CompletedProcess[str]:
    """`git blogpub trust` with its stdin on a real pseudo-terminal, answering `answer`."""
    main, side = pty.openpty()
    try:
        os.write(main, answer.encode() + b"\n")
        return subprocess.run(
            [sys.executable, "-m", "gitpub", "-C", str(blog.root), "trust"],
            stdin=side,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(main)
        os.close(side)


def test_trust_on_a_terminal_asks_and_records_only_a_yes(blog: Blog) -> None:
    push_config(blog, CONFIG + steps_toml(review=[PWN]), "gate")
    no = answer_on_a_terminal(blog, "n")
    assert no.returncode == 1
    assert "Allow these commands to run on node test-node? [y/N]" in no.stdout
    assert no.stderr.strip() == "git blogpub: trust: not allowed; nothing recorded"
    assert not allowances.path().exists()
    yes = answer_on_a_terminal(blog, "y")
    assert yes.returncode == 0, yes.stderr
    assert "allowed: 1 command(s)" in yes.stdout
    assert "names exactly these commands now" in blog.ok("trust", "--list").stdout
