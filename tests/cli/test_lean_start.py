"""`submit` and `status` are what an agent runs by the hundred: most of their time is the
interpreter starting and importing. Each module below was given up on their path for a
cheaper way to the same result; a change that brings one back would slow every call again
without any test failing, so these tests run the commands as a user does, in a clone of a
real remote, read `-X importtime`, and check both that the module stayed out and that the
command still did its work."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from testing.fixtures import Blog, article

from gitpub import intake
from gitpub.ops import cleanup
from gitpub.store import lost
from gitpub.store.db import at, now, parse_time

LEFT_OUT = {
    "pygit2": "submit and status read no git object",
    "fontTools": "no font work",
    "uharfbuzz": "no font work",
    "filelock": "submit and status take no lock",
    "click": "their command line is parsed by gitpub.cli.entry",
    "dataclasses": "Job, Move, Listing and ExternalEvent are NamedTuples",
    "inspect": "what dataclasses imports",
    "uuid": "intake.new_job_id makes job ids from os.urandom",
    "threading": "the lock order is kept per thread id, not in a threading.local",
    "_strptime": "store.parse_time reads the stored timestamps field by field",
    "textwrap": "only `show` wraps text",
}
if sys.platform == "linux":
    # gitpub.core.userdirs computes the XDG folders itself here; elsewhere it asks platformdirs.
    LEFT_OUT.update(
        {
            "platformdirs": "gitpub.core.userdirs",
            "tempfile": "what platformdirs imports",
            "shutil": "what platformdirs imports",
        }
    )


def imported(argv: list[str], cwd: Path, stdin: str | None = None) -> tuple[set[str], str]:
    """The top-level names of every module the command imported, and its stdout."""
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
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "gitpub" in names, proc.stderr[-3000:]  # the report was there to read
    return names, proc.stdout


def left_out(names: set[str]) -> dict[str, str]:
    """The modules of LEFT_OUT that came back, each with why it had no business there."""
    return {name: why for name, why in LEFT_OUT.items() if name in names}


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
    rows = [line.split() for line in out.splitlines() if line.startswith("  ")]
    assert [r[0] for r in rows] == [first[:8], second[:8]]
    assert [r[1] for r in rows] == ["RECEIVED", "RECEIVED"]
    # Each age read from the stored time: seconds or minutes, not a date misread as years ago.
    assert all(re.fullmatch(r"\d+[sm]", r[2]) for r in rows), rows

    names, out = imported([*PY, "status", "--json"], blog.root)
    assert not left_out(names), left_out(names)
    assert [j["job_id"] for j in json.loads(out)["jobs"]] == [first, second]


def test_job_ids_keep_the_uuid4_form_every_reader_expects() -> None:
    """Job folders, worktrees and branches are recognised by this form (gc, the lost-database
    check), and older jobs have ids from `uuid.uuid4()`: a new id must read the same."""
    ids = [intake.new_job_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for job_id in ids:
        parsed = uuid.UUID(job_id)
        assert str(parsed) == job_id
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert cleanup.is_job_id(job_id) and lost._JOB_ID.match(job_id)


def _strptime(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def test_parse_time_reads_every_stored_timestamp_as_strptime_does() -> None:
    rng = random.Random(14)
    stamps = [now(), at(0.0), at(951782400.5), at(4102444799.999999)]
    stamps += [at(rng.uniform(0, 4.1e9)) for _ in range(5000)]
    for stamp in stamps:
        assert parse_time(stamp) == _strptime(stamp), stamp
    # Other spellings are strptime's to accept or refuse, as before.
    assert parse_time("2026-1-2T03:04:05.5Z") == _strptime("2026-1-2T03:04:05.5Z")
    for bad in ("2026-13-02T00:49:26.123456Z", "2026-12-02 00:49:26.123456Z", "2026-12-02"):
        with pytest.raises(ValueError):
            parse_time(bad)
