"""One name for one repository, however a remote's URL spells it.

Nodes clone a blog as they like: `https://host/blog.git` or `https://host/blog/`, with a
token or without, `git@host:blog.git` or `ssh://git@host/~/blog`. Git reaches one repository
through all of them, so the shared store must name one blog by them (its schema follows
`normalize`): credentials and user names dropped, scheme and host in lower case, default
ports dropped, trailing `/` and `.git` (or `/.git`) dropped, and an ssh path written as git
sends it to the server — the scp-like `host:path` is relative to the home folder, as
`ssh://host/~/path` is, while `ssh://host/path` is absolute, as `host:/path` is."""

from __future__ import annotations

import posixpath
import re

DEFAULT_PORTS = {"ssh": "22", "git": "9418", "http": "80", "https": "443", "ftp": "21"}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)
_SSH_ALIASES = frozenset({"git+ssh", "ssh+git"})
# git's rule (url_is_local_not_ssh): scp-like when a colon comes before any slash.
_SCP = re.compile(r"^(?:[^@/]*@)?(\[[^\]/]*\]|[^:/\[\]]+):(.*)$", re.DOTALL)


def normalize(url: str) -> str:
    """The repository a remote URL reaches, as one string for all its spellings."""
    url = url.strip()
    found = _SCHEME.match(url)
    if found:
        return _with_scheme(found.group(1).lower(), found.group(2))
    scp = _SCP.match(url)
    if scp and not _windows_drive(url):
        return _ssh(scp.group(1).lower(), scp.group(2))
    return _trimmed(posixpath.normpath(url)) if url else url


def anchored(url: str, root: str) -> str:
    """The URL as the repository at `root` reaches it: a relative local path (`../blog.git`)
    is relative to that working tree, where git runs, so two blogs that both spell their
    remote `../blog.git` name two repositories. Any other URL is returned as it is."""
    stripped = url.strip()
    if not stripped or _SCHEME.match(stripped) or posixpath.isabs(stripped):
        return url
    if _SCP.match(stripped) and not _windows_drive(stripped):
        return url
    return posixpath.normpath(posixpath.join(root, stripped))


def _with_scheme(scheme: str, rest: str) -> str:
    scheme = "ssh" if scheme in _SSH_ALIASES else scheme
    authority, slash, path = rest.partition("/")
    host = authority.rpartition("@")[2].lower()  # user and password: not the repository's
    name, colon, port = host.rpartition(":")
    if colon and name.count("[") == name.count("]"):
        host = name if port in ("", DEFAULT_PORTS.get(scheme)) else host
    path = (slash + path).partition("#")[0]
    if scheme == "ssh":
        return _ssh(host, path)
    if scheme == "file":
        return _trimmed(posixpath.normpath(path)) if path else f"file://{host}"
    return _trimmed(f"{scheme}://{host}{path}")


def _ssh(host: str, path: str) -> str:
    """`ssh://host/<path as git sends it>`: `/abs`, `/~user/x`, or `/~/x` for the home's."""
    sent = path[1:] if path.startswith("/~") else path  # git: ssh://host/~user/x → ~user/x
    if not sent.startswith(("/", "~")):
        sent = "~/" + sent  # scp-like `host:x`: relative to the home folder, as `~/x` is
    return _trimmed(f"ssh://{host}/{sent.lstrip('/')}")


def _trimmed(url: str) -> str:
    url = url.rstrip("/")
    for suffix in ("/.git", ".git"):
        if url.endswith(suffix) and len(url) > len(suffix):
            url = url[: -len(suffix)].rstrip("/")
            break
    return url


def _windows_drive(url: str) -> bool:
    return len(url) >= 2 and url[1] == ":" and url[0].isalpha()
