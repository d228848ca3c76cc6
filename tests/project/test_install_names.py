"""The distribution is `git-blogpub`: the package index's `gitpub` is someone else's project
(a GitHub-API library without our extras), so an install line naming it installs the wrong
thing, and `pip install -U` of it would "upgrade" gitpub into that project."""

from __future__ import annotations

import re
import subprocess
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the floor reads TOML with tomli
    import tomli as tomllib

from testing.paths import ROOT

OTHER = "git" + "pub"  # spelled apart, so this file does not find itself
WRONG = (
    # the other name after `pip install` and its options, bare, quoted or pinned
    re.compile(rf"\bpip3?\s+install\s+(?:-\S+\s+)*['\"]?{OTHER}(?![\w-])"),
    # an extra (`[postgresql]`, `[fast]`) of the other name, quoted or not
    re.compile(rf"(?<![\w-]){OTHER}\["),
    # the installed version asked for by the import name instead of the distribution's
    re.compile(rf"\b(?:version|distribution|metadata)\(\s*['\"]{OTHER}['\"]"),
)


def _tree() -> list[str]:
    """Every file of the tree, tracked or new, that .gitignore does not leave out."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return sorted({name for name in out.decode().split("\0") if name})


def test_the_distribution_is_named_git_blogpub() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert meta["name"] == "git-blogpub"
    assert meta["scripts"]["git-blogpub"].startswith(f"{OTHER}.cli.")  # the import name stays
    from gitpub import __version__

    assert meta["version"] == __version__  # what `--version` and `doctor` print


def test_no_install_line_names_the_other_project() -> None:
    found = []
    for name in _tree():
        path = ROOT / name
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue  # a font, an image
        text = data.decode("utf-8", "replace")
        for pattern in WRONG:
            for hit in pattern.finditer(text):
                line = text.count("\n", 0, hit.start()) + 1
                found.append(f"{name}:{line}: {hit.group(0)}")
    assert found == [], "say git-blogpub:\n" + "\n".join(found)


def test_the_patterns_catch_what_they_are_for() -> None:
    bad = [
        f"pip install {OTHER}",
        f"pip install -U {OTHER}",
        f"pip install '{OTHER}[postgresql]'",
        f'ARG GITPUB="{OTHER}[postgresql]"',
        f'version("{OTHER}")',
        f"python -m pip install --user {OTHER}==0.1.0",
    ]
    good = [
        "pip install git-blogpub",
        "pip install 'git-blogpub[postgresql]'",
        "pip install -e '.[test]'",
        "pip install .",
        f"import {OTHER}; {OTHER}.Publisher",
        f"pip install {OTHER}-worker-tools",  # not this name
    ]
    assert all(any(p.search(s) for p in WRONG) for s in bad), bad
    assert not [s for s in good if any(p.search(s) for p in WRONG)]
