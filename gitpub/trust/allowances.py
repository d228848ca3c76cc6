"""This node's allowances, one per repository, in `trust.toml` beside the user config.

The file is gitpub's own: `git blogpub trust` rewrites it whole (atomically, under a file
lock, so two `trust` runs never lose each other's entry). The user config file, with the
person's comments and settings, is never written. An allowance names the repository by its
git directory, so a second clone on the same node must be trusted on its own, as direnv and
mise key theirs by folder."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import filelock

from gitpub.config import user_config_path
from gitpub.core.errors import ConfigError
from gitpub.core.files import write_atomic
from gitpub.scan.sanitize import sanitize
from gitpub.trust.commands import CommandSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

_HEADER = """\
# Commands from blogs' .blogpub.toml that this node allows to run, one [[allowed]] table per
# repository (named by its git directory). Written by `git blogpub trust`; take one back
# with `git blogpub trust --revoke`. A changed command set needs a new `trust`.
"""


@dataclass(frozen=True)
class Allowance:
    repository: str  # the repository's git directory
    sha256: str  # CommandSet.sha256 of the allowed set: the key that decides
    at: str  # when it was allowed (UTC)
    lines: tuple[str, ...]  # CommandSet.lines(), sanitized: for people, never for deciding


def path() -> Path:
    return user_config_path().with_name("trust.toml")


def find(repository: Path) -> Allowance | None:
    """The allowance recorded for this repository, if any. A malformed file is a ConfigError
    naming it: the caller treats that as nothing allowed."""
    key = str(repository)
    return next((a for a in read_all(path()) if a.repository == key), None)


def record(repository: Path, commands: CommandSet) -> Allowance:
    """Allow exactly `commands` for this repository, replacing what was allowed before."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    # An argv may carry a token: what reaches the disk is the sanitized view, and the
    # decision rests on the hash alone.
    lines = tuple(sanitize(line) for line in commands.lines())
    new = Allowance(str(repository), commands.sha256, stamp, lines)
    with _locked():
        kept = [a for a in read_all(path()) if a.repository != new.repository]
        _write([*kept, new])
    return new


def revoke(repository: Path) -> Allowance | None:
    """Take back this repository's allowance; the one removed, or None when there was none."""
    with _locked():
        every = read_all(path())
        gone = next((a for a in every if a.repository == str(repository)), None)
        if gone is not None:
            _write([a for a in every if a is not gone])
    return gone


def _locked() -> filelock.BaseFileLock:
    target = path()
    target.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(str(target.with_name(f".{target.name}.lock")), timeout=30)


# --------------------------------------------------------------------- reading and writing


def read_all(file: Path) -> list[Allowance]:
    if not file.is_file():
        return []
    try:
        with file.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{file}: not UTF-8; TOML files are UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror}") from None
    entries = data.get("allowed", [])
    if set(data) - {"allowed"} or not isinstance(entries, list):
        raise ConfigError(f"{file}: only [[allowed]] tables belong here")
    return [_entry(file, i, e) for i, e in enumerate(entries)]


def _entry(file: Path, index: int, raw: object) -> Allowance:
    where = f"{file}: allowed[{index}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    fields = {"repository": str, "sha256": str, "at": str, "commands": list}
    for key, kind in fields.items():
        if not isinstance(raw.get(key), kind):
            raise ConfigError(f"{where}.{key} must be a {kind.__name__}")
    lines = raw["commands"]
    if not all(isinstance(line, str) for line in lines):
        raise ConfigError(f"{where}.commands must be a list of strings")
    return Allowance(raw["repository"], raw["sha256"], raw["at"], tuple(lines))


def _write(entries: Iterable[Allowance]) -> None:
    parts = [_HEADER]
    for a in entries:
        parts += [
            "\n[[allowed]]\n",
            f"repository = {_string(a.repository)}\n",
            f"sha256 = {_string(a.sha256)}\n",
            f"at = {_string(a.at)}\n",
            "commands = [\n" + "".join(f"  {_string(line)},\n" for line in a.lines) + "]\n",
        ]
    try:
        data = "".join(parts).encode("utf-8")
    except UnicodeEncodeError:
        # A git directory whose name is not UTF-8 cannot be written as TOML; refusing keeps
        # every other repository's allowance readable.
        raise ConfigError(f"{path()}: cannot record a repository path that is not UTF-8") from None
    write_atomic(path(), data)


def _string(value: str) -> str:
    """A TOML basic string. JSON's escapes are TOML's, except that TOML also wants DEL
    escaped; surrogates cannot occur in text that came from TOML or from git's paths here."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
