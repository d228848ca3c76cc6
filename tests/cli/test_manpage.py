"""`git blogpub --help` works: git turns it into `git help blogpub`, which opens the manual
page that the package installs, and that page lists every command the parser knows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from testing.paths import ROOT

from gitpub.cli.app import cli
from gitpub.cli.manpage import render


def test_committed_manual_page_matches_the_command_definitions() -> None:
    committed = (ROOT / "docs" / "git-blogpub.1").read_text("utf-8")
    assert committed == render(), "regenerate: python -m gitpub.cli.manpage > docs/git-blogpub.1"


@pytest.mark.skipif(shutil.which("man") is None, reason="needs man(1)")
def test_git_blogpub_help_opens_the_installed_manual(tmp_path: Path) -> None:
    # Install the package as a user would (a wheel into a prefix; --ignore-installed keeps the
    # environment's own install of gitpub where it is), then ask git for help the
    # way a user does, with no MANPATH: man finds <prefix>/share/man from <prefix>/bin on PATH.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "gitpub", "hooks", "docs"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, symlinks=True)
        else:
            shutil.copy2(ROOT / name, src / name)
    prefix = tmp_path / "prefix"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--ignore-installed",
            "--prefix",
            str(prefix),
            ".",
        ],
        cwd=src,
        check=True,
        capture_output=True,
    )
    page = prefix / "share" / "man" / "man1" / "git-blogpub.1"
    assert page.is_file()
    site = next(prefix.glob("lib/python*/site-packages"))
    env = {k: v for k, v in os.environ.items() if k != "MANPATH"}
    env.update(
        PATH=f"{prefix / 'bin'}{os.pathsep}{env['PATH']}",
        PYTHONPATH=str(site),
        MANPAGER="cat",
        PAGER="cat",
        MANWIDTH="100",
    )
    proc = subprocess.run(
        ["git", "blogpub", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        assert f"git blogpub {name}" in proc.stdout
    assert "git blogpub topic close" in proc.stdout
    assert "--until-idle" in proc.stdout
    assert proc.stderr == ""  # no troff warning, though no terminal is there
    # The console script itself, started without git, opens the same page.
    direct = subprocess.run(
        [str(prefix / "bin" / "git-blogpub"), "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (direct.returncode, direct.stderr) == (0, "")
    assert "git blogpub topic close" in direct.stdout and "EXIT STATUS" in direct.stdout


def test_usage_errors_point_to_h_and_to_the_manual(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gitpub", *args], cwd=tmp_path, capture_output=True, text=True
        )

    top = run("publsh")
    assert top.returncode == 2
    assert "Try 'git blogpub -h' for help or 'git blogpub --help' for the manual." in top.stderr
    sub = run("status", "--bogus")
    assert sub.returncode == 2
    assert "Try 'git blogpub status -h' for help." in sub.stderr
    short = run("status", "-h")
    assert short.returncode == 0 and "--json" in short.stdout
