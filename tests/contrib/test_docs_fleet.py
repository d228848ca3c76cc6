"""docs/fleet.md runs as written: its one-machine walkthrough, on a real PostgreSQL store."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from test_contrib_fleet import console_env
from testing.fixtures import Blog
from testing.paths import ROOT

PAGE = ROOT / "docs" / "fleet.md"


def test_fleet_walkthrough_runs_as_written(
    tmp_path: Path, blog: Blog, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITPUB_STORE", pg_url)  # exported, as the page asks
    body = PAGE.read_text("utf-8").split("\n## Try it on one machine\n", 1)[1].split("\n## ")[0]
    (script,) = re.findall(r"```sh\n(.*?)```", body, re.S)
    work = tmp_path / "walk"
    work.mkdir()
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=work,
        env=console_env(REMOTE=str(blog.remote)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{script}\n--- stderr\n{proc.stderr}"
    assert not (work / "node-a").exists()  # the node that submitted is gone
    (job,) = Blog(work / "node-b", blog.remote).status()
    assert job["state"] == "PUBLISHED" and "PUBLISHED" in proc.stdout
    assert blog.commits_with_job(job["job_id"]) == 1
    published = blog.remote_file(job["target_path"])
    assert published == (work / "post.md").read_bytes()
