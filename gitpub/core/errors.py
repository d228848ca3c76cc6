"""gitpub's exceptions, in three families the command line tells apart:

- `GitpubError`: an expected failure with a message for the user: one line, exit 1;
- `InternalError`: a bug (a transition the table forbids, locks taken out of order): exit 3,
  the traceback under GITPUB_DEBUG=1 and in the log;
- `Signal`: control flow between gitpub's own layers (a lease taken by another worker); it
  never reaches a user, and reaching the handler is a bug like any other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Finding(Protocol):
    """What an error may say of a secret finding: never the secret itself."""

    @property
    def kind(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def fingerprint(self) -> str: ...


def one_line(text: str) -> str:
    """A message as one line of output: a newline or carriage return that a value carried (a
    key, a file name, a tool's words) is shown escaped, never as a second line."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


class GitpubError(Exception):
    """An expected failure with a message meant for the user (exit status 1)."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(GitpubError):
    """A configuration file is malformed; the message names file, key and expected type."""


class InputError(GitpubError):
    """A submitted source or argument is unusable."""


class UsageError(InputError):
    """An option value that does not parse (`--at tomorrow`): exit status 2, as for the usage
    errors click reports, whichever door the value came through."""

    exit_code = 2


class KeyReused(InputError):
    """An idempotency key already names a job made for another source (or target).

    `key` is the sanitized key (fit for display), `job_id` the job the key names."""

    def __init__(self, key: str, job_id: str, what: str = "source") -> None:
        super().__init__(f"key {key} was used for a different {what} (job {job_id})")
        self.key = key
        self.job_id = job_id
        self.what = what


class SecretsFound(InputError):
    """A submitted source holds secrets; nothing was recorded. Carries the findings (kind,
    line, fingerprint — never the secret) so a caller can show them or allow them."""

    def __init__(self, source: str, findings: Sequence[Finding]) -> None:
        self.source = source
        self.findings = tuple(findings)
        first = self.findings[0]
        more = len(self.findings) - 1
        tail = f" (and {more} more: `git blogpub scan` lists them)" if more else ""
        super().__init__(
            f"{source} line {first.line}: {first.kind} (fingerprint {first.fingerprint}): "
            f"nothing was recorded; remove it or pass --allow {first.fingerprint}{tail}"
        )


class NotARepository(GitpubError):
    """The given path is not inside a git repository."""


class InternalError(Exception):
    """A broken invariant of gitpub itself: a bug, never the user's input."""


class Signal(Exception):  # noqa: N818 - a signal is not an error
    """Control flow between gitpub's own layers; never shown to a user."""


class IllegalTransition(InternalError):
    """A state change that the transition table does not allow: a bug, never user input."""


class LockOrderError(InternalError):
    """A lock was taken out of the fixed order delivery > checkout > repo > db."""


class GitCommandError(GitpubError):
    """A git subprocess failed; carries the command, exit code and stderr."""

    def __init__(self, argv: Sequence[str], returncode: int, stderr: str) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr
        tail = git_cause(stderr) or "no output"
        super().__init__(f"`{' '.join(self.argv)}` exited {returncode}: {tail}")


_SAY_NOTHING = ("failed to push some refs", "the remote end hung up unexpectedly")
"""Lines git adds after the real cause; chosen only when nothing better was said."""


def git_cause(stderr: str) -> str:
    """The line of git's output that says why: an `error:`/`fatal:` line (a remote's or a
    signer's included) other than git's generic closing words, else the last line that is
    not porcelain noise ("Done")."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    prefixes = ("error:", "fatal:", "remote: error:", "remote: fatal:", "gpg:")
    telling = [ln for ln in lines if ln.startswith(prefixes)]
    for ln in telling:
        if not any(g in ln for g in _SAY_NOTHING):
            return ln
    rejected = [ln for ln in lines if ln.startswith("!")]  # `push --porcelain`: ref and why
    if rejected or telling:
        return (rejected or telling)[0]
    useful = [ln for ln in lines if ln not in ("Done", "Done.")]
    return useful[-1] if useful else ""


class JobFault(GitpubError):
    """A failure of one job with a class (`code`, which becomes its failure_code) and git's
    (or the filesystem's) own words in `stderr`, kept whole for `show`."""

    def __init__(self, code: str, message: str, stderr: str = "") -> None:
        self.code = code
        self.stderr = stderr
        cause = git_cause(stderr)
        super().__init__(f"{message}: {cause}" if cause else message)
