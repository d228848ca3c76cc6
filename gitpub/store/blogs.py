"""Which schema of the shared store is a blog's: `public.gitpub_blog` lists them.

A blog is its remote's repository and its branch. Nodes spell the remote as they like
(`…/blog.git` or `…/blog/`, a token in it or not), so the schema follows the URL as git
reads it (`gitpub.git.remoteurl.normalize`), and two spellings share one store. Schemas made
before that were named by the spelling itself: a node finds its own such schema first, so
an upgrade never leaves its jobs behind; each registry row records the normalized name's
hash, so any other spelling finds that schema too."""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from gitpub.core.ids import sha256_hex
from gitpub.git import remoteurl
from gitpub.store.db import Connection


class Blog(NamedTuple):
    """A blog as a node names it: its remote's URL (credentials dropped) and its branch."""

    remote: str
    branch: str

    @property
    def identity(self) -> str:
        """The blog as every node names it, whatever its remote URL's spelling."""
        return f"{remoteurl.normalize(self.remote)}#{self.branch}"

    @property
    def legacy(self) -> str:
        """The name before remote URLs were normalized: its schema stays this blog's."""
        return f"{self.remote.rstrip('/')}#{self.branch}"


def blog_of(remote_url: str, branch: str) -> Blog:
    parts = urlsplit(remote_url)
    if parts.scheme and parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        remote_url = urlunsplit((parts.scheme, host, parts.path, parts.query, ""))
    return Blog(remote_url, branch)


def blog_identity(remote_url: str, branch: str) -> str:
    return blog_of(remote_url, branch).identity


def schema_name(identity: str) -> str:
    return "blog_" + sha256_hex(identity.encode("utf-8"))[:20]


def registry(conn: Connection) -> None:
    """`public.gitpub_blog`, each row with the hash that finds a blog by its normalized
    name (`identity_sha256`)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS public.gitpub_blog (schema_name TEXT PRIMARY KEY,"
        " blog TEXT NOT NULL, created_at TEXT NOT NULL, identity_sha256 TEXT)"
    )
    known = conn.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = 'public'"
        " AND table_name = 'gitpub_blog' AND column_name = 'identity_sha256'"
    ).fetchone()
    if known is None:  # a registry made before blogs were named by their normalized URL
        conn.execute("ALTER TABLE public.gitpub_blog ADD COLUMN identity_sha256 TEXT")
    # Rows made before that (or since, by a node not yet upgraded) name the blog as their
    # node spelled it: give each the hash of its normalized name, so every spelling finds
    # it, whichever node opens the store first.
    rows = conn.execute(
        "SELECT schema_name, blog FROM public.gitpub_blog WHERE identity_sha256 IS NULL"
    ).fetchall()
    for schema, spelled in rows:
        remote, _, branch = str(spelled).rpartition("#")
        conn.execute(
            "UPDATE public.gitpub_blog SET identity_sha256 = ? WHERE schema_name = ?",
            (_digest(Blog(remote, branch).identity), schema),
        )


def _digest(identity: str) -> str:
    return sha256_hex(identity.encode("utf-8"))


def find_schema(conn: Connection, blog: Blog) -> str:
    """The blog's schema: the one this node's spelling of the remote named before remote
    URLs were normalized, if it exists (an upgrade never leaves a node's jobs behind); else
    the one any spelling of the same repository made; else a new one."""
    legacy = schema_name(blog.legacy)
    row = conn.execute(
        "SELECT schema_name FROM public.gitpub_blog WHERE schema_name = ?", (legacy,)
    ).fetchone()
    if row is not None:
        return legacy
    row = conn.execute(
        "SELECT schema_name FROM public.gitpub_blog WHERE identity_sha256 = ?"
        " ORDER BY created_at, schema_name LIMIT 1",
        (_digest(blog.identity),),
    ).fetchone()
    return str(row[0]) if row is not None else schema_name(blog.identity)
