"""`git blogpub ui`: the local web page of this blog's jobs, until Ctrl-C."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

from gitpub.cli.commands.output import say
from gitpub.core.errors import GitpubError

DEFAULT_PORT = 7465
MISSING = "the web page needs Jinja2: pip install 'git-blogpub[ui]'"


def main(
    path: Path,
    *,
    port: int = DEFAULT_PORT,
    listen: tuple[str, int] | None = None,
    open_browser: bool = False,
    actions: bool = False,
) -> None:
    try:
        import jinja2  # noqa: F401  # the templates' engine, from the [ui] extra
    except ImportError:
        raise GitpubError(MISSING) from None
    from gitpub.ui.app import serve_page

    host, port = listen if listen is not None else ("127.0.0.1", port)
    # Beyond this machine, every request must carry a token nobody could guess.
    token = secrets.token_urlsafe(24) if listen is not None else None
    handle = serve_page(path, host=host, port=port, token=token, actions=actions)
    url = handle.url + (f"?token={token}" if token else "")
    try:
        # Written as it is, not through the sanitizer: the token is meant to be read here,
        # by the person who started the server, and nowhere else.
        sys.stdout.write(f"gitpub ui: {url}\n")
        say("actions: on (retry, resolve)" if actions else "actions: off (start with --actions)")
        say("Ctrl-C stops it")
        sys.stdout.flush()
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        handle.wait()
    except KeyboardInterrupt:
        pass
    finally:
        handle.close()
