"""The click side of `git blogpub ui` and `git blogpub metrics` (registered by
`gitpub.cli.app`); each calls the plain function of its module in `gitpub.cli.commands`."""

from __future__ import annotations

from pathlib import Path

import click


class Listen(click.ParamType):  # type: ignore[type-arg]  # generic in newer click
    name = "ADDR"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, int]:
        from gitpub.core.errors import InputError
        from gitpub.ui.server import parse_listen

        if isinstance(value, tuple):
            return value
        try:
            return parse_listen(str(value))
        except InputError as exc:
            self.fail(exc.message, param, ctx)


@click.command()
@click.option("--port", default=7465, type=click.IntRange(0, 65535), show_default=True)
@click.option(
    "--listen",
    default=None,
    type=Listen(),
    help="Listen on HOST:PORT instead of 127.0.0.1 (every request then needs the printed token).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
@click.option("--actions", is_flag=True, help="Offer retry and resolve on the page (POST forms).")
@click.pass_obj
def ui(
    root: Path, port: int, listen: tuple[str, int] | None, open_browser: bool, actions: bool
) -> None:
    """A local web page of the jobs, their history and the fleet; also serves /metrics."""
    from gitpub.cli.commands import ui as cmd

    cmd.main(root, port=port, listen=listen, open_browser=open_browser, actions=actions)


@click.command()
@click.pass_obj
def metrics(root: Path) -> None:
    """Print the Prometheus text exposition of the store (jobs by state, durations, pushes)."""
    from gitpub.cli.commands import metrics as cmd

    cmd.main(root)
