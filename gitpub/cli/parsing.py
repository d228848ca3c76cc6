"""What gitpub's command line does beyond click's defaults: moments (`--since`, `--at`) read
as parameters, so a value that does not parse is a usage error (exit 2); the root's
`--help`, which opens the manual page; and the usage error's message, with hints that work
under git."""

from __future__ import annotations

import click


class Since(click.ParamType):  # type: ignore[type-arg]  # generic in newer click
    name = "WHEN"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        from gitpub.core.timespec import parse_since

        if isinstance(value, float):
            return value
        try:
            return parse_since(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class When(click.ParamType):  # type: ignore[type-arg]
    """`submit --at`: refused here, exit 2, when it does not parse; handed on as written, so
    the door reads it the one way the API and the MCP tool read it too."""

    name = "WHEN"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        from gitpub.core.timespec import parse_when

        try:
            parse_when(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return str(value)


def manual(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`--help` before any command: the manual page, as `git blogpub --help` opens it; where
    no page is installed (an editable install), the `-h` text. Exit 0 either way."""
    if not value or ctx.resilient_parsing:
        return
    from gitpub.cli import manpage

    shown = manpage.show_installed()
    if shown is None:
        click.echo(ctx.get_help())
    ctx.exit(shown or 0)


def show_usage_error(exc: click.UsageError) -> None:
    """click's message, with a hint that works under git: `git blogpub --help` opens the
    manual page (git turns it into `git help blogpub`), `-h` prints the short help."""
    from gitpub.cli.commands.output import usage_said

    if exc.ctx is None:
        click.echo(f"Error: {usage_said(exc.format_message())}", err=True)
        return
    path = exc.ctx.command_path
    hint = f"Try '{path} -h' for help"
    hint += " or 'git blogpub --help' for the manual." if path == "git blogpub" else "."
    click.echo(f"{exc.ctx.get_usage()}\n{hint}\n", err=True)
    click.echo(f"Error: {usage_said(exc.format_message())}", err=True)
