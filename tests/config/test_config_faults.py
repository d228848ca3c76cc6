"""A `.blogpub.toml` that anyone with push access broke (bytes that are not UTF-8, text that is
not TOML) is named by every command, with its line, and never stops a running worker: it keeps
the config in use and says so once. Real git, real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, wait_for

# A comment written by an editor saving Latin-1: "é" is the single byte 0xE9.
LATIN1 = CONFIG.encode("utf-8") + b"# r\xe9sum\xe9 of the settings\n"
NOT_TOML = CONFIG + "[retry\nmax_attempts = 3\n"


def push_bytes(clone: Blog, data: bytes, message: str) -> None:
    (clone.root / ".blogpub.toml").write_bytes(data)
    clone.git("commit", "--quiet", "-am", message)
    clone.git("push", "--quiet", "origin", "HEAD:main")


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (LATIN1, ".blogpub.toml:{n}: not UTF-8 (byte 0xe9 at column 4)"),
        (NOT_TOML.encode(), ".blogpub.toml: not valid TOML"),
    ],
)
@pytest.mark.parametrize("command", [["run", "--until-idle"], ["doctor"], ["trust", "--list"]])
def test_every_command_names_the_broken_config(
    blog: Blog, data: bytes, where: str, command: list[str]
) -> None:
    (blog.root / ".blogpub.toml").write_bytes(data)
    res = blog.blogpub(*command)
    line = len(CONFIG.splitlines()) + 1
    assert res.returncode == 1, res
    assert res.stderr.count("\n") == 1, res.stderr  # one line, no traceback
    # doctor lists it among its checks (stdout) and ends with a one-line count on stderr.
    said = res.stderr if command[0] != "doctor" else res.stdout
    assert f"{blog.root / where.format(n=line)}" in said, said
    assert "internal error" not in res.stderr
    if data is not LATIN1:
        assert f"line {line}" in said  # tomllib's own position of the fault


def test_a_running_worker_keeps_its_config_and_says_which_file_once(
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
        push_bytes(blog.clone("editor"), LATIN1, "a note on the settings")
        first = blog.submit("k1", article("First", "Its delivery brings the broken file."))
        wait_for(lambda: blog.commits_with_job(first) == 1, "the first job on the remote")
        wait_for(lambda: b"\xe9" in (blog.root / ".blogpub.toml").read_bytes(), "fast-forward")
        # Every command now refuses the file (submit too); the worker goes on with the config
        # it has: a hand edit is still delivered.
        assert blog.blogpub("submit", "--key", "k2", "--source", "-", input="x").returncode == 1
        hand = article("By hand", "Written straight into the folder after the break.")
        (blog.root / "content/posts/hand.md").write_text(hand)
        # No hook is installed here: the worker finds the edit by its periodic scan, whose
        # period we let pass by dating the last scan back.
        stamp = blog.root / ".git/blogpub/external-scan"
        os.utime(stamp, (time.time() - 3600, time.time() - 3600))
        wait_for(lambda: b"By hand" in remote_file(blog, "content/posts/hand.md"), "the edit")
        time.sleep(1)  # several more passes, each of which reads the file again
        assert worker.poll() is None, log.read_text()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    said = log.read_text()
    line = len(CONFIG.splitlines()) + 1
    expected = f"keeping the config in use: {blog.root / '.blogpub.toml'}:{line}: not UTF-8"
    assert said.count(expected) == 1, said
    assert "internal error" not in said and "Traceback" not in said


def remote_file(blog: Blog, path: str) -> bytes:
    proc = subprocess.run(["git", "show", f"main:{path}"], cwd=blog.remote, capture_output=True)
    return proc.stdout
