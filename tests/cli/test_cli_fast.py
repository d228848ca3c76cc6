"""`submit` and `status` start without click (gitpub.cli.entry); everything else, and every
command line the fast parser does not take as written, goes through click. Both read one
table of options (gitpub.cli.options), so the two paths accept the same command lines and do
the same thing with them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from testing.fixtures import Blog, article, make_blog

from gitpub.cli import entry, options
from gitpub.cli.app import cli

FAST = [sys.executable, "-m", "gitpub"]
CLICK = [sys.executable, "-c", "from gitpub.cli.app import main; main()"]


def run(argv: list[str], *args: str, cwd: Path, stdin: str | None = None) -> tuple[int, str, str]:
    proc = subprocess.run(
        [*argv, *args], cwd=cwd, input=stdin, capture_output=True, text=True, env=os.environ
    )
    return proc.returncode, proc.stdout, proc.stderr


def _click_params(command: click.Command) -> list[tuple[Any, ...]]:
    return [
        (p.opts[0], p.name, bool(getattr(p, "multiple", False)), p.required, p.metavar)
        for p in command.params
        if p.name != "help"
    ]


def _table(table: tuple[options.Option, ...]) -> list[tuple[Any, ...]]:
    return [(o.flag, o.dest, o.kind == options.MULTIPLE, o.required, o.metavar) for o in table]


def test_the_click_commands_take_exactly_the_options_of_the_table() -> None:
    assert _click_params(cli) == _table(options.ROOT)
    for name, table in options.COMMANDS.items():
        command = cli.commands[name]
        assert _click_params(command) == _table(table), name
        flags = {p.name for p in command.params if getattr(p, "is_flag", False)}
        assert flags == {o.dest for o in table if o.kind == options.FLAG}, name


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["submit", "--key", "k", "--source", "-"],
            ("submit", ".", {"key": "k", "source": "-", "target": None, "assets": ()}),
        ),
        (
            ["-C", "blog", "-C", "other", "submit", "--source=a.md", "--key=k=v", "--json"],
            ("submit", "other", {"key": "k=v", "source": "a.md", "as_json": True}),
        ),
        (
            ["submit", "--key", "", "--source", "s", "--asset", "b", "--asset", "a"],
            ("submit", ".", {"key": "", "assets": ("b", "a"), "allow": (), "topic": None}),
        ),
        (["status"], ("status", ".", {"as_json": False, "everything": False, "state": None})),
        (["status", "--all", "--json"], ("status", ".", {"as_json": True, "everything": True})),
    ],
)
def test_the_fast_parser_takes_plain_command_lines(
    argv: list[str], expected: tuple[str, str, dict[str, object]]
) -> None:
    parsed = entry.parse(argv)
    assert parsed is not None
    command, path, values = parsed
    assert (command, str(path)) == expected[:2]
    assert set(values) == {o.dest for o in options.COMMANDS[command]}
    assert {k: values[k] for k in expected[2]} == expected[2]


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["run", "--until-idle"],
        ["-h"],
        ["submit", "-h"],
        ["submit", "--help", "--key", "k", "--source", "s"],
        ["submit", "--source", "s"],  # --key missing
        ["submit", "--key", "k", "--source"],  # no value
        ["submit", "--key", "--json", "--source", "s"],  # a value that looks like an option
        ["submit", "--key", "a", "--key", "b", "--source", "s"],  # repeated single value
        ["submit", "--key", "k", "--source", "s", "--json=yes"],
        ["submit", "--key", "k", "--source", "s", "extra"],
        ["submit", "--key", "k", "--source", "s", "--bogus"],
        ["submit", "--ke", "k", "--source", "s"],  # no abbreviations, in click either
        ["submit", "--key", "k", "--source", "s", "--"],
        ["-Cx", "submit", "--key", "k", "--source", "s"],
        ["-C", "submit", "--key", "k", "--source", "s"],
        ["status", "--state", "review"],  # a value click converts
        ["status", "--limit", "3"],
        ["status", "-C", "x"],
    ],
)
def test_anything_else_is_left_to_click(argv: list[str]) -> None:
    assert entry.parse(argv) is None


def _job_as_seen(blog: Blog, out: str) -> dict[str, Any]:
    """What a submit left, without what differs by nature (ids, times, where)."""
    job_id = json.loads(out)["job_id"]
    shown = blog.job(job_id)
    job = {k: v for k, v in shown["job"].items() if k not in ("job_id", "created_at", "updated_at")}
    folder = blog.root / ".git" / "blogpub" / "jobs" / job_id
    record = json.loads((folder / "job.json").read_text())
    files = {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and p.name != "job.json"
    }
    return {
        "job": job,
        "events": [(e["step"], e["to_state"], e["detail"]) for e in shown["events"]],
        "record": {k: v for k, v in record.items() if k not in ("job_id", "created_at")},
        "files": files,
    }


def test_a_submit_through_either_path_records_the_same_job(tmp_path: Path) -> None:
    (tmp_path / "fast").mkdir()
    (tmp_path / "slow").mkdir()
    fast, slow = make_blog(tmp_path / "fast"), make_blog(tmp_path / "slow")
    src = tmp_path / "post.mdx"
    src.write_text(article("Both ways", "The same job, whichever parser read the line."))
    asset = tmp_path / "figure.png"
    asset.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(64)))
    lines = [
        ["submit", "--key", "a", "--source", str(src), "--json"],
        ["submit", "--key=b", f"--source={src}", "--topic", "ops", "--json"],
        ["submit", "--json", "--key", "c", "--source", "-", "--target", "content/posts/c.mdx"],
        ["submit", "--key", "d", "--source", str(src), "--asset", str(asset), "--json"],
        ["submit", "--key", "a", "--source", str(src), "--json"],  # the same request again
    ]
    for args in lines:
        stdin = src.read_text() if "-" in args else None
        code_f, out_f, err_f = run(FAST, "-C", str(fast.root), *args, cwd=tmp_path, stdin=stdin)
        code_s, out_s, err_s = run(CLICK, "-C", str(slow.root), *args, cwd=tmp_path, stdin=stdin)
        assert (code_f, err_f) == (code_s, err_s) == (0, ""), args
        seen_f, seen_s = _job_as_seen(fast, out_f), _job_as_seen(slow, out_s)
        assert seen_f == seen_s, args
        assert {k: v for k, v in json.loads(out_f).items() if k != "job_id"} == {
            k: v for k, v in json.loads(out_s).items() if k != "job_id"
        }
    assert len(fast.status()) == len(slow.status()) == 4
    code_f, out_f, _ = run(FAST, "-C", str(fast.root), "status", cwd=tmp_path)
    code_s, out_s, _ = run(CLICK, "-C", str(slow.root), "status", cwd=tmp_path)
    assert code_f == code_s == 0
    # The same lines: the same headings, and the same jobs in the same states and order.
    assert _status_lines(out_f) == _status_lines(out_s)


def _status_lines(out: str) -> list[list[str]]:
    """`status` output without what differs between two blogs of the same jobs: each job's
    id is its blog's own, and its age depends on the second the job was submitted in (two
    submits a clock tick apart read "3s" and "4s"). Every job line still shows an age."""
    lines = []
    for line in out.splitlines():
        words = line.split()
        if line.startswith("  ") and len(words) >= 3 and re.fullmatch(r"[0-9a-f]{8}", words[0]):
            assert re.fullmatch(r"\d+[smhd]", words[2]), line
            words = [words[1], *words[3:]]
        lines.append(words)
    assert lines, out
    return lines


@pytest.mark.parametrize(
    "args",
    [
        ["submit", "--source", "post.mdx"],
        ["submit", "--key", "k", "--source", "post.mdx", "--bogus"],
        ["submit", "--key", "k", "--source"],
        ["submit", "--key", "k", "--source", "post.mdx", "--json=1"],
        ["submit", "--key", "k", "--source", "missing.mdx"],
        ["submit", "--key", "k", "--source", "post.mdx", "--target", "../x.mdx"],
        ["submit", "--key", "k", "--source", "post.mdx", "--allow", "nothex"],
        ["submit", "-h"],
        ["status", "--state", "bogus"],
        ["status", "--limit", "0"],
        ["status", "--json", "--state", "received"],
    ],
)
def test_help_and_bad_input_read_the_same_through_either_path(blog: Blog, args: list[str]) -> None:
    (blog.root.parent / "post.mdx").write_text(article("Bad", "Input."))
    fast = run(FAST, "-C", str(blog.root), *args, cwd=blog.root.parent)
    slow = run(CLICK, "-C", str(blog.root), *args, cwd=blog.root.parent)
    assert fast == slow
    code, out, err = fast
    if "-h" in args or args[-1] == "received":
        assert code == 0 and out
    else:
        assert code in (1, 2) and not out and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1 or "Usage:" in err
