"""The command line keeps the conventions a git user expects: `--version`, a `--help` that
works without a manual page, one rule for exit 2 against 1, a `-C` that names what is
missing, and a CONFLICT whose `show` prints the commands that settle it, with this blog's own
remote and branch."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testing.fixtures import Blog, article, git

from gitpub import __version__
from gitpub.cli import manpage

PY = [sys.executable, "-m", "gitpub"]


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PY, *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def test_version_is_printed_by_the_option_doctor_and_the_crash_log(blog: Blog) -> None:
    res = run("--version", cwd=blog.root)
    assert (res.returncode, res.stdout, res.stderr) == (0, f"git blogpub {__version__}\n", "")
    doctor = blog.blogpub("doctor").stdout.splitlines()
    assert doctor[0].split()[:2] == ["ok", "version"]
    assert f"git blogpub {__version__}" in doctor[0]

    # A bug's entry in the crash log says which gitpub it came from.
    from gitpub.cli import entry

    with pytest.raises(SystemExit):
        entry.guarded(lambda: {}["no such key"])
    log = Path(os.environ["XDG_CACHE_HOME"]) / "gitpub" / "gitpub.log"
    assert f"gitpub {__version__}, Python " in log.read_text("utf-8")


def test_help_without_a_manual_page_is_the_h_text_and_exit_0(tmp_path: Path) -> None:
    if manpage.installed_page() is not None:
        pytest.skip("a manual page is installed here; test_manpage covers that case")
    short = run("-h", cwd=tmp_path)
    long = run("--help", cwd=tmp_path)
    assert short.returncode == long.returncode == 0
    assert long.stdout == short.stdout and "Commands:" in long.stdout
    assert long.stderr == ""
    # Below the root, --help is -h, as click gives it.
    assert run("status", "--help", cwd=tmp_path).stdout == run("status", "-h", cwd=tmp_path).stdout


@pytest.mark.skipif(shutil.which("man") is None, reason="needs man(1)")
@pytest.mark.parametrize("width", [None, "60", "200"])
def test_the_manual_page_renders_without_troff_warnings(width: str | None) -> None:
    """man with no terminal (a pipe, a CI log) and at any width: not one warning on stderr."""
    page = Path(__file__).resolve().parents[2] / "docs" / manpage.PAGE
    env = {k: v for k, v in os.environ.items() if k not in ("MANWIDTH", "COLUMNS")}
    if width:
        env["MANWIDTH"] = width
    res = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, env=env)
    assert res.returncode == 0 and res.stderr == ""
    assert "git blogpub topic close" in res.stdout


def test_exit_2_for_any_bad_option_value_and_nothing_recorded(blog: Blog) -> None:
    src = blog.root.parent / "post.md"
    src.write_text(article("Later", "Scheduled with a bad time."))
    submit = ["submit", "--key", "k", "--source", str(src)]
    for args, named in [
        ([*submit, "--at", "tomorrow"], "--at"),
        ([*submit, "--at", "2026-12-24T08:00"], "--at"),  # no offset: nodes would disagree
        (["status", "--since", "yesterday"], "--since"),
        (["status", "--limit", "0"], "--limit"),
        (["status", "--state", "done"], "--state"),
        (["-C", str(blog.root / "nowhere"), "status"], "-C"),
        (["submit", "--source", str(src)], "--key"),  # missing
        (["publish"], "publish"),  # no such command
    ]:
        res = blog.blogpub(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert named in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (blog.root / ".git" / "blogpub").exists()  # nothing was done
    # The same line runs, and fails: exit 1.
    res = blog.blogpub("submit", "--key", "k", "--source", str(src.with_name("gone.md")))
    assert res.returncode == 1 and "no such source file" in res.stderr


def test_dash_c_names_the_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    res = run("-C", str(missing), "status", cwd=tmp_path)
    assert res.returncode == 2
    assert str(missing) in res.stderr and "does not exist" in res.stderr
    assert "not inside a git repository" not in res.stderr
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    res = run("-C", str(afile), "status", cwd=tmp_path)
    assert res.returncode == 2 and str(afile) in res.stderr


def test_submit_h_shows_where_an_asset_goes(tmp_path: Path) -> None:
    out = run("submit", "-h", cwd=tmp_path).stdout
    assert "--asset FILE[=REL]" in out
    assert "--asset FILE[=REL]" in run("dry-run", "-h", cwd=tmp_path).stdout


def _master_blog(base: Path) -> Blog:
    """A blog published as many are: branch `master`, through a remote not named origin."""
    remote = base / "remote.git"
    git(base, "init", "--quiet", "--bare", "--initial-branch=master", str(remote))
    root = base / "blog"
    git(base, "clone", "--quiet", "--origin", "upstream", str(remote), str(root))
    git(root, "checkout", "--quiet", "-b", "master")
    (root / ".blogpub.toml").write_text(
        '[publish]\nremote = "upstream"\nbranch = "master"\ncontent = ["content/post"]\n'
    )
    (root / "content" / "post").mkdir(parents=True)
    (root / "content" / "post" / "hello.md").write_text(article("Hello", "By hand."))
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "scaffold")
    git(root, "push", "--quiet", "upstream", "master")
    return Blog(root, remote)


def test_show_of_a_conflict_prints_the_worktree_and_commands_that_settle_it(
    tmp_path: Path,
) -> None:
    blog = _master_blog(tmp_path)
    target = "content/post/hello.md"
    src = tmp_path / "agent.md"
    src.write_text(article("Hello", "The agent's version."))
    job = blog.ok(
        "submit", "--key", "u", "--source", str(src), "--target", target, "--json"
    ).json()["job_id"]
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_local_committed"})
    assert res.returncode == 137
    person = tmp_path / "person"
    git(tmp_path, "clone", "--quiet", "--branch", "master", str(blog.remote), str(person))
    (person / target).write_text(article("Hello", "A person's version."))
    git(person, "commit", "--quiet", "-am", "a person edits hello")
    git(person, "push", "--quiet", "origin", "master")
    blog.ok("run", "--until-idle")
    assert blog.job(job)["job"]["state"] == "CONFLICT"

    shown = blog.ok("show", job).stdout
    worktree = blog.root / ".git" / "blogpub" / "worktrees" / job
    assert f"worktree:        {worktree}" in shown
    steps = [s.strip() for s in shown.split("\nto settle it:\n", 1)[1].splitlines()]
    assert "git fetch upstream && git rebase upstream/master" in steps
    assert "origin/" not in shown and "/main" not in shown

    # The commands, pasted as printed into a shell, with the edit they ask for made.
    merged = article("Hello", "Both versions, merged by a person.")
    (tmp_path / "merged.md").write_text(merged)
    script = "\n".join(
        f"cp {tmp_path / 'merged.md'} {target}" if s.startswith("# edit") else s
        for s in steps
        if not s.startswith("# or")
    )
    env = {
        **os.environ,
        "GIT_EDITOR": "true",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(["sh", "-c", script], cwd=tmp_path, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    blog.ok("run", "--until-idle")
    assert blog.job(job)["job"]["state"] == "PUBLISHED"
    assert git(blog.remote, "show", f"master:{target}") == merged.rstrip("\n")
