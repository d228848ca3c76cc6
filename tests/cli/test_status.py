"""`status` for people: what needs a person and what is in flight in full, the finished jobs
summarized; `--json` with --state/--since/--limit; one line per reason, the whole in `show`."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import uuid
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article, make_blog, version_1_store

from gitpub.core.states import State
from gitpub.store.db import SqliteStore

GATE = """\
import json, sys
json.load(sys.stdin)
reason = "the editor says no:\\n" + "\\n".join(f"line {i}: " + "too long " * 8 for i in range(6))
print(json.dumps({"ok": False, "reason": reason}))
"""


def _add_finished(blog: Blog, count: int, state: str = "PUBLISHED") -> list[str]:
    """Finished rows as years of publishing leave them (straight into the real store)."""
    ids = []
    db = blog.root / ".git" / "blogpub" / "state.sqlite3"
    with sqlite3.connect(db) as conn:
        for i in range(count):
            job_id = str(uuid.uuid4())
            stamp = f"2025-01-01T00:00:{i % 60:02d}.{i:06d}Z"
            key = f"old-{state}-{i}"
            conn.execute(
                "INSERT INTO blog_publication (job_id, idempotency_key, key_display, kind, state,"
                " source_sha256, source_path, max_attempts, target_path, created_at, updated_at)"
                " VALUES (?, ?, ?, 'article', ?, ?, ?, 8, ?, ?, ?)",
                (job_id, hashlib.sha256(key.encode()).hexdigest(), key, state, "0" * 64, "x")
                + (f"content/posts/{i}.md", stamp, stamp),
            )
            ids.append(job_id)
    return ids


@pytest.fixture
def busy(tmp_path: Path) -> tuple[Blog, str, str]:
    py = sys.executable
    (tmp_path / "gate.py").write_text(GATE)
    blog = make_blog(tmp_path, CONFIG + f'\n[steps]\nreview = [["{py}", "{tmp_path}/gate.py"]]\n')
    blog.trust()
    review = blog.submit("needs-editor", article("Gated", "An editor has to look."))
    blog.ok("run", "--until-idle")
    fresh = blog.submit("fresh", article("Fresh", "Not run yet."))
    _add_finished(blog, 15)
    return blog, review, fresh


def test_status_lists_open_jobs_in_full_and_summarizes_the_finished(
    busy: tuple[Blog, str, str],
) -> None:
    blog, review, fresh = busy
    out = blog.ok("status", env={"COLUMNS": "120"}).stdout
    lines = out.splitlines()
    assert lines[0] == "needs a person (1):"
    assert review[:8] in lines[1] and "the editor says no: line 0" in lines[1]
    assert all(len(line) <= 120 for line in lines)  # the multi-line reason is one line
    assert lines[2] == "in flight (1):" and fresh[:8] in lines[3]
    assert lines[4] == "done (15 PUBLISHED), the newest 10:"
    assert len([ln for ln in lines if "PUBLISHED" in ln and ln.startswith("  ")]) == 10
    assert lines[-1] == "  … 5 more (`git blogpub status --all` lists every job)"
    assert len(lines) == 16  # a screenful, however long the blog has lived

    assert blog.ok("status", "--state", "conflict").stdout.strip() == "no jobs match"
    everything = blog.ok("status", "--all").stdout
    assert everything.count("PUBLISHED") == 15 and review[:8] in everything


def _job_rows(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith("  ") and "…" not in ln]


def test_status_limit_n_lists_the_newest_n_jobs(busy: tuple[Blog, str, str]) -> None:
    """`--limit N` shows N jobs, the newest, open or finished, and says what it left out."""
    blog, review, fresh = busy
    one = blog.ok("status", "--limit", "1").stdout
    assert _job_rows(one) == [ln for ln in one.splitlines() if fresh[:8] in ln]
    assert "done (15 PUBLISHED)\n" in one and "the newest 0" not in one
    assert "  … 15 more" in one

    many = blog.ok("status", "--limit", "14").stdout
    assert len(_job_rows(many)) == 14
    assert review[:8] in many and fresh[:8] in many
    assert "done (15 PUBLISHED), the newest 12:" in many
    assert "  … 3 more" in many
    listed = blog.ok("status", "--json", "--limit", "14").json()
    assert len(listed["jobs"]) == 14 and listed["unlisted"] == 3
    assert len(blog.ok("status", "--json", "--limit", "30").json()["jobs"]) == 17


def test_status_json_filters(busy: tuple[Blog, str, str]) -> None:
    blog, review, fresh = busy
    default = blog.ok("status", "--json").json()
    assert len(default["jobs"]) == 12
    assert default["finished"] == {"PUBLISHED": 15} and default["unlisted"] == 5
    assert {review, fresh} <= {j["job_id"] for j in default["jobs"]}

    newest = blog.ok("status", "--json", "--state", "published", "--limit", "3").json()["jobs"]
    assert [j["state"] for j in newest] == ["PUBLISHED"] * 3
    assert [j["idempotency_key"] for j in newest] == [
        "old-PUBLISHED-12",
        "old-PUBLISHED-13",
        "old-PUBLISHED-14",
    ]

    recent = blog.ok("status", "--json", "--since", "1h").json()["jobs"]
    assert {j["job_id"] for j in recent} == {review, fresh}
    assert len(blog.ok("status", "--json", "--since", "2024-12-31").json()["jobs"]) == 17
    assert blog.ok("status", "--json", "--all").json()["unlisted"] == 0
    assert len(blog.ok("status", "--json", "--all", "--limit", "4").json()["jobs"]) == 4

    for bad in (("--state", "BOGUS"), ("--since", "yesterday"), ("--limit", "0")):
        res = blog.blogpub("status", *bad)
        assert res.returncode == 2, bad
        assert bad[0] in res.stderr and "Traceback" not in res.stderr


def test_show_prints_the_whole_reason_wrapped_and_finds_jobs_by_key(
    busy: tuple[Blog, str, str],
) -> None:
    blog, review, _ = busy
    out = blog.ok("show", "--key", "needs-editor", env={"COLUMNS": "80"}).stdout
    assert f"job_id:          {review}" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    flat = " ".join(out.split())
    assert "the editor says no: line 0:" in flat and "line 5: too long" in flat

    res = blog.blogpub("show", "--key", "never-submitted")
    assert res.returncode == 1 and "no job was submitted with this key" in res.stderr
    short = blog.blogpub("show", review[:3])
    assert short.returncode == 1
    assert short.stderr.strip() == f"git blogpub: job {review[:3]}: ids need 4+ characters"
    assert blog.blogpub("show").returncode == 2


def test_a_version_1_store_gains_the_status_indexes_and_keeps_its_jobs(blog: Blog) -> None:
    """A store as version 1 wrote it (its own schema, no indexes) is migrated, never dropped."""
    state_dir = blog.root / ".git" / "blogpub"
    job_id = str(uuid.uuid4())
    (state_dir / "jobs" / job_id).mkdir(parents=True)
    text = article("Kept", "Across the migration.")
    (state_dir / "jobs" / job_id / "source.txt").write_text(text)
    db = state_dir / "state.sqlite3"
    conn = version_1_store(db)
    stamp = "2026-01-02T03:04:05.000000Z"
    conn.execute(
        "INSERT INTO blog_publication (job_id, idempotency_key, kind, state, source_sha256,"
        " source_path, max_attempts, created_at, updated_at)"
        " VALUES (?, 'k', 'article', 'RECEIVED', ?, ?, 8, ?, ?)",
        (job_id, hashlib.sha256(text.encode()).hexdigest(), f"jobs/{job_id}/source.txt")
        + (stamp, stamp),
    )
    conn.close()
    with SqliteStore(db) as store:
        version = store.conn.execute("PRAGMA user_version").fetchone()[0]
        names = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        plan = " ".join(
            str(r[3])
            for r in store.conn.execute(
                "EXPLAIN QUERY PLAN SELECT * FROM blog_publication WHERE state = ?"
                " ORDER BY updated_at DESC LIMIT 10",
                (State.PUBLISHED.value,),
            )
        )
    assert version >= 2
    assert {"blog_publication_state_updated", "blog_publication_updated"} <= names
    assert "blog_publication_state_updated" in plan and "TEMP B-TREE" not in plan
    assert blog.job(job_id)["job"]["state"] == "RECEIVED"
