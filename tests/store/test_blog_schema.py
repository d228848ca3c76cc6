"""One blog, one schema, on a real PostgreSQL: nodes whose remote URLs are two spellings of one
repository share one store, and a schema named the way gitpub named schemas before remote
URLs were normalized stays the blog's — found by every spelling, never forked or dropped."""

from __future__ import annotations

import json

import psycopg
import pytest
from testing.fixtures import Blog, article

from gitpub.store.blogs import blog_identity, schema_name


@pytest.fixture
def shared(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GITPUB_STORE", pg_url)
    return pg_url


def _spelled_otherwise(blog: Blog, name: str) -> Blog:
    """A clone whose remote URL is another spelling of the same repository: a `file://` URL
    where the blog's own clone has the path (the old rule named two blogs by them)."""
    node = blog.clone(name)
    node.git("remote", "set-url", "origin", f"file://{blog.remote}/")
    return node


def _registered(pg_url: str) -> set[str]:
    with psycopg.connect(pg_url) as conn:
        return {r[0] for r in conn.execute("SELECT schema_name FROM public.gitpub_blog")}


def _doctor_line(node: Blog) -> str:
    out = node.blogpub("doctor").stdout
    return next(line for line in out.splitlines() if " database " in line)


def test_two_spellings_of_one_remote_share_one_store(blog: Blog, shared: str) -> None:
    """Node B's remote is `file://…/remote.git/`, node A's `…/remote.git`: one store. B sees
    A's job, its key is A's job, its worker delivers what A committed, and a job of B with
    the bytes A published ends SKIPPED "no change"."""
    node_b = _spelled_otherwise(blog, "node-b")
    text = article("Same", "Byte-identical on both nodes.")
    first = blog.committed_not_pushed("first", text)
    assert [j["job_id"] for j in node_b.status()] == [first]
    assert node_b.submit("first", text) == first  # the same key is the same job
    node_b.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "PUBLISHED"
    assert blog.commits_with_job(first) == 1
    second = node_b.submit("second", text)
    node_b.ok("run", "--until-idle")
    shown = node_b.job(second)
    assert shown["job"]["state"] == "SKIPPED", shown["job"]
    assert "no change" in json.dumps(shown["events"]), shown["events"]
    # doctor names the blog as git reads its remote: the same line on both nodes
    normalized = blog_identity(str(blog.remote), "main")
    assert normalized == f"{str(blog.remote).removesuffix('.git')}#main"
    line = _doctor_line(blog)
    assert f"shared store, blog {normalized} (schema {schema_name(normalized)})" in line, line
    assert _doctor_line(node_b) == line


def _make_it_old(pg_url: str, blog: Blog, remote: str | None = None) -> str:
    """The blog's schema as gitpub named and registered it before: by the spelling of the
    remote URL (`remote`; credentials and a trailing `/` dropped), no normalized name."""
    new = schema_name(blog_identity(str(blog.remote), "main"))
    spelled = f"{(remote or str(blog.remote)).rstrip('/')}#main"
    old = schema_name(spelled)
    assert old != new
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"ALTER SCHEMA {new} RENAME TO {old}")
        # A job's folder is named in its row by the schema's name (`shared/<schema>/jobs/…`).
        conn.execute(
            f"UPDATE {old}.blog_publication SET source_path = replace(source_path, %s, %s)",
            (new, old),
        )
        conn.execute(
            "UPDATE public.gitpub_blog SET schema_name = %s, blog = %s, identity_sha256 = NULL"
            " WHERE schema_name = %s",
            (old, spelled, new),
        )
    return old


@pytest.mark.parametrize("first", ["its own node", "another spelling"])
def test_a_schema_named_by_the_old_rule_stays_the_blogs(
    blog: Blog, shared: str, first: str
) -> None:
    job_id = blog.submit("before", article("Before", "Submitted before the upgrade."))
    old = _make_it_old(shared, blog)
    node_b = _spelled_otherwise(blog, "node-b")
    readers = [blog, node_b] if first == "its own node" else [node_b, blog]
    for reader in readers:
        assert [j["job_id"] for j in reader.status()] == [job_id], reader
    assert schema_name(blog_identity(str(blog.remote), "main")) not in _registered(shared)
    assert old in _registered(shared)
    ran = node_b.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED", ran
    assert f"(schema {old})" in _doctor_line(node_b)


def test_nodes_whose_store_forked_before_the_upgrade_keep_their_own_jobs(
    blog: Blog, shared: str
) -> None:
    """Before remote URLs were normalized, nodes A and B (two spellings) had a schema each.
    The upgrade merges nothing and moves no node: each still finds its own jobs."""
    mine = blog.submit("a", article("Mine", "A's job, in A's old schema."))
    old_a = _make_it_old(shared, blog)
    with psycopg.connect(shared, autocommit=True) as conn:  # B, not yet upgraded, misses it
        conn.execute(
            "UPDATE public.gitpub_blog SET identity_sha256 = 'not yet' WHERE schema_name = %s",
            (old_a,),
        )
    node_b = _spelled_otherwise(blog, "node-b")
    theirs = node_b.submit("b", article("Theirs", "B's job, in B's old schema."))
    old_b = _make_it_old(shared, blog, f"file://{blog.remote}/")
    with psycopg.connect(shared, autocommit=True) as conn:
        conn.execute(
            "UPDATE public.gitpub_blog SET identity_sha256 = NULL WHERE schema_name = %s",
            (old_a,),
        )
    assert old_a != old_b and {old_a, old_b} <= _registered(shared)
    assert [j["job_id"] for j in node_b.status()] == [theirs]
    assert [j["job_id"] for j in blog.status()] == [mine]
    # A third node, spelling the remote yet otherwise, joins the oldest of them.
    node_c = blog.clone("node-c")
    node_c.git("remote", "set-url", "origin", str(blog.remote).removesuffix(".git"))
    assert [j["job_id"] for j in node_c.status()] == [mine]
