"""`git blogpub ui` and `git blogpub metrics` as a person runs them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

from testing.fixtures import Blog, article, wait_for
from testing.uiworld import request


def _start(blog: Blog, *args: str) -> tuple[subprocess.Popen[str], str, str]:
    """The server started as a person starts it; its address and the lines it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), "ui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    found = re.match(r"gitpub ui: (http://\S+)$", first)
    assert found, (first, proc.stderr.read() if proc.stderr else "")
    said = [proc.stdout.readline() for _ in range(2)]  # what to do with actions, and Ctrl-C
    return proc, found[1], "".join(said)


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_ui_serves_until_ctrl_c_and_exits_0(blog: Blog) -> None:
    job_id = blog.submit("k", article("Served", "Shown on the page."))
    proc, url, said = _start(blog, "--port", "0")
    try:
        assert url.startswith("http://127.0.0.1:")
        page = wait_for(lambda: request(url), "the page")
        assert page.status == 200 and job_id[:8] in page.body
    finally:
        code, err = _stop(proc)
    assert code == 0 and err == ""
    assert said == "actions: off (start with --actions)\nCtrl-C stops it\n"


def test_listen_prints_the_token_every_request_needs(blog: Blog) -> None:
    proc, url, said = _start(blog, "--listen", "127.0.0.1:0", "--actions")
    try:
        token = re.search(r"\?token=(\S+)$", url)
        assert token and len(token[1]) >= 24
        bare = url.split("?")[0]
        assert request(bare).status == 401
        assert request(bare, headers={"Authorization": f"Bearer {token[1]}"}).status == 200
    finally:
        code, _ = _stop(proc)
    assert code == 0 and said.startswith("actions: on")


def test_a_bad_address_is_a_usage_error(blog: Blog) -> None:
    for addr in ("nowhere", "127.0.0.1:http", "127.0.0.1:70000"):
        res = blog.blogpub("ui", "--listen", addr)
        assert res.returncode == 2 and "HOST:PORT" in res.stderr, addr


def test_a_port_in_use_is_one_line_and_exit_1(blog: Blog) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        res = blog.blogpub("ui", "--port", str(taken.getsockname()[1]))
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and "cannot listen on 127.0.0.1:" in res.stderr


def test_without_jinja2_ui_says_how_to_install_it(blog: Blog) -> None:
    code = (
        "import sys; sys.modules['jinja2'] = None\n"
        "from gitpub.cli.entry import main\n"
        f"main(['-C', {str(blog.root)!r}, 'ui'])\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert res.stderr == "git blogpub: the web page needs Jinja2: pip install 'git-blogpub[ui]'\n"


def test_metrics_prints_the_exposition(blog: Blog) -> None:
    blog.submit("k", article("Counted", "One job."))
    res = blog.ok("metrics")
    assert 'gitpub_jobs{state="RECEIVED"} 1.0' in res.stdout
    assert res.stdout.endswith("\n") and os.linesep == "\n"
