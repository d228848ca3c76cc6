"""The git-blogpub(1) manual page, written from the click command definitions.

`git blogpub --help` is turned by git into `git help blogpub`, which opens the manual page
`git-blogpub(1)`; like git-lfs, gitpub installs one (`share/man/man1/git-blogpub.1`). The
page is generated here, so it lists exactly the commands and options `cli.py` defines:

    python -m gitpub.cli.manpage > docs/git-blogpub.1

and a test fails when the committed page and the command definitions drift apart."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import click

from gitpub import __version__
from gitpub.cli.app import cli

PAGE = "git-blogpub.1"

_EXIT_STATUS = (
    ("0", "Success."),
    ("1", "The command ran and the operation failed; one line on standard error says why."),
    (
        "2",
        "The command line is wrong, and nothing was done: an unknown command or option, a "
        "missing argument, or any option value that does not parse (--at, --since, --limit, "
        "a -C that names no folder).",
    ),
    ("3", "A bug in gitpub; its traceback is in <user cache dir>/gitpub/gitpub.log."),
)


def installed_page() -> Path | None:
    """The manual page an install placed (`share/man/man1` under the prefix of this
    interpreter's scheme, of the user scheme, or beside the console script); None after an
    editable install, which places none."""
    prefixes = [sysconfig.get_path("data"), sysconfig.get_path("data", f"{os.name}_user")]
    script = Path(sys.argv[0])
    if script.name == "git-blogpub":
        prefixes.append(str(script.resolve().parent.parent))
    for prefix in prefixes:
        page = Path(prefix, "share", "man", "man1", PAGE)
        if page.is_file():
            return page
    return None


def show_installed() -> int | None:
    """Show the installed manual page with man(1), as `git help blogpub` does, and return
    man's exit status; None when there is no page (or no man) to show."""
    page = installed_page()
    if page is None or shutil.which("man") is None:
        return None
    return subprocess.run(["man", "-l", str(page)], check=False).returncode


def _esc(text: str) -> str:
    """Roff-safe text: backslashes, hyphens, a leading dot or quote, and every character past
    ASCII as troff's own escape (groff warns on raw UTF-8 where it reads Latin-1)."""
    out = text.replace("\\", "\\e").replace("-", "\\-")
    out = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in out)
    return "\n".join("\\&" + ln if ln.startswith((".", "'")) else ln for ln in out.splitlines())


def _commands(
    group: click.Group, ctx: click.Context
) -> Iterator[tuple[click.Command, click.Context]]:
    for name in sorted(group.list_commands(ctx)):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        sub = click.Context(cmd, info_name=name, parent=ctx)
        if isinstance(cmd, click.Group):
            yield cmd, sub
            yield from _commands(cmd, sub)
        else:
            yield cmd, sub


def _options(cmd: click.Command, ctx: click.Context, *, with_help: bool = False) -> list[str]:
    lines: list[str] = []
    for param in cmd.get_params(ctx):
        if param.name == "help" and not with_help:  # said once, in OPTIONS
            continue
        record = param.get_help_record(ctx)
        if record is None or isinstance(param, click.Argument):  # arguments: in the usage
            continue
        term, help_text = record
        lines += [".TP", f"\\fB{_esc(term)}\\fR", _esc(help_text or "")]
    return lines


def render() -> str:
    root = click.Context(cli, info_name="git blogpub", **cli.context_settings)
    lines = [
        f'.TH GIT\\-BLOGPUB 1 "" "gitpub {__version__}" "gitpub Manual"',
        # Ragged right, no hyphenation: option names and paths are never split, and troff has
        # no reason to warn that it cannot stretch a line holding one.
        ".ad l",
        ".nh",
        ".SH NAME",
        f"git\\-blogpub \\- {_esc(cli.help or '')}",
        ".SH SYNOPSIS",
        ".B git blogpub",
        "[\\fB\\-C\\fR \\fIPATH\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]",
        ".br",
        ".B git blogpub",
        "\\fICOMMAND\\fR \\fB\\-h\\fR",
        ".SH DESCRIPTION",
        _esc(
            "gitpub makes every publication of an article into a git-backed blog a durable "
            "job: it prepares the article and its derived font subsets in a private worktree, "
            "commits them as one unit with trailers, and delivers that commit to the remote "
            "exactly once. Every command below also takes -h for its own help."
        ),
        ".SH OPTIONS",
        *_options(cli, root, with_help=True),
        ".SH COMMANDS",
    ]
    for cmd, ctx in _commands(cli, root):
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        name = ctx.command_path.removeprefix("git blogpub ")
        lines += [".SS " + _esc(name), f"\\fBgit blogpub {_esc(name)}\\fR {_esc(usage)}", ".PP"]
        lines.append(_esc(" ".join((cmd.help or cmd.short_help or "").split())))
        if isinstance(cmd, click.Group):
            continue
        options = _options(cmd, ctx)
        if options:
            lines += [".RS", *options, ".RE"]
    lines.append(".SH EXIT STATUS")
    for code, meaning in _EXIT_STATUS:
        lines += [".TP", f"\\fB{code}\\fR", _esc(meaning)]
    lines += [
        ".SH FILES",
        ".TP",
        "\\fB.blogpub.toml\\fR",
        _esc("The repository's shared configuration, at the root of the working tree."),
        ".TP",
        "\\fB$GIT_COMMON_DIR/blogpub/\\fR",
        _esc("The job store, job folders, locks and job worktrees."),
        ".SH SEE ALSO",
        "\\fBgit\\fR(1), \\fBgit\\-worktree\\fR(1), \\fBgit\\-rebase\\fR(1)",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
