"""The `git blogpub` command line: thin click wrappers over the plain functions in commands/.

`submit` and `status` are also parsed without click, by `gitpub.cli.entry`, from the same
tables in `gitpub.cli.options` their click commands are built from here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from gitpub.cli import entry, options, webpage
from gitpub.cli.commands.output import usage_said
from gitpub.core.states import State  # light: an enum and a table


class _Ctx:
    def __init__(self, path: Path) -> None:
        self.path = path


pass_ctx = click.make_pass_decorator(_Ctx)


class _Since(click.ParamType):  # type: ignore[type-arg]  # generic in newer click
    name = "WHEN"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from gitpub.core.timespec import parse_since

        if isinstance(value, float):
            return value
        try:
            return parse_since(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


_TYPES: dict[str, Any] = {
    "state": click.Choice([s.value for s in State], case_sensitive=False),
    "since": _Since(),
    "limit": click.IntRange(min=1),
}
"""How click converts the TYPED options of the tables in gitpub.cli.options, by dest."""


def _click_option(opt: options.Option) -> Callable[[Any], Any]:
    kw: dict[str, Any] = {"help": opt.help, "required": opt.required, "metavar": opt.metavar}
    if opt.kind == options.FLAG:
        kw["is_flag"] = True
    elif opt.kind == options.MULTIPLE:
        kw["multiple"] = True
    elif opt.kind == options.TYPED:
        kw["type"] = _TYPES[opt.dest]
    if opt.default is not None:  # click takes an explicit None for a default that was given
        kw["default"] = opt.default
    return click.option(opt.flag, opt.dest, **kw)


def _options(table: Sequence[options.Option]) -> Callable[[Any], Any]:
    """The click options of one table of gitpub.cli.options, in the table's order."""

    def apply(func: Any) -> Any:
        for opt in reversed(table):
            func = _click_option(opt)(func)
        return func

    return apply


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@_options(options.ROOT)
@click.pass_context
def cli(click_ctx: click.Context, path: str) -> None:
    """Durable publication of articles into a git-backed blog."""
    click_ctx.obj = _Ctx(Path(path))


@cli.command()
@_options(options.SUBMIT)
@pass_ctx
def submit(c: _Ctx, /, **values: Any) -> None:
    """Register a publication job (idempotent by --key); a source holding a secret is refused."""
    entry.run_command("submit", c.path, values)


@cli.command()
@click.option("--force", is_flag=True, help="Replace an existing .blogpub.toml.")
@pass_ctx
def init(c: _Ctx, force: bool) -> None:
    """Detect the site generator and write a commented .blogpub.toml."""
    from gitpub.cli.commands import init as cmd

    cmd.main(c.path, force=force)


@cli.command("scan")
@click.argument("paths", nargs=-1, metavar="PATH…|-")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@pass_ctx
def scan_cmd(c: _Ctx, paths: tuple[str, ...], as_json: bool) -> int:
    """Report secrets in files (kind, line, fingerprint; never the secret). Exit 1 if any."""
    from gitpub.cli.commands import scan as cmd

    return cmd.main(c.path, paths=paths, as_json=as_json)


@cli.group()
def topic() -> None:
    """Topic sessions: one job per close."""


@topic.command("close")
@click.argument("session")
@click.option("--source", required=True, metavar="FILE|-", help="The source text (- for stdin).")
@click.option(
    "--allow", "allow", multiple=True, metavar="FINGERPRINT", help="A finding judged harmless."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@pass_ctx
def topic_close(c: _Ctx, session: str, source: str, allow: tuple[str, ...], as_json: bool) -> None:
    """Close SESSION and create (or return) its job for this close revision."""
    from gitpub.cli.commands import submit as cmd

    cmd.topic_close(c.path, session=session, source=source, allow=allow, as_json=as_json)


@topic.command("reopen")
@click.argument("session")
@pass_ctx
def topic_reopen(c: _Ctx, session: str) -> None:
    """Reopen SESSION: its next close is a new request."""
    from gitpub.cli.commands import submit as cmd

    cmd.topic_reopen(c.path, session=session)


@cli.command()
@click.option("--until-idle", is_flag=True, help="Exit 0 once nothing is due.")
@click.option("--interval", default=30.0, type=click.FloatRange(min=0.01), show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="Print no line per state change.")
@click.option(
    "--metrics",
    "metrics",
    type=webpage.Listen(),
    default=None,
    help="Serve /metrics on HOST:PORT (loopback) while the worker runs.",
)
@pass_ctx
def run(
    c: _Ctx, until_idle: bool, interval: float, quiet: bool, metrics: tuple[str, int] | None
) -> None:
    """Worker: prepare, commit and deliver due jobs; one line per state change."""
    from gitpub.cli.commands import run as cmd

    cmd.main(c.path, until_idle=until_idle, interval=interval, quiet=quiet, metrics=metrics)


@cli.command()
@click.argument("job_ids", nargs=-1, metavar="[JOB]...")
@pass_ctx
def relay(c: _Ctx, job_ids: tuple[str, ...]) -> None:
    """Deliver due jobs now (all, or the JOBs named)."""
    from gitpub.cli.commands import run as cmd

    cmd.relay(c.path, job_ids=job_ids)


@cli.command()
@_options(options.STATUS)
@pass_ctx
def status(c: _Ctx, /, **values: Any) -> None:
    """What needs a person, what is in flight, and a summary of the finished jobs."""
    entry.run_command("status", c.path, values)


@cli.command()
@click.argument("job_id", metavar="JOB", required=False)
@click.option("--key", default=None, help="Find the job by its idempotency key instead.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@pass_ctx
def show(c: _Ctx, job_id: str | None, key: str | None, as_json: bool) -> None:
    """One job and its full event history."""
    from gitpub.cli.commands import status as cmd

    if (job_id is None) == (key is None):
        raise click.UsageError("give either JOB or --key KEY")
    cmd.show(c.path, job_id=job_id, key=key, as_json=as_json)


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
def demo(directory: Path | None) -> None:
    """Scratch blog, remote and second writer in DIRECTORY: four jobs, three published, one
    stopped in CONFLICT by a person's edit."""
    from gitpub.cli.commands import demo as cmd

    cmd.main(directory)


@cli.command()
@click.option(
    "--rebuild",
    is_flag=True,
    help="First rebuild a lost job database from the job folders, job refs and the remote.",
)
@pass_ctx
def reconcile(c: _Ctx, rebuild: bool) -> None:
    """Recover interrupted jobs and register unsynced hand edits, in the foreground."""
    from gitpub.cli.commands import run as cmd

    cmd.reconcile(c.path, rebuild=rebuild)


@cli.command()
@pass_ctx
def sweep(c: _Ctx) -> None:
    """Deliver external_sync events: hand edits that belong to no job."""
    from gitpub.cli.commands import sweep as cmd

    cmd.main(c.path)


@cli.command()
@click.option("--yes", is_flag=True, help="Allow without asking.")
@click.option("--list", "list_", is_flag=True, help="Show what this node allows here.")
@click.option("--revoke", is_flag=True, help="Take this repository's allowance back.")
@pass_ctx
def trust(c: _Ctx, yes: bool, list_: bool, revoke: bool) -> None:
    """Allow, on this node, the commands the repository's config names."""
    from gitpub.cli.commands import trust as cmd

    if yes + list_ + revoke > 1:
        raise click.UsageError("give at most one of --yes, --list or --revoke")
    if list_:
        cmd.show(c.path)
    elif revoke:
        cmd.revoke(c.path)
    else:
        cmd.main(c.path, yes=yes)


@cli.command()
@click.argument("job_id", metavar="JOB")
@pass_ctx
def retry(c: _Ctx, job_id: str) -> None:
    """Send a REVIEW, CONFLICT or FAILED job back to RECEIVED."""
    from gitpub.cli.commands import operator as cmd

    cmd.retry(c.path, job_id=job_id)


@cli.command()
@click.argument("job_id", metavar="JOB")
@click.option(
    "--continue", "cont", is_flag=True, help="Deliver the job branch as a person fixed it."
)
@click.option("--abandon", is_flag=True, help="Give the job up (SKIPPED).")
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="FINGERPRINT",
    help="With --continue: publish this finding in the fixed article as written (repeatable).",
)
@pass_ctx
def resolve(c: _Ctx, job_id: str, cont: bool, abandon: bool, allow: tuple[str, ...]) -> None:
    """Operator exit from REVIEW, CONFLICT or FAILED."""
    from gitpub.cli.commands import operator as cmd

    if cont == abandon:
        raise click.UsageError("give exactly one of --continue or --abandon")
    if allow and abandon:
        raise click.UsageError("--allow goes with --continue")
    cmd.resolve(c.path, job_id=job_id, abandon=abandon, allow=allow)


@cli.command()
@_options(options.FONTS)
@pass_ctx
def fonts(c: _Ctx, /, **values: Any) -> None:
    """Rebuild the font subsets in the live checkout."""
    entry.run_command("fonts", c.path, values)


@cli.command()
@click.argument("upstream", required=False)
@pass_ctx
def rebase(c: _Ctx, upstream: str | None) -> None:
    """Rebase the live checkout, regenerating fonts on font-only conflicts."""
    from gitpub.cli.commands import fonts as cmd

    cmd.rebase(c.path, upstream=upstream)


@cli.command()
@pass_ctx
def install(c: _Ctx) -> None:
    """Install gitpub's git hooks (chaining any hook already there)."""
    from gitpub.cli.commands import install as cmd

    cmd.install(c.path)


@cli.command()
@pass_ctx
def uninstall(c: _Ctx) -> None:
    """Remove gitpub's git hooks and restore what was there."""
    from gitpub.cli.commands import install as cmd

    cmd.uninstall(c.path)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@pass_ctx
def doctor(c: _Ctx, as_json: bool) -> None:
    """Check the repository, config, hooks, store, locks and worktrees."""
    from gitpub.cli.commands import doctor as cmd

    cmd.main(c.path, as_json=as_json)


@cli.command()
@pass_ctx
def gc(c: _Ctx) -> None:
    """Remove what finished (PUBLISHED or SKIPPED) jobs left behind."""
    from gitpub.cli.commands import gc as cmd

    cmd.main(c.path)


@cli.command("dry-run")
@click.option("--source", required=True, metavar="FILE|-", help="The source text (- for stdin).")
@click.option(
    "--target", default=None, metavar="PATH", help="Article path inside a content folder."
)
@click.option(
    "--asset",
    "assets",
    multiple=True,
    metavar="FILE",
    help="A file a submit would place beside the article (repeatable).",
)
@pass_ctx
def dry_run(c: _Ctx, source: str, target: str | None, assets: tuple[str, ...]) -> None:
    """Prepare in a throwaway worktree; print target, manifest and diff; persist nothing."""
    from gitpub.cli.commands import dryrun as cmd

    cmd.main(c.path, source=source, target=target, assets=assets)


@cli.command()
@click.option(
    "--worker", is_flag=True, help="Also run the delivery worker (`run --interval`) alongside."
)
@click.option(
    "--interval",
    default=2.0,
    type=click.FloatRange(min=0.01),
    show_default=True,
    help="With --worker: seconds between the worker's passes.",
)
@pass_ctx
def mcp(c: _Ctx, worker: bool, interval: float) -> None:
    """Serve the Model Context Protocol on stdin/stdout for agents (tools: submit, status,
    show, dry_run, wait)."""
    from gitpub import mcpserver

    mcpserver.main(c.path, worker=worker, interval=interval)


cli.add_command(webpage.ui)
cli.add_command(webpage.metrics)


def _show_usage_error(exc: click.UsageError) -> None:
    """click's message, with a hint that works under git: `git blogpub --help` opens the
    manual page (git turns it into `git help blogpub`), `-h` prints the short help."""
    if exc.ctx is None:
        click.echo(f"Error: {usage_said(exc.format_message())}", err=True)
        return
    path = exc.ctx.command_path
    hint = f"Try '{path} -h' for help"
    hint += " or 'git blogpub --help' for the manual." if path == "git blogpub" else "."
    click.echo(f"{exc.ctx.get_usage()}\n{hint}\n", err=True)
    click.echo(f"Error: {usage_said(exc.format_message())}", err=True)


def _invoke(argv: list[str] | None) -> Any:
    """The command line through click: its usage errors exit 2 with click's message."""
    try:
        return cli.main(args=argv, prog_name="git blogpub", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("git blogpub: aborted", err=True)
        sys.exit(1)
    except click.UsageError as exc:
        _show_usage_error(exc)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"Error: {usage_said(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)


def main(argv: list[str] | None = None) -> None:
    """Every command through click (`gitpub.cli.entry.main` sends only the rest here); expected
    failures print one line and exit 1, usage errors exit 2."""
    entry.guarded(lambda: _invoke(argv))
