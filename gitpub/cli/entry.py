"""Where `git blogpub` starts, and the one handler every command ends in.

click parses every command line (`gitpub.cli.app`); this module is what is left around it:
`guarded`, which turns what a command raised into one line and an exit status, and the log a
bug's traceback goes to."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from gitpub import __version__
from gitpub.core.errors import GitpubError, one_line
from gitpub.store.errors import StoreError


def _say(line: str) -> None:
    from gitpub.cli.commands.output import printable

    sys.stderr.write(printable(line) + "\n")
    sys.stderr.flush()


def _stdout_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it (a broken pipe of a step
    command's input is a failure to report, not this)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def guarded(call: Callable[[], object]) -> None:
    """Run a command and exit: expected failures print one line and exit 1; a bug prints one
    line and exits 3, its traceback in the log (GITPUB_DEBUG=1 raises it instead)."""
    from gitpub.scan.sanitize import sanitize

    try:
        rc = call()
    except StoreError as exc:
        # Whichever store: one line naming it (never its URL), with that store's advice.
        _say(f"git blogpub: {one_line(sanitize(exc.message))}")
        sys.exit(1)
    except GitpubError as exc:
        _say(f"git blogpub: {one_line(sanitize(exc.message))}")
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, EOFError):
        # As click ends a command it runs: a new line, then one word on what happened.
        _say("\ngit blogpub: aborted")
        sys.exit(1)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError) and _stdout_gone():
            # The reader went away (`status | head`): stop quietly, as git and the commands
            # click runs do, and let nothing flush into the closed pipe on the way out.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        # The filesystem refused (a full disk, a read-only mount): its words, one line.
        where = f": {exc.filename}" if exc.filename else ""
        _say(one_line(f"git blogpub: {sanitize(str(exc.strerror or exc))}{sanitize(where)}"))
        sys.exit(1)
    except Exception as exc:  # a bug: one line and exit 3; the traceback goes to the log
        if os.environ.get("GITPUB_DEBUG"):
            raise
        log = _log_bug(exc)
        where = f"the traceback is in {log}" if log else "set GITPUB_DEBUG=1 for the traceback"
        said = one_line(sanitize(str(exc)))
        _say(f"git blogpub: internal error: {type(exc).__name__}: {said} ({where})")
        sys.exit(INTERNAL_ERROR)
    sys.exit(rc if isinstance(rc, int) else 0)


INTERNAL_ERROR = 3
"""The exit status of a bug, apart from 1 (the operation failed) and 2 (usage)."""


def _log_bug(exc: BaseException) -> Path | None:
    """Append the sanitized traceback to `<user cache>/gitpub.log`, as pre-commit keeps one;
    None when the log cannot be written (the line on stderr is then all there is). Each entry
    names the version, so a report says which gitpub it came from."""
    import platform
    import time
    import traceback

    from gitpub.core import userdirs
    from gitpub.scan.sanitize import sanitize

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        log = userdirs.cache_dir() / "gitpub.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as out:
            out.write(f"### {stamp} git blogpub {sanitize(' '.join(sys.argv[1:]))}\n")
            out.write(f"gitpub {__version__}, Python {platform.python_version()}\n")
            out.write(sanitize(text) + "\n")
    except (OSError, GitpubError):
        return None
    return log


def main(argv: list[str] | None = None) -> None:
    """The console script and `python -m gitpub`."""
    from gitpub.cli import app

    app.main(sys.argv[1:] if argv is None else argv)
