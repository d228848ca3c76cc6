"""Where gitpub keeps its files of one user: the node-local config and the caches.

On Linux these are the XDG base directories with `gitpub` below them: an absolute
`$XDG_CONFIG_HOME` or `$XDG_CACHE_HOME`, else `~/.config` or `~/.cache` — the folders
platformdirs names there, computed here because importing platformdirs (which brings
tempfile, shutil and random along) costs every `submit` and `status` more than reading the
config does. Elsewhere (macOS, Windows, Android) the platform's own conventions apply, and
platformdirs, imported when first asked, knows them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gitpub.core.errors import ConfigError

APP = "gitpub"

_XDG = {"config": ("XDG_CONFIG_HOME", ".config"), "cache": ("XDG_CACHE_HOME", ".cache")}


def config_dir() -> Path:
    """The user config's folder: `config.toml` lives there."""
    return _user_dir("config")


def cache_dir() -> Path:
    """The caches' folder (the parsed secret rules, font facts): anything in it can go."""
    return _user_dir("cache")


def _user_dir(kind: str) -> Path:
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel"):
        import platformdirs

        return Path(getattr(platformdirs, f"user_{kind}_dir")(APP, appauthor=False))
    variable, default = _XDG[kind]
    base = os.environ.get(variable, "")
    # The XDG specification: a relative path in these variables is invalid and is ignored.
    if not os.path.isabs(base):
        base = os.path.join(_home(variable), default)
    return Path(base) / APP


def _home(variable: str) -> str:
    """$HOME when it is an absolute path; else (unset, or relative, which names no place)
    the account's home in the password database, as platformdirs does."""
    home = os.environ.get("HOME")
    if home is None or not os.path.isabs(home):
        try:
            import pwd

            home = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):
            home = None
    if not home or not os.path.isabs(home):
        raise ConfigError(f"cannot tell the home directory: set HOME or {variable}")
    return home
