"""`git blogpub mcp`: the agent's door, a Model Context Protocol server over stdio.

An agent (any MCP client) starts `git blogpub mcp` and calls its tools: `submit`,
`status`, `show`, `dry_run` and `wait`. They go through the same intake as the command line
and the Python API, on the same store and locks, so any number of servers and commands may
share one clone. `--worker` also keeps the delivery worker running beside the server.

This module stays light: the SDK is imported only when the server starts, never by the
commands an agent runs by the hundred (`submit`, `status`)."""

from __future__ import annotations

from pathlib import Path


def main(path: Path, *, worker: bool, interval: float) -> None:
    """Serve MCP on stdin/stdout for the repository at `path` until the client leaves."""
    from gitpub import config
    from gitpub.core import clock
    from gitpub.core.errors import GitpubError
    from gitpub.git.repo import Repo

    # Fail before serving, with the one line every command gives: an agent host shows a
    # server that exits at once with its stderr, not a server that refuses every call.
    clock.skew()
    repo = Repo.discover(path)
    cfg = config.load(repo.root)
    if not repo.has_remote(cfg.publish.remote):
        raise GitpubError(
            f"{repo.root}: no remote named {cfg.publish.remote!r} "
            f"(set publish.remote in {config.CONFIG_NAME} or `git remote add`)"
        )

    import anyio

    from gitpub.mcpserver import server
    from gitpub.mcpserver.worker import Supervisor

    keeper = Supervisor(repo.root, interval) if worker else None
    if keeper is not None:
        keeper.start()
    try:
        anyio.run(server.serve, repo.root)
    finally:
        if keeper is not None:
            keeper.stop()
