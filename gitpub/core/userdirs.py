"""Where gitpub keeps its files of one user: the node-local config and the caches, in the
folders platformdirs names on each platform (on Linux the XDG base directories:
`$XDG_CONFIG_HOME/gitpub`, else `~/.config/gitpub`; the same for the cache)."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from gitpub.core.errors import ConfigError

APP = "gitpub"


def config_dir() -> Path:
    """The user config's folder: `config.toml` lives there."""
    return _absolute(platformdirs.user_config_dir(APP, appauthor=False), "XDG_CONFIG_HOME")


def cache_dir() -> Path:
    """The caches' folder (the parsed secret rules, font facts): anything in it can go."""
    return _absolute(platformdirs.user_cache_dir(APP, appauthor=False), "XDG_CACHE_HOME")


def _absolute(folder: str, variable: str) -> Path:
    # A relative folder would move with the working directory (`-C`, a hook, a service):
    # a node's config and caches must be one place.
    path = Path(folder)
    if not path.is_absolute():
        raise ConfigError(f"cannot tell the home directory: set HOME or {variable}")
    return path
