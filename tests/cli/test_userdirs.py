"""gitpub.core.userdirs names the folders platformdirs names: on Linux the XDG base directories,
under each way the XDG variables and HOME can be set, and what reads them finds them there."""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

import platformdirs
import pytest

from gitpub import config
from gitpub.core import userdirs
from gitpub.scan import rules

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the XDG folders are Linux's convention"
)

VARIABLES = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME")


def both() -> list[tuple[Path, Path]]:
    """(ours, platformdirs') for each folder gitpub uses."""
    return [
        (userdirs.config_dir(), Path(platformdirs.user_config_dir("gitpub", appauthor=False))),
        (userdirs.cache_dir(), Path(platformdirs.user_cache_dir("gitpub", appauthor=False))),
    ]


@pytest.mark.parametrize(
    "setting",
    [
        "absolute",  # as the hermetic fixture and most desktops set them
        "unset",  # ~/.config, ~/.cache
        "empty",  # the same as unset
        "relative",  # the XDG specification: ignored, as if unset
        "trailing slash",
    ],
)
def test_the_folders_are_platformdirs_ones(
    setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in VARIABLES:
        value = {
            "absolute": str(tmp_path / name.lower()),
            "empty": "",
            "relative": "relative/dir",
            "trailing slash": str(tmp_path / name.lower()) + "/",
        }.get(setting)
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    for ours, theirs in both():
        assert ours == theirs
        assert ours.is_absolute() and ours.name == "gitpub"
    config_dir, cache_dir = (ours for ours, _ in both())
    if setting in ("absolute", "trailing slash"):
        assert config_dir == tmp_path / "xdg_config_home" / "gitpub"
        assert cache_dir == tmp_path / "xdg_cache_home" / "gitpub"
    else:
        home = Path(os.environ["HOME"])
        assert config_dir == home / ".config" / "gitpub"
        assert cache_dir == home / ".cache" / "gitpub"


@pytest.mark.parametrize("home", ["unset", "relative"])
def test_without_a_usable_home_the_account_home_counts(
    home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A HOME that is missing or relative names no folder: the password database's does."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    if home == "unset":
        monkeypatch.delenv("HOME")
    else:
        monkeypatch.setenv("HOME", "not/absolute")
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)
    for ours, theirs in both():
        assert ours == theirs
    assert userdirs.config_dir() == account / ".config" / "gitpub"


def test_the_user_config_and_the_rule_cache_live_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What reads these folders: the node's config.toml (its node name counts) and the
    parsed secret rules (written on first use, read after)."""
    monkeypatch.delenv("GITPUB_NODE")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    user = tmp_path / "conf" / "gitpub" / "config.toml"
    assert config.user_config_path() == user
    user.parent.mkdir(parents=True)
    user.write_text('node = "laptop"\n')
    assert config.load(tmp_path).node == "laptop"

    assert rules._cache_dir() == tmp_path / "cache" / "gitpub" / "scan"
    rules._load_file("gitpub.toml")
    # config.load read the ruleset already (a node name is checked for secrets): each file
    # of it, gitpub's own among them, is parsed once into this folder.
    assert "gitpub" in {p.name.split("-")[0] for p in rules._cache_dir().iterdir()}
