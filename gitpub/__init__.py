"""gitpub: durable, exactly-once publication of articles into a git-backed blog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gitpub.core.version import VERSION as __version__

__all__ = ["KeyReused", "Publisher", "SecretsFound", "Submitted", "__version__"]

if TYPE_CHECKING:
    from gitpub.api import Publisher, Submitted
    from gitpub.core.errors import KeyReused, SecretsFound


def __getattr__(name: str) -> Any:
    # The API pulls in pygit2 and SQLite; `python -m gitpub --help` and the hooks' fast
    # paths should not pay for that just by importing the package.
    if name == "KeyReused":
        from gitpub.core.errors import KeyReused

        return KeyReused
    if name in ("Publisher", "Submitted"):
        from gitpub import api

        return getattr(api, name)
    if name == "SecretsFound":
        from gitpub.core.errors import SecretsFound

        return SecretsFound
    raise AttributeError(name)
