"""Where `git blogpub` starts: the commands an agent calls by the hundred skip click.

`submit` and `status` are short; for them, importing click would cost more than all the
rest of the command. So their command line is parsed here, from the tables in
`gitpub.cli.options` that the click commands are built from too, and handed to the same plain
function. Any command line this parser does not take exactly as it is written goes to click
instead, which then gives the help, the usage error and the exit status it always gave."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gitpub.cli import options
from gitpub.cli.options import FLAG, MULTIPLE, VALUE, Option
from gitpub.core.errors import GitpubError, one_line
from gitpub.store.errors import StoreError


def _value(token: str) -> bool:
    """Whether a token can be an option's value here. A value that looks like an option
    (`--key --json`) is left to click, which decides whether it is one."""
    return token == "-" or not token.startswith("-")


def parse(argv: Sequence[str]) -> tuple[str, Path, dict[str, object]] | None:
    """(command, -C path, keyword arguments) of a command line the fast path takes, or None
    when click must read it: another command, help, an unknown or malformed option, a value
    to convert, a required option missing."""
    root = {o.flag: o for o in options.ROOT}
    path = root["-C"].default or "."
    i = 0
    while i < len(argv) and argv[i] in root:
        if i + 1 >= len(argv) or not _value(argv[i + 1]):
            return None
        path = argv[i + 1]
        i += 2
    if i >= len(argv) or argv[i] not in options.COMMANDS:
        return None
    command, table = argv[i], options.COMMANDS[argv[i]]
    values = _parse_options(argv[i + 1 :], table)
    return None if values is None else (command, Path(path), values)


def _parse_options(args: Sequence[str], table: Sequence[Option]) -> dict[str, object] | None:
    by_flag = {o.flag: o for o in table}
    values: dict[str, object] = {o.dest: options.default(o) for o in table}
    given: set[str] = set()
    i = 0
    while i < len(args):
        name, eq, attached = args[i].partition("=")
        opt = by_flag.get(name)
        if opt is None or not name.startswith("--") or opt.kind not in (VALUE, MULTIPLE, FLAG):
            return None
        if opt.kind == FLAG:
            if eq:
                return None
            values[opt.dest] = True
            i += 1
            continue
        if eq:
            value, i = attached, i + 1
        elif i + 1 < len(args):
            value, i = args[i + 1], i + 2
        else:
            return None
        if not _value(value) or (opt.kind == VALUE and opt.dest in given):
            return None
        if opt.kind == MULTIPLE:
            values[opt.dest] = (*values[opt.dest], value)  # type: ignore[misc]
        else:
            values[opt.dest] = value
        given.add(opt.dest)
    if any(o.required and o.dest not in given for o in table):
        return None
    return values


def run_command(command: str, path: Path, values: dict[str, Any]) -> int | None:
    """Call the plain function behind a fast command; the click commands call it too."""
    if command == "submit":
        from gitpub.cli.commands import submit

        submit.main(path, **values)
    elif command == "status":
        from gitpub.cli.commands import status

        status.main(path, **values)
    elif command == "fonts":
        # A build script runs it before every deploy: nothing changed must cost no more
        # than `status` does.
        from gitpub.cli.commands import fonts

        fonts.main(path, **values)
    else:  # pragma: no cover - options.COMMANDS and this function are edited together
        raise KeyError(command)
    return None


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
    None when the log cannot be written (the line on stderr is then all there is)."""
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
            out.write(sanitize(text) + "\n")
    except (OSError, GitpubError):
        return None
    return log


def main(argv: list[str] | None = None) -> None:
    """The console script and `python -m gitpub`."""
    args = sys.argv[1:] if argv is None else argv
    fast = parse(args)
    if fast is None:
        from gitpub.cli import app

        app.main(args)
    else:
        guarded(lambda: run_command(*fast))
