"""contrib/fleet run for real: the image's entry point and the systemd unit's own command
lines, each making its fresh clone of a bare remote, on a real PostgreSQL store (`pg_url`).
A job submitted in a clone that is then deleted is published by the worker they start."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_contrib_files import FLEET, unit_keys
from testing.fixtures import Blog, article, git, wait_for

SCRIPT = FLEET / "worker.sh"
UNIT = FLEET / "gitpub-worker@.service"
TOOLS = ("/bin/sh", "/bin/rm", "/bin/kill", "/usr/bin/env", "/usr/bin/git")


def console_env(**extra: str) -> dict[str, str]:
    # `git blogpub` and `git-blogpub` are this interpreter's console scripts, as after pip.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PATH": path, **extra}


def _user_config(text: str) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "gitpub" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _submit(blog: Blog, key: str, text: str, **env: str) -> str:
    source = blog.root.parent / f"{key}.md"
    source.write_text(text, encoding="utf-8")
    res = blog.ok("submit", "--key", key, "--source", str(source), "--json", env=env)
    return str(res.json()["job_id"])


# --------------------------------------------------------------------- worker.sh


def test_worker_script_refuses_without_a_remote_or_a_shared_store(
    tmp_path: Path, blog: Blog
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    for env, named in (
        (console_env(TMPDIR=str(tmp), GITPUB_STORE="postgresql:///gitpub"), "GITPUB_REMOTE"),
        (console_env(TMPDIR=str(tmp), GITPUB_REMOTE=str(blog.remote)), "GITPUB_STORE"),
    ):
        proc = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True)
        assert proc.returncode == 1, proc.stderr
        assert len(proc.stderr.splitlines()) == 1 and named in proc.stderr, proc.stderr
    assert list(tmp.iterdir()) == []  # nothing cloned


def test_worker_script_publishes_from_a_fresh_clone_a_job_another_node_submitted(
    tmp_path: Path, blog: Blog, pg_url: str
) -> None:
    # The store named in the node's user config, not GITPUB_STORE: the script accepts either.
    _user_config(f'[store]\nurl = "{pg_url}"\n')
    text = article("Fleet", "Submitted on one node, published by another.", slug="fleet")
    job_id = _submit(blog, "fleet-1", text)
    shutil.rmtree(blog.root)  # the submitting node is gone
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = console_env(TMPDIR=str(tmp), GITPUB_REMOTE=str(blog.remote))
    proc = subprocess.run(
        ["sh", str(SCRIPT), "--until-idle"], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    (clone,) = tmp.iterdir()  # the script's own clone
    assert git(clone, "remote", "get-url", "origin") == str(blog.remote)
    assert blog.remote_file("content/posts/fleet.mdx") == text.encode("utf-8")
    assert blog.commits_with_job(job_id) == 1
    assert Blog(clone, blog.remote).job(job_id)["job"]["state"] == "PUBLISHED"


# --------------------------------------------------------------------- the systemd unit

DRAFT = """\
import json, pathlib, sys, time
marks, hold = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
request = json.load(sys.stdin)
with marks.open("a") as f:
    f.write("started %s\\n" % request["job_id"])
deadline = time.time() + 120
while hold.exists() and time.time() < deadline:  # a paid step, running while the file is there
    time.sleep(0.05)
with marks.open("a") as f:
    f.write("finished %s\\n" % request["job_id"])
print(json.dumps({"text": request["source"]}))
"""


def _command(line: str, spec: dict[str, str], env: dict[str, str]) -> list[str]:
    """A unit's command line as systemd runs it: the `-` prefix dropped, specifiers (%i, %S,
    %E) replaced, words split by its quoting rules (those of the shell for these lines), then
    ${NAME} taken from the environment and $$ left as $. Enough for this unit's lines: their
    syntax is systemd-analyze's to check (test_contrib_files.py), their effect is this file's."""
    line = re.sub(r"%(.)", lambda m: "%" if m[1] == "%" else spec[m[1]], line.lstrip("-"))
    dollars = re.compile(r"\$\$|\$\{(\w+)\}")
    return [dollars.sub(lambda m: env.get(m[1], "") if m[1] else "$", w) for w in shlex.split(line)]


def _environment(unit: dict[str, list[str]], spec: dict[str, str]) -> dict[str, str]:
    """Environment= first, then each EnvironmentFile= that exists, later ones winning."""
    lines = list(unit["Environment"])
    for name in unit["EnvironmentFile"]:
        path = Path(_command(name, spec, {})[0])
        if path.exists():
            lines += path.read_text().splitlines()
    pairs = (ln.partition("=") for ln in lines if "=" in ln and not ln.startswith("#"))
    return console_env(**{key: value for key, _, value in pairs})


@pytest.mark.skipif(
    not all(os.access(t, os.X_OK) for t in TOOLS), reason=f"the unit runs {', '.join(TOOLS)}"
)
def test_worker_unit_restart_spares_the_running_step_and_adopts_its_answer(
    tmp_path: Path, blog: Blog, pg_url: str
) -> None:
    unit = unit_keys(UNIT)
    spec = {"i": "7", "S": str(tmp_path / "state"), "E": str(tmp_path / "etc")}
    (tmp_path / "etc" / "gitpub").mkdir(parents=True)
    (tmp_path / "etc" / "gitpub" / "worker.env").write_text(
        f"GITPUB_REMOTE={blog.remote}\nGITPUB_STORE={pg_url}\nGITPUB_INTERVAL=0.2\n"
    )
    marks, hold, step = tmp_path / "marks", tmp_path / "hold", tmp_path / "draft.py"
    step.write_text(DRAFT)
    marks.touch()
    argv = [sys.executable, str(step), str(marks), str(hold)]
    _user_config(f"[steps]\ndraft = {argv!r}\n".replace("'", '"'))
    env = _environment(unit, spec)
    clone = tmp_path / "state" / "gitpub-worker" / "7"
    (clone / ".git" / "blogpub").mkdir(parents=True)  # what a dead worker left behind
    (clone / ".git" / "blogpub" / "stale").write_text("left by the last run\n")
    hold.touch()
    text = article("Unit", "Published by the unit's worker.", slug="unit")
    job_id = _submit(blog, "unit-1", text, GITPUB_STORE=pg_url)
    log = tmp_path / "worker.log"

    def start() -> subprocess.Popen[bytes]:
        for line in unit["ExecStartPre"]:
            proc = subprocess.run(
                _command(line, spec, env), env=env, capture_output=True, text=True, timeout=120
            )
            assert proc.returncode == 0, proc.stderr
        (line,) = unit["ExecStart"]
        with log.open("ab") as out:
            # systemd makes the main process lead a session (and process group) of its own.
            return subprocess.Popen(
                _command(line, spec, env), env=env, stdout=out, stderr=out, start_new_session=True
            )

    def stop(main: subprocess.Popen[bytes]) -> None:
        (line,) = unit["ExecStop"]
        subprocess.run(_command(line, spec, {**env, "MAINPID": str(main.pid)}), env=env)
        main.wait(timeout=30)  # KillMode=process would signal only it, and it is gone

    main = start()
    try:
        assert not (clone / ".git" / "blogpub" / "stale").exists()  # a fresh clone
        assert git(clone, "remote", "get-url", "origin") == str(blog.remote)
        wait_for(lambda: f"started {job_id}" in marks.read_text(), "the draft step to start")
        stop(main)
        assert f"finished {job_id}" not in marks.read_text()  # stopped mid-step
        with ThreadPoolExecutor(1) as pool:
            restart = pool.submit(start)  # Restart=always
            # The step runs on in the old clone, and the next start waits for it.
            time.sleep(1.5)
            assert not restart.done() and f"finished {job_id}" not in marks.read_text()
            hold.unlink()  # the paid step ends now
            main = restart.result(timeout=120)
        wait_for(lambda: blog.commits_with_job(job_id) == 1, "the restarted worker to publish")
    finally:
        if main.poll() is None:
            stop(main)
    assert blog.remote_file("content/posts/unit.mdx") == text.encode("utf-8"), log.read_text()
    assert blog.commits_with_job(job_id) == 1
    # The step that outlived its worker landed its answer; the next worker adopted it.
    assert marks.read_text().splitlines() == [f"started {job_id}", f"finished {job_id}"]
