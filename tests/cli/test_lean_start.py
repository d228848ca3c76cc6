"""`submit` and `status` are what an agent runs by the hundred: most of their time is the
interpreter starting and importing. They need no git object and no font, so they import
neither pygit2 nor fontTools, the two libraries that cost more than the whole command (and
take no lock: no filelock). A change that brings one back would slow every call without any
test failing, so these tests run the commands as a user does, in a clone of a real remote,
read `-X importtime`, and check both that the module stayed out and that the command still
did its work. click, dataclasses, uuid and platformdirs are cheap enough, and welcome. Nor
do they load what only some calls need: the judge of a scanner match (a clean text has none),
article paths (only a --target or an asset is one); and status, the door submits go through."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from testing.fixtures import Blog, article

LEFT_OUT = {
    "pygit2": "submit and status read no git object",
    "fontTools": "no font work",
    "uharfbuzz": "no font work",
    "filelock": "submit and status take no lock",
    "gitpub.scan.judge": "only a match is judged; a clean text compiles none of its patterns",
    "gitpub.site": "no article path is made; a --target is checked only where one is given",
}
STATUS_LEFT_OUT = {"gitpub.intake": "status reads jobs; it submits none and looks no key up"}


def imported(argv: list[str], cwd: Path, stdin: str | None = None) -> tuple[set[str], str]:
    """The name of every module the command imported, and its stdout."""
    proc = subprocess.run(
        argv,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPROFILEIMPORTTIME": "1",
            # `git blogpub` finds the console script of this interpreter first.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "gitpub" in names, proc.stderr[-3000:]  # the report was there to read
    return names, proc.stdout


def left_out(names: set[str], modules: dict[str, str] = LEFT_OUT) -> dict[str, str]:
    """The modules (or packages: any module inside counts) that came back, each with why it
    had no business there."""
    return {
        name: why
        for name, why in modules.items()
        if any(n == name or n.startswith(f"{name}.") for n in names)
    }


PY = [sys.executable, "-m", "gitpub"]


def test_submit_records_a_job_without_the_modules_it_gave_up(blog: Blog) -> None:
    src = blog.root.parent / "post.mdx"
    src.write_text(article("Lean", "Recorded by a command that imported little."))
    names, out = imported(
        [*PY, "submit", "--key", "lean", "--source", str(src), "--json"], blog.root
    )
    assert not left_out(names), left_out(names)
    answer = json.loads(out)
    assert answer["created"] is True and answer["state"] == "RECEIVED"
    job_id = answer["job_id"]
    job = blog.job(job_id)["job"]
    assert job["state"] == "RECEIVED" and job["idempotency_key"] == "lean"
    folder = blog.root / ".git" / "blogpub" / "jobs" / job_id
    assert (folder / "source.txt").read_text() == src.read_text()
    assert json.loads((folder / "job.json").read_text())["job_id"] == job_id

    # The same request again finds that job, as lean.
    names, out = imported(
        [*PY, "submit", "--key", "lean", "--source", str(src), "--json"], blog.root
    )
    assert not left_out(names), left_out(names)
    assert json.loads(out) == {**answer, "created": False}


def test_git_blogpub_submit_from_stdin_is_as_lean(blog: Blog) -> None:
    """The console script behind `git blogpub`, as the README shows it, and a source on stdin."""
    text = article("Piped", "Handed over on standard input.")
    names, out = imported(
        ["git", "blogpub", "submit", "--key", "piped", "--source", "-", "--json"], blog.root, text
    )
    assert not left_out(names), left_out(names)
    assert blog.job(json.loads(out)["job_id"])["job"]["state"] == "RECEIVED"


def test_status_lists_the_jobs_without_the_modules_it_gave_up(blog: Blog) -> None:
    first = blog.submit("one", article("One", "The first."))
    second = blog.submit("two", article("Two", "The second."))
    names, out = imported([*PY, "status"], blog.root)
    assert not left_out(names), left_out(names)
    assert not left_out(names, STATUS_LEFT_OUT), left_out(names, STATUS_LEFT_OUT)
    rows = [line.split() for line in out.splitlines() if line.startswith("  ")]
    assert [r[0] for r in rows] == [first[:8], second[:8]]
    assert [r[1] for r in rows] == ["RECEIVED", "RECEIVED"]
    # Each age read from the stored time: seconds or minutes, not a date misread as years ago.
    assert all(re.fullmatch(r"\d+[sm]", r[2]) for r in rows), rows

    names, out = imported([*PY, "status", "--json"], blog.root)
    assert not left_out(names), left_out(names)
    assert [j["job_id"] for j in json.loads(out)["jobs"]] == [first, second]
