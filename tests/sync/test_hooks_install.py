"""`git blogpub install` / `uninstall` on real repositories, and the hooks as git runs them."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from testing.fixtures import Blog, article
from testing.paths import ROOT

from gitpub.git.repo import Repo
from gitpub.sync import hooks
from gitpub.sync.hooks import setup

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


FOREIGN = b"""#!/bin/sh
# somebody's own hook, kept byte for byte
echo "legacy $*" >> legacy-ran.txt
"""


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every hook file (not git's samples) with its bytes and mode."""
    return {
        p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
        for p in sorted(folder.iterdir())
        if p.is_file() and not p.name.endswith(".sample")
    }


def run(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def state_dir(blog: Blog) -> Path:
    return blog.root / ".git" / "blogpub"


def hand_commit(blog: Blog, name: str = "by-hand.mdx") -> subprocess.CompletedProcess[str]:
    (blog.root / "content/posts" / name).write_text(article("By hand", "Written in an editor."))
    blog.git("add", "content/posts")
    return run(blog.root, "git", "commit", "-q", "-m", f"add {name}")


def test_install_chains_an_existing_hook_and_uninstall_restores_it(blog: Blog) -> None:
    folder = blog.root / ".git" / "hooks"
    (folder / "post-commit").write_bytes(FOREIGN)
    (folder / "post-commit").chmod(0o750)
    before = snapshot(folder)

    blog.ok("install")
    installed = snapshot(folder)
    assert installed["post-commit.before-gitpub"] == before["post-commit"]
    assert "post-commit.legacy" not in installed  # pre-commit's name, never gitpub's
    blog.ok("install")
    assert snapshot(folder) == installed  # idempotent: the same files, byte for byte

    assert hand_commit(blog).returncode == 0
    assert (blog.root / "legacy-ran.txt").read_text() == "legacy \n"  # the old hook still ran
    hints = (state_dir(blog) / "hints").read_text().splitlines()
    assert "post-commit refs/heads/main" in hints  # ... and so did ours

    blog.ok("uninstall")
    assert snapshot(folder) == before  # exactly what was there: bytes and mode
    blog.ok("uninstall")
    assert snapshot(folder) == before


def test_install_into_core_hooks_path(blog: Blog) -> None:
    # A hooks folder outside the worktree, shared by a person's clones; relative to the root.
    blog.git("config", "core.hooksPath", "../shared-hooks")
    default = blog.root / ".git" / "hooks"
    before = snapshot(default)
    blog.ok("install")
    landed = blog.root.parent / "shared-hooks"
    assert sorted(snapshot(landed)) == ["post-commit", "reference-transaction"]
    assert snapshot(default) == before
    assert hand_commit(blog).returncode == 0
    assert (state_dir(blog) / "hints").read_text().count("refs/heads/main") >= 1
    blog.ok("uninstall")
    assert snapshot(landed) == {}


def test_commit_off_the_published_branch_leaves_no_hint(blog: Blog) -> None:
    blog.ok("install")
    blog.git("switch", "-q", "-c", "drafts")
    assert hand_commit(blog).returncode == 0
    blog.git("update-ref", "refs/heads/elsewhere", "HEAD")
    assert not (state_dir(blog) / "hints").exists()


def test_hooks_find_the_shared_state_from_a_linked_worktree(blog: Blog) -> None:
    blog.ok("install")
    blog.git("switch", "-q", "-c", "drafts")
    linked = blog.root.parent / "linked"
    blog.git("worktree", "add", "-q", str(linked), "main")
    proc = run(linked, "git", "commit", "-q", "--allow-empty", "-m", "from a linked worktree")
    assert proc.returncode == 0, proc.stderr
    assert "post-commit refs/heads/main" in (state_dir(blog) / "hints").read_text()


def test_an_older_version_of_our_hook_is_replaced_not_chained(blog: Blog) -> None:
    folder = blog.root / ".git" / "hooks"
    old = f"#!/bin/sh\n# {hooks.HOOK_ID} post-commit version 0\nexit 0\n"
    (folder / "post-commit").write_text(old)
    (folder / "post-commit").chmod(0o755)
    blog.ok("install")
    assert not (folder / "post-commit.before-gitpub").exists()
    assert (folder / "post-commit").read_bytes() == hooks.render(
        "post-commit", hooks.default_marker()
    )
    blog.ok("uninstall")
    assert not (folder / "post-commit").exists()


def test_a_legacy_hook_that_calls_ours_again_does_not_loop(blog: Blog) -> None:
    folder = blog.root / ".git" / "hooks"
    # A hook manager that runs "every hook named post-commit" ends up calling ours again.
    (folder / "post-commit").write_text(
        '#!/bin/sh\necho once >> legacy-ran.txt\nexec "${0%.before-gitpub}" "$@"\n'
    )
    (folder / "post-commit").chmod(0o755)
    blog.ok("install")
    proc = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "x"],
        cwd=blog.root,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert (blog.root / "legacy-ran.txt").read_text() == "once\n"


def test_a_hook_whose_gitpub_is_gone_says_how_to_remove_it(blog: Blog, tmp_path: Path) -> None:
    marker = tmp_path / "site-packages" / "gitpub" / "__init__.py"
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    setup.install(Repo(blog.root), "main", marker=marker)
    blog.git("update-ref", "refs/blog-jobs/some-job", "HEAD", check=False)
    marker.unlink()  # gitpub uninstalled, its hooks left behind

    head = blog.git("rev-parse", "HEAD")
    proc = hand_commit(blog)
    assert proc.returncode == 0 and blog.git("rev-parse", "HEAD^") == head
    assert "no longer installed" in proc.stderr
    assert "delete .git/hooks/post-commit" in proc.stderr
    # Nor does it guard anything any more: a person may clean up after it.
    proc = run(blog.root, "git", "update-ref", "-d", "refs/blog-jobs/some-job")
    assert proc.returncode == 0, proc.stderr
    assert "no longer installed" in proc.stderr


def test_install_refuses_bad_places_with_one_line_and_writes_nothing(
    blog: Blog, tmp_path: Path
) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    res = Blog(bare, bare).blogpub("install")
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1
    assert "bare" in res.stderr and "Traceback" not in res.stderr

    (blog.root / "not-a-folder").write_text("x")
    blog.git("config", "core.hooksPath", "not-a-folder")
    res = blog.blogpub("install")
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1
    assert "not a folder" in res.stderr
    blog.git("config", "--unset", "core.hooksPath")

    folder = blog.root / ".git" / "hooks"
    (folder / "reference-transaction").write_bytes(FOREIGN)
    (folder / "reference-transaction.before-gitpub").write_bytes(b"#!/bin/sh\nexit 0\n")
    before = snapshot(folder)
    res = blog.blogpub("install")
    assert res.returncode == 1 and "already holds" in res.stderr
    assert snapshot(folder) == before  # not even post-commit was written


TEMPLATES = ROOT / "hooks"  # the one copy, installed as the package gitpub.hooktemplates


def test_templates_ship_as_package_data() -> None:
    marker = "/nowhere/gitpub/__init__.py"
    for name in hooks.HOOK_NAMES:
        text = hooks.render(name, Path(marker)).decode()
        assert text.startswith("#!/bin/sh\n") and hooks.HOOK_ID in text.splitlines()[1]
        assert text == (TEMPLATES / name).read_text().replace(hooks.MARKER, marker)
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setup["package-dir"] == {"gitpub.hooktemplates": "hooks"}
    assert sorted(setup["package-data"]["gitpub.hooktemplates"]) == sorted(hooks.HOOK_NAMES)
    assert not (ROOT / "gitpub" / "hooktemplates").exists()  # one copy, no symlink


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    """pyproject.toml lists the packages (the hook templates' mapping needs a list), so a new
    room left out of it would be missing from every installed gitpub."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "gitpub").rglob("__init__.py")
    }
    assert set(setup["packages"]) == folders | {"gitpub.hooktemplates"}


@pytest.mark.parametrize("shell", ["dash", "bash"])
def test_templates_parse_in_posix_shells(shell: str) -> None:
    if subprocess.run(["sh", "-c", f"command -v {shell}"], capture_output=True).returncode:
        pytest.skip(f"{shell} not installed")
    for name in hooks.HOOK_NAMES:
        assert subprocess.run([shell, "-n", str(TEMPLATES / name)]).returncode == 0


SHIM = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
exit 0
"""


def test_hooks_start_no_python_for_ref_updates_that_do_not_concern_gitpub(
    blog: Blog, tmp_path: Path
) -> None:
    """Every way to start Python (or gitpub) by name is a shim that records its call, first on
    PATH; then git does what people do all day on branches gitpub does not publish."""
    blog.ok("install")
    shims, log = tmp_path / "shims", tmp_path / "started.log"
    shims.mkdir()
    minor = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for name in ("python", "python3", minor, "git-blogpub"):
        (shims / name).write_text(SHIM.format(log=log))
        (shims / name).chmod(0o755)
    env = {"PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    other = blog.clone("other")
    other.git("commit", "--quiet", "--allow-empty", "-m", "someone else")
    other.git("push", "--quiet", "origin", "main:main", "main:elsewhere")

    def git_ok(*args: str) -> None:
        proc = run(blog.root, "git", *args, env=env)
        assert proc.returncode == 0, (args, proc.stderr)

    git_ok("switch", "-q", "-c", "drafts")
    git_ok("commit", "-q", "--allow-empty", "-m", "a draft")
    git_ok("commit", "-q", "--amend", "--allow-empty", "-m", "a draft, amended")
    git_ok("tag", "v1")
    git_ok("tag", "-d", "v1")
    git_ok("branch", "scratch")
    git_ok("branch", "-m", "scratch", "scratch2")
    git_ok("branch", "-D", "scratch2")
    git_ok("update-ref", "refs/notes/mine", "HEAD")
    git_ok("fetch", "-q", "origin")  # remote-tracking refs move
    git_ok("reset", "-q", "--hard", "HEAD~1")
    git_ok("switch", "-q", "main")
    git_ok("branch", "-D", "drafts")
    assert not log.exists(), log.read_text()
    assert not (state_dir(blog) / "hints").exists()

    # The shims do catch a start by name, and the hooks are there and do run.
    git_ok("blogpub", "--version")
    assert log.read_text().startswith("git-blogpub --version")
    log.unlink()
    git_ok("commit", "-q", "--allow-empty", "-m", "on the published branch")
    assert "post-commit refs/heads/main" in (state_dir(blog) / "hints").read_text()
