"""Idempotency keys: stored as the SHA-256 of the raw key, never raw, never colliding; a key
names one request, so the same key with another source is refused."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from pathlib import Path

import pytest
from testing.fixtures import Blog, article, version_1_store

from gitpub import KeyReused, Publisher
from gitpub.store.db import SCHEMA_VERSION

# Two keys that look like secrets to the sanitizer and redact to one display form.
KEY_A = "api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc"
KEY_B = "api_key=sk_live_9xY27LmQwERtyUiOp3as8dFg"
SHOWN = "api_key=[REDACTED:stripe-access-token]"


def _state_dir(blog: Blog) -> Path:
    return blog.root / ".git" / "blogpub"


def _every_byte_on_disk(blog: Blog) -> bytes:
    return b"".join(p.read_bytes() for p in _state_dir(blog).rglob("*") if p.is_file())


@pytest.mark.both_stores
def test_two_secret_looking_keys_stay_two_jobs(blog: Blog) -> None:
    first = blog.submit(KEY_A, article("First", "One request.", slug="first"))
    second = blog.submit(KEY_B, article("Second", "Another one.", slug="second"))
    # The issue's own pair, which older sanitizers redacted alike, stays two jobs as well.
    third = blog.submit("password=aaaaaaaa1", article("Third", "A third.", slug="third"))
    fourth = blog.submit("password=bbbbbbbb2", article("Fourth", "A fourth.", slug="fourth"))
    assert len({first, second, third, fourth}) == 4
    blog.ok("run", "--until-idle")

    assert {j["state"] for j in blog.status()} == {"PUBLISHED"}
    assert b"One request." in blog.remote_file("content/posts/first.mdx")
    assert b"Another one." in blog.remote_file("content/posts/second.mdx")
    shown = {j["job_id"]: j for j in blog.status()}
    assert shown[first]["idempotency_key"] == shown[second]["idempotency_key"] == SHOWN
    assert shown[first]["key_sha256"] == hashlib.sha256(KEY_A.encode()).hexdigest()
    assert shown[second]["key_sha256"] == hashlib.sha256(KEY_B.encode()).hexdigest()
    # The raw keys reached neither the database, nor the job folders, nor any log.
    blog.ok("status")
    on_disk = _every_byte_on_disk(blog)
    assert KEY_A.split("=")[1].encode() not in on_disk
    assert KEY_B.split("=")[1].encode() not in on_disk


@pytest.mark.both_stores
def test_same_key_same_source_is_the_same_job(blog: Blog) -> None:
    text = article("Again", "Sent twice by a retrying client.")
    assert blog.submit(KEY_A, text) == blog.submit(KEY_A, text)
    assert len(blog.status()) == 1


@pytest.mark.both_stores
def test_same_key_other_source_is_refused_naming_the_job(blog: Blog) -> None:
    job_id = blog.submit(KEY_B, article("One", "The first text."))
    src = blog.root.parent / "other.mdx"
    src.write_text(article("Two", "A different text under the same key."))

    res = blog.blogpub("submit", "--key", KEY_B, "--source", str(src))

    assert res.returncode == 1
    assert res.stderr.splitlines() == [
        f"git blogpub: key {SHOWN} was used for a different source (job {job_id})"
    ]
    assert [j["job_id"] for j in blog.status()] == [job_id]  # nothing recorded


@pytest.mark.both_stores
def test_same_key_other_target_is_refused(blog: Blog) -> None:
    text = article("Placed", "Asked for one path, then for another.")
    job_id = blog.submit("placed", text, "--target", "content/posts/a.mdx")
    src = blog.root.parent / "placed.mdx"
    src.write_text(text)
    res = blog.blogpub(
        "submit", "--key", "placed", "--source", str(src), "--target", "content/posts/b.mdx"
    )
    assert res.returncode == 1
    assert f"key placed was used for a different target (job {job_id})" in res.stderr


@pytest.mark.both_stores
def test_api_raises_a_typed_error(blog: Blog) -> None:
    pub = Publisher(blog.root)
    first = pub.submit(article("Api", "From Python."), key="api-key-1")
    assert pub.submit(article("Api", "From Python."), key="api-key-1").job_id == first.job_id
    with pytest.raises(KeyReused) as caught:
        pub.submit(article("Api", "Something else."), key="api-key-1")
    assert caught.value.job_id == first.job_id
    assert caught.value.key == "api-key-1"
    assert "was used for a different source" in caught.value.message


def test_a_version_1_store_is_migrated_not_dropped(blog: Blog) -> None:
    """A store written before keys were hashed: its jobs survive, and their old keys (kept
    only sanitized) still find them."""
    state = _state_dir(blog)
    state.mkdir(parents=True)
    db = state / "state.sqlite3"
    stamp = "2026-01-02T03:04:05.000000Z"
    conn = version_1_store(db)
    ids, texts = {}, {}
    bodies = ("Bread rises overnight in a cold kitchen.", "Tides follow the moon, not the sun.")
    for n, key in enumerate((SHOWN, "plain-old-key")):
        text = texts[key] = article(f"Old {n}", bodies[n], slug=f"old-{n}")
        job_id = str(uuid.uuid4())
        folder = state / "jobs" / job_id
        folder.mkdir(parents=True)
        (folder / "source.txt").write_text(text)
        conn.execute(
            "INSERT INTO blog_publication (job_id, idempotency_key, kind, state, source_sha256,"
            " source_path, max_attempts, created_at, updated_at)"
            " VALUES (?, ?, 'article', 'RECEIVED', ?, ?, 8, ?, ?)",
            (
                job_id,
                key,
                hashlib.sha256(text.encode()).hexdigest(),
                f"jobs/{job_id}/source.txt",
                stamp,
                stamp,
            ),
        )
        ids[key] = job_id
    conn.close()

    shown = {j["job_id"]: j["idempotency_key"] for j in blog.status()}
    assert shown == {v: k for k, v in ids.items()}
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    # The raw keys a client would send again find their jobs.
    assert blog.submit(KEY_A, texts[SHOWN]) == ids[SHOWN]
    assert blog.submit("plain-old-key", texts["plain-old-key"]) == ids["plain-old-key"]
    blog.ok("run", "--until-idle")
    assert [j["state"] for j in blog.status()] == ["PUBLISHED", "PUBLISHED"]


def test_a_key_naming_a_password_is_displayed_redacted(blog: Blog) -> None:
    # An unquoted `password=…` in a key is a credential whatever it looks like: only its
    # hash and a redacted display form are stored.
    raw = "password=aaaaaaaa1"
    job_id = blog.submit(raw, article("Keyed", "A plain article."))
    shown = blog.job(job_id)
    assert raw not in json.dumps(shown)
    assert shown["job"]["idempotency_key"].startswith("password=[REDACTED")
    db = (blog.root / ".git" / "blogpub" / "state.sqlite3").read_bytes()
    assert raw.encode() not in db
