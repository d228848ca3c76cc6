"""The PostgreSQL the shared-store tests run against: a real server, configured as
tests/testing/pgcluster.py starts it (durability off, Unix socket only)."""

from __future__ import annotations

import uuid

import psycopg


def test_the_server_keeps_what_one_connection_writes_for_the_next_and_runs_without_fsync(
    pg_url: str,
) -> None:
    # A name of its own: under xdist, workers may share one server (GITPUB_TEST_PG).
    table = f"pgcluster_{uuid.uuid4().hex}"
    text = "Ein Artikel über 文字 — on the shared store"
    with psycopg.connect(pg_url) as conn:
        conn.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, body text NOT NULL)")
        conn.execute(f"INSERT INTO {table} VALUES (1, %s), (2, %s)", (text, "second"))
    try:
        with psycopg.connect(pg_url) as conn:
            rows = conn.execute(f"SELECT id, body FROM {table} ORDER BY id").fetchall()
            assert rows == [(1, text), (2, "second")]
            assert conn.execute("SHOW server_encoding").fetchone() == ("UTF8",)
            assert conn.execute("SHOW fsync").fetchone() == ("off",)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {table}")


def test_the_server_listens_on_no_tcp_port(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
        # This very connection came through the Unix socket: a TCP one has a server address.
        assert conn.execute("SELECT inet_server_addr()").fetchone() == (None,)
