"""Trust: a command named by the repository's shared config runs only once this node allowed
it.

Anyone who can push to the blog can change `.blogpub.toml`; a writer node that ran whatever
argv lists that file names would run a stranger's code with the agent's credentials. So, as
git never runs hooks from a repository's history and direnv/mise run a folder's commands only
after `allow`/`trust`, an external step from `.blogpub.toml` runs only when this node has
allowed exactly the current set of such commands (`git blogpub trust`). Built-in steps and
steps from the node's own user config need no allowance: the node's owner wrote those."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gitpub.config import STEP_ROLES, Config
from gitpub.core.errors import ConfigError, GitpubError
from gitpub.trust import allowances
from gitpub.trust.allowances import Allowance
from gitpub.trust.commands import CommandSet, role_of, shared_commands

__all__ = [
    "Allowance",
    "CommandSet",
    "Gate",
    "NotAllowed",
    "Standing",
    "not_allowed_message",
    "shared_commands",
    "standing",
]

FAILURE_CODE: Final = "not_allowed"
"""The failure_code of a job held in REVIEW because its commands are not allowed."""


class NotAllowed(GitpubError):
    """A step's command comes from the shared config and this node has not allowed it."""


def not_allowed_message(node: str) -> str:
    return (
        "the blog's config names commands this node has not allowed: "
        f"run `git blogpub trust` on node {node}"
    )


@dataclass(frozen=True)
class Standing:
    """Where this node stands with the repository's current command set."""

    current: CommandSet
    allowed: Allowance | None
    problem: str | None = None  # the allowance file could not be read

    @property
    def ok(self) -> bool:
        """True when nothing from the shared config would be refused."""
        return self.current.empty or (
            self.allowed is not None and self.allowed.sha256 == self.current.sha256
        )


def standing(cfg: Config, repository: Path) -> Standing:
    current = shared_commands(cfg)
    try:
        allowed = allowances.find(repository)
    except ConfigError as exc:
        return Standing(current, None, exc.message)  # unreadable: nothing counts as allowed
    return Standing(current, allowed)


@dataclass(frozen=True)
class Gate:
    """Asked right before an external step starts; raises NotAllowed to stop it.

    It reads the allowance file every time, so a `trust` (or `--revoke`) takes effect in a
    worker that is already running, at its next step."""

    cfg: Config
    repository: Path  # the git directory the allowance is recorded under

    def require(self, kind: str, argv: Sequence[str]) -> None:
        role = role_of(kind)
        if role in STEP_ROLES and role not in self.cfg.shared_steps:
            return  # the node's own step (user config): its owner wrote it
        here = standing(self.cfg, self.repository)
        # Fail closed: a command the allowed set does not hold never runs, whatever asked.
        if not here.ok or (role, tuple(argv)) not in here.current.commands:
            extra = f" ({here.problem})" if here.problem else ""
            raise NotAllowed(not_allowed_message(self.cfg.node) + extra)
