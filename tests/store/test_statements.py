"""What a job costs the shared store, counted, and claims of several jobs in one statement.

On PostgreSQL every statement is a round trip to the server, so a fleet's throughput follows
the statements a job needs. They are counted, not timed (`Connection.statements`: every
statement sent, BEGIN and COMMIT included), so the ceiling holds on any machine: a change
that sends more per job than it fails here, with the count."""

from __future__ import annotations

import threading

import pytest
from testing.fixtures import Blog, article

from gitpub import intake
from gitpub.context import open_context
from gitpub.ops import worker
from gitpub.ops.runner import Runner
from gitpub.store import leases, reads
from gitpub.store.db import now

JOBS = 8
CEILING = 31
"""Statements per job, at most: under a third of the 105 one worker sent per built-in-step job
before claims, transitions, events and folder copies were batched, and below the 42 it sent
before its lease checkpoints were answered by the job in hand and a prepare read the job's
history once, and the 33 before a batch's outbox rows were settled in one statement and
`run`'s report of what a pass did read the events of its jobs in one (about 30.6 now, at 8
jobs)."""


@pytest.fixture
def shared(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GITPUB_STORE", pg_url)
    return pg_url


def _submit(blog: Blog, count: int) -> list[str]:
    with open_context(blog.root) as ctx:
        made = [
            intake.create(ctx, key=f"count-{i}", source=article(f"Counted {i}", f"Body {i}."))
            for i in range(count)
        ]
    return [job.job_id for job, _ in made]


def test_a_built_in_job_costs_the_shared_store_at_most_the_ceiling(blog: Blog, shared: str) -> None:
    """One worker in a fresh clone publishes the jobs another node submitted, each exactly
    once, in at most CEILING statements per job."""
    ids = _submit(blog, JOBS)
    node = blog.clone("worker")
    with open_context(node.root) as ctx:
        before = ctx.store.conn.statements
        runner = Runner(node.root, concurrency=1)
        while runner.one_pass(ctx):
            pass
        sent = ctx.store.conn.statements - before
    assert all(node.commits_with_job(job_id) == 1 for job_id in ids)
    assert sent / JOBS <= CEILING, f"{sent} statements for {JOBS} jobs"


def test_one_statement_claims_several_jobs_and_skips_those_being_claimed(
    blog: Blog, shared: str
) -> None:
    """A claim of three jobs is one statement (its BEGIN and COMMIT, and two reads that bring
    their folders, beside it). While one worker's claim is still open, another's passes
    over the rows it holds instead of waiting for them, and takes the next ones: no job is
    ever claimed by both."""
    ids = _submit(blog, 6)
    with open_context(blog.root) as first, open_context(blog.root) as second:
        got: list[list[str]] = []
        done = threading.Event()
        with first.store.transaction() as conn:
            before = first.store.conn.statements
            where, params = _due()
            free = f"{where} AND lease_token IS NULL"
            rows = first.store.claim_rows(conn, free, params, ("first", "9999"), 3)
            assert first.store.conn.statements - before == 1
            held = [r.row["job_id"] for r in rows]

            def other() -> None:
                got.append([j.job_id for j in worker.claim_due(second, "second", 3)])
                done.set()

            thread = threading.Thread(target=other, daemon=True)
            thread.start()
            # Skipped, not waited for: the other claim ends while this one is still open.
            assert done.wait(timeout=5), "a claim waited for rows another claim holds"
        thread.join(timeout=30)
        assert held == ids[:3]
        assert got == [ids[3:]]
        before = first.store.conn.statements
        again = leases.claim_due(first.store, _due(), "first", 60, 10)
        assert again == []  # all six are held
        assert first.store.conn.statements - before == 3  # BEGIN, the claim, COMMIT


def _due() -> tuple[str, list[object]]:
    """The WHERE clause of the jobs with work, whoever holds them (`leases.claim_due` adds
    that nobody may)."""
    return reads.due_clause(worker.ACTIVE, now())


@pytest.mark.both_stores
def test_statements_are_counted_on_both_stores(blog: Blog) -> None:
    with open_context(blog.root) as ctx:
        before = ctx.store.conn.statements
        with ctx.store.transaction() as conn:
            conn.execute("SELECT COUNT(*) FROM blog_publication")
            conn.executemany(
                "UPDATE blog_publication SET updated_at = updated_at WHERE job_id = ?",
                [("a",), ("b",)],
            )
        assert ctx.store.conn.statements - before == 5  # BEGIN, 1 + 2, COMMIT
