"""The `git blogpub` command line: thin click wrappers over the plain functions in commands/.

click parses every command line; each command imports its module only when it runs, so
`submit` and `status` never load pygit2 or fontTools (`tests/cli/test_cli_imports.py`).
Exit status, one rule: 2 when the command line is wrong (an unknown command or option, a
missing argument, any option value that does not parse: `--at`, `--since`, `--limit`, a `-C`
naming no folder), and nothing was done; 1 when the operation failed; 3 for a bug."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gitpub import __version__
from gitpub.cli import entry, webpage
from gitpub.cli.commands.output import usage_said
from gitpub.cli.parsing import Since, When, manual, show_usage_error
from gitpub.core.states import State  # light: an enum and a table


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-C",
    "path",
    default=".",
    metavar="PATH",
    # A folder that is not there is a bad option value, named as such (exit 2).
    type=click.Path(exists=True, file_okay=False),
    help="Run as if started in PATH.",
)
@click.version_option(
    __version__, "--version", prog_name="git blogpub", message="%(prog)s %(version)s"
)
@click.option(
    "--help",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=manual,
    help="Open the manual page git-blogpub(1); without one installed, print this help.",
)
@click.pass_context
def cli(click_ctx: click.Context, path: str) -> None:
    """Durable publication of articles into a git-backed blog."""
    click_ctx.obj = Path(path)  # what every command's `root` receives


@cli.command()
@click.option("--key", required=True, help="Idempotency key: the same key is the same request.")
@click.option("--source", required=True, metavar="FILE|-", help="The source text (- for stdin).")
@click.option("--target", metavar="PATH", help="Article path inside a content folder.")
@click.option(
    "--asset",
    "assets",
    multiple=True,
    metavar="FILE[=REL]",
    help="A file to place at REL beside the article (default: its own name; repeatable), in "
    "the same commit; a text file is scanned for secrets like the source.",
)
@click.option("--topic", help="Topic text (stored sanitized).")
@click.option(
    "--allow",
    multiple=True,
    metavar="FINGERPRINT",
    help="Publish this finding as written (repeatable; `git blogpub scan` prints fingerprints).",
)
@click.option(
    "--at",
    type=When(),
    help="Publish at this time: ISO 8601 with an offset, or +N{s,m,h,d}; waits in SCHEDULED.",
)
@click.option(
    "--review", is_flag=True, help="Push to a review branch instead; published once merged."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def submit(root: Path, /, **values: Any) -> None:
    """Register a publication job (idempotent by --key); a source holding a secret is refused."""
    from gitpub.cli.commands import submit as cmd

    cmd.main(root, **values)


@cli.command()
@click.option("--force", is_flag=True, help="Replace an existing .blogpub.toml.")
@click.pass_obj
def init(root: Path, force: bool) -> None:
    """Detect the site generator and write a commented .blogpub.toml."""
    from gitpub.cli.commands import init as cmd

    cmd.main(root, force=force)


@cli.command("scan")
@click.argument("paths", nargs=-1, metavar="PATH…|-")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def scan_cmd(root: Path, paths: tuple[str, ...], as_json: bool) -> int:
    """Report secrets in files (kind, line, fingerprint; never the secret). Exit 1 if any."""
    from gitpub.cli.commands import scan as cmd

    return cmd.main(root, paths=paths, as_json=as_json)


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
@click.pass_obj
def topic_close(
    root: Path, session: str, source: str, allow: tuple[str, ...], as_json: bool
) -> None:
    """Close SESSION and create (or return) its job for this close revision."""
    from gitpub.cli.commands import submit as cmd

    cmd.topic_close(root, session=session, source=source, allow=allow, as_json=as_json)


@topic.command("reopen")
@click.argument("session")
@click.pass_obj
def topic_reopen(root: Path, session: str) -> None:
    """Reopen SESSION: its next close is a new request."""
    from gitpub.cli.commands import submit as cmd

    cmd.topic_reopen(root, session=session)


@cli.command()
@click.option("--until-idle", is_flag=True, help="Exit 0 once nothing is due.")
@click.option("--interval", default=30.0, type=click.FloatRange(min=0.01), show_default=True)
@click.option(
    "--concurrency",
    default=4,
    type=click.IntRange(1, 64),
    show_default=True,
    help="Jobs prepared at once, each under its own lease (1: one after another).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print no line per state change.")
@click.option(
    "--metrics",
    "metrics",
    type=webpage.Listen(),
    default=None,
    help="Serve /metrics on HOST:PORT (loopback) while the worker runs.",
)
@click.pass_obj
def run(
    root: Path,
    until_idle: bool,
    interval: float,
    concurrency: int,
    quiet: bool,
    metrics: tuple[str, int] | None,
) -> None:
    """Worker: prepare, commit and deliver due jobs; one line per state change."""
    from gitpub.cli.commands import run as cmd

    cmd.main(
        root,
        until_idle=until_idle,
        interval=interval,
        concurrency=concurrency,
        quiet=quiet,
        metrics=metrics,
    )


@cli.command()
@click.argument("job_ids", nargs=-1, metavar="[JOB]...")
@click.pass_obj
def relay(root: Path, job_ids: tuple[str, ...]) -> None:
    """Deliver due jobs now (all, or the JOBs named)."""
    from gitpub.cli.commands import run as cmd

    cmd.relay(root, job_ids=job_ids)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--state",
    type=click.Choice([s.value for s in State], case_sensitive=False),
    metavar="STATE",
    help=f"Only jobs in this state, in any case: {', '.join(s.value for s in State)}.",
)
@click.option("--all", "everything", is_flag=True, help="List every job, finished ones too.")
@click.option("--since", type=Since(), help="Only jobs changed since WHEN (2h, 3d, 2026-11-30).")
@click.option(
    "--limit", type=click.IntRange(min=1), metavar="N", help="At most N jobs, the newest."
)
@click.pass_obj
def status(root: Path, /, **values: Any) -> None:
    """What needs a person, what is in flight, and a summary of the finished jobs."""
    from gitpub.cli.commands import status as cmd

    cmd.main(root, **values)


@cli.command()
@click.argument("job_id", metavar="JOB", required=False)
@click.option("--key", default=None, help="Find the job by its idempotency key instead.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def show(root: Path, job_id: str | None, key: str | None, as_json: bool) -> None:
    """One job and its full event history."""
    from gitpub.cli.commands import status as cmd

    if (job_id is None) == (key is None):
        raise click.UsageError("give either JOB or --key KEY")
    cmd.show(root, job_id=job_id, key=key, as_json=as_json)


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
@click.pass_obj
def reconcile(root: Path, rebuild: bool) -> None:
    """Recover interrupted jobs and register unsynced hand edits, in the foreground."""
    from gitpub.cli.commands import run as cmd

    cmd.reconcile(root, rebuild=rebuild)


@cli.command()
@click.pass_obj
def sweep(root: Path) -> None:
    """Deliver external_sync events: hand edits that belong to no job."""
    from gitpub.cli.commands import sweep as cmd

    cmd.main(root)


@cli.command()
@click.option("--yes", is_flag=True, help="Allow without asking.")
@click.option("--list", "list_", is_flag=True, help="Show what this node allows here.")
@click.option("--revoke", is_flag=True, help="Take this repository's allowance back.")
@click.pass_obj
def trust(root: Path, yes: bool, list_: bool, revoke: bool) -> None:
    """Allow, on this node, the commands the repository's config names."""
    from gitpub.cli.commands import trust as cmd

    if yes + list_ + revoke > 1:
        raise click.UsageError("give at most one of --yes, --list or --revoke")
    if list_:
        cmd.show(root)
    elif revoke:
        cmd.revoke(root)
    else:
        cmd.main(root, yes=yes)


@cli.command()
@click.argument("job_id", metavar="JOB")
@click.pass_obj
def retry(root: Path, job_id: str) -> None:
    """Send a REVIEW, CONFLICT or FAILED job back to RECEIVED."""
    from gitpub.cli.commands import operator as cmd

    cmd.retry(root, job_id=job_id)


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
@click.pass_obj
def resolve(root: Path, job_id: str, cont: bool, abandon: bool, allow: tuple[str, ...]) -> None:
    """Operator exit from REVIEW, CONFLICT or FAILED."""
    from gitpub.cli.commands import operator as cmd

    if cont == abandon:
        raise click.UsageError("give exactly one of --continue or --abandon")
    if allow and abandon:
        raise click.UsageError("--allow goes with --continue")
    cmd.resolve(root, job_id=job_id, abandon=abandon, allow=allow)


@cli.command()
@click.option("--check", is_flag=True, help="Exit 1 when the subsets are stale; write nothing.")
@click.pass_obj
def fonts(root: Path, check: bool) -> None:
    """Rebuild the font subsets in the live checkout."""
    from gitpub.cli.commands import fonts as cmd

    cmd.main(root, check=check)


@cli.command()
@click.argument("upstream", required=False)
@click.pass_obj
def rebase(root: Path, upstream: str | None) -> None:
    """Rebase the live checkout, regenerating fonts on font-only conflicts."""
    from gitpub.cli.commands import fonts as cmd

    cmd.rebase(root, upstream=upstream)


@cli.command()
@click.pass_obj
def install(root: Path) -> None:
    """Install gitpub's git hooks (chaining any hook already there)."""
    from gitpub.cli.commands import install as cmd

    cmd.install(root)


@cli.command()
@click.pass_obj
def uninstall(root: Path) -> None:
    """Remove gitpub's git hooks and restore what was there."""
    from gitpub.cli.commands import install as cmd

    cmd.uninstall(root)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def doctor(root: Path, as_json: bool) -> None:
    """Check the repository, config, hooks, store, locks and worktrees."""
    from gitpub.cli.commands import doctor as cmd

    cmd.main(root, as_json=as_json)


@cli.command()
@click.pass_obj
def gc(root: Path) -> None:
    """Remove what finished (PUBLISHED or SKIPPED) jobs left behind."""
    from gitpub.cli.commands import gc as cmd

    cmd.main(root)


@cli.command("dry-run")
@click.option("--source", required=True, metavar="FILE|-", help="The source text (- for stdin).")
@click.option(
    "--target", default=None, metavar="PATH", help="Article path inside a content folder."
)
@click.option(
    "--asset",
    "assets",
    multiple=True,
    metavar="FILE[=REL]",
    help="A file a submit would place at REL beside the article (repeatable).",
)
@click.pass_obj
def dry_run(root: Path, source: str, target: str | None, assets: tuple[str, ...]) -> None:
    """Prepare in a throwaway worktree; print target, manifest and diff; persist nothing."""
    from gitpub.cli.commands import dryrun as cmd

    cmd.main(root, source=source, target=target, assets=assets)


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
@click.pass_obj
def mcp(root: Path, worker: bool, interval: float) -> None:
    """Serve the Model Context Protocol on stdin/stdout for agents (tools: submit, status,
    show, dry_run, wait)."""
    from gitpub import mcpserver

    mcpserver.main(root, worker=worker, interval=interval)


cli.add_command(webpage.ui)
cli.add_command(webpage.metrics)


def _invoke(argv: list[str] | None) -> object:
    """The command line through click: its usage errors exit 2 with click's message."""
    try:
        return cli.main(args=argv, prog_name="git blogpub", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("git blogpub: aborted", err=True)
        sys.exit(1)
    except click.UsageError as exc:
        show_usage_error(exc)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"Error: {usage_said(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)


def main(argv: list[str] | None = None) -> None:
    """Every command through click; expected failures print one line and exit 1, usage
    errors exit 2."""
    entry.guarded(lambda: _invoke(argv))
