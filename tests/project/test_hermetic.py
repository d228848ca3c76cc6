"""The suite itself: what the machine has configured never reaches a test, and its knobs work."""

from __future__ import annotations

import os
import subprocess
import sys

from testing.fixtures import Blog
from testing.paths import ROOT


def test_in_process_git_config_is_the_test_home_only(blog: Blog) -> None:
    """pygit2 reads global and system config from paths fixed at import; the fixture moves them
    to the test HOME, so the machine's identity, signing or hooksPath never reach a test."""
    from gitpub.git.repo import Repo

    config = Repo(blog.root).pg.config
    assert config["init.defaultBranch"] == "main"  # the test home's value
    for key in ("user.name", "user.email", "commit.gpgSign", "core.hooksPath", "gpg.program"):
        assert key not in config, key
    seen = subprocess.run(
        ["git", "config", "--show-origin", "--list"],
        cwd=blog.root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in seen.splitlines():
        origin = line.split("\t", 1)[0]
        assert origin.startswith("file:") and (
            origin.startswith(f"file:{os.environ['HOME']}") or origin == "file:.git/config"
        ), line


def test_soak_knobs_survive_the_hermetic_fixture() -> None:
    """GITPUB_SOAK_ROUNDS/SEEDS are read before the fixture clears GITPUB_* variables."""
    env = {**os.environ, "GITPUB_SOAK_SEEDS": "5,6,7", "GITPUB_SOAK_ROUNDS": "2"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"]
        + ["tests/ops/test_recovery.py", "-m", "soak"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    collected = [line for line in out.splitlines() if "test_soak_random_sigkill" in line]
    assert [line.rsplit("[", 1)[1] for line in collected] == ["5]", "6]", "7]"]
