"""`git blogpub demo`: the whole product on a scratch repository, in one command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont
from testing.fixtures import git
from testing.paths import ROOT


def _demo(where: Path, argv0: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = argv0 or [sys.executable, "-m", "gitpub"]
    return subprocess.run([*argv, "demo", str(where)], capture_output=True, text=True, timeout=300)


def _check_outcome(where: Path, out: str) -> None:
    assert "the subsets conflict, gitpub regenerates" in out
    assert "(font-only conflict: subsets regenerated)" in out
    assert "→ CONFLICT" in out
    remote = where / "remote.git"
    # Scaffold, three published articles, and the person's edit: nothing else, no duplicate.
    assert git(remote, "rev-list", "--count", "main") == "5"
    posts = git(remote, "ls-tree", "--name-only", "main", "content/posts/").split()
    assert sorted(posts) == [
        "content/posts/.keep",
        "content/posts/durable.mdx",
        "content/posts/fonts.mdx",
        "content/posts/garden.mdx",
    ]
    durable = git(remote, "show", "main:content/posts/durable.mdx")
    assert durable.endswith("加上一句。") and "修改一处错字" not in durable  # nothing overwritten
    # The font on the remote covers every character of every article (union of both nodes).
    font_bytes = subprocess.run(
        ["git", "show", "main:public/fonts/blog.woff2"], cwd=remote, capture_output=True, check=True
    ).stdout
    font_file = where / "check.woff2"
    font_file.write_bytes(font_bytes)
    cmap = set(TTFont(str(font_file)).getBestCmap())
    for post in ("durable", "fonts", "garden"):
        text = git(remote, "show", f"main:content/posts/{post}.mdx")
        assert {ord(c) for c in text if not c.isspace()} <= cmap
    status = json.loads(
        subprocess.run(
            [sys.executable, "-m", "gitpub", "-C", str(where / "blog"), "status", "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    states = sorted(j["state"] for j in status["jobs"])
    assert states == ["CONFLICT", "PUBLISHED", "PUBLISHED"]


def test_demo_runs_end_to_end_and_twice(tmp_path: Path) -> None:
    where = tmp_path / "demo"
    first = _demo(where)
    assert first.returncode == 0, first.stderr
    _check_outcome(where, first.stdout)
    again = _demo(where)  # an earlier demo folder is started over
    assert again.returncode == 0, again.stderr
    _check_outcome(where, again.stdout)


def test_demo_refuses_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    res = _demo(tmp_path)
    assert res.returncode == 1 and "not an earlier demo folder" in res.stderr
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_demo_builds_its_own_font_without_a_system_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gitpub.cli.commands import demo, demo_font

    monkeypatch.setattr(demo_font, "system_font", lambda: None)
    monkeypatch.chdir(tmp_path)
    demo.main(tmp_path / "demo")
    blog = tmp_path / "demo" / "blog"
    assert (blog / "fonts" / "demo.ttf").is_file()
    assert 'source = "fonts/demo.ttf"' in (blog / ".blogpub.toml").read_text()
    _check_outcome(tmp_path / "demo", capsys.readouterr().out)  # what the demo printed


def _copy_of_the_source(dest: Path) -> Path:
    """The tracked and not-ignored files of this tree, so a build leaves nothing behind here."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        src, out = ROOT / name, dest / name
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the work tree, not yet committed
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            out.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, out)
    return dest


@pytest.mark.slow
def test_readme_first_command_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    """`pip install . && git blogpub demo DIR` with a real, non-editable install into a new venv,
    offline and outside the source tree: the wheel is built from a copy of the tree with this
    interpreter's setuptools and installed by its distribution name, `git-blogpub`; the new
    venv borrows this one's installed dependencies."""
    src = _copy_of_the_source(tmp_path / "src")
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index"]
        + ["--no-build-isolation", "--wheel-dir", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.startswith("git_blogpub-"), wheel.name  # the distribution's own name

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # This interpreter's site-packages as plain path entries (their .pth files, among them
    # the editable install of this tree, are not run), after the venv's own.
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "borrowed-dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    install = subprocess.run(
        # By name, as a user installs it from the package index: `git-blogpub`. The borrowed
        # site-packages hold this tree's editable install under that name: ignored, not removed.
        [str(py), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps"]
        + ["--ignore-installed", "--find-links", str(dist), "git-blogpub"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    env = {**os.environ, "PATH": f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    where_from = subprocess.run(
        [str(py), "-c", "import gitpub; print(gitpub.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert where_from.startswith(site), where_from  # the installed copy, not this tree
    shown = subprocess.run(
        [str(py), "-m", "pip", "show", "git-blogpub"], capture_output=True, text=True, env=env
    ).stdout
    assert "Name: git-blogpub" in shown, shown
    where = tmp_path / "demo"
    res = subprocess.run(
        ["git", "blogpub", "demo", str(where)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    _check_outcome(where, res.stdout)
