"""`[sync] hand_edits`: what of a person's own work external_sync may deliver, and `sweep`
naming what it could not deliver."""

from __future__ import annotations

from pathlib import Path

from testing.fixtures import CONFIG, Blog, article, make_blog

HELLO = "content/posts/hello.mdx"


def _blog(tmp_path: Path, mode: str) -> Blog:
    return make_blog(tmp_path, CONFIG + f'\n[sync]\nhand_edits = "{mode}"\n')


def test_committed_never_commits_a_persons_uncommitted_work(tmp_path: Path) -> None:
    blog = _blog(tmp_path, "committed")
    head = blog.git("rev-parse", "HEAD")
    before = blog.remote_log()
    (blog.root / HELLO).write_text(article("Hello", "Half-finished sentence, not yet saved"))
    blog.ok("sweep")
    blog.ok("run", "--until-idle")
    assert blog.remote_log() == before
    assert blog.git("rev-parse", "HEAD") == head  # no commit made for them
    assert blog.porcelain() == [f" M {HELLO}"]

    # What the person commits themselves is delivered.
    note = "content/posts/note.mdx"
    (blog.root / note).write_text(article("Note", "Committed by hand."))
    blog.git("add", note)
    blog.git("commit", "-q", "-m", "a note")
    blog.ok("sweep")
    assert blog.remote_file(note) == (blog.root / note).read_bytes()
    assert blog.porcelain() == [f" M {HELLO}"]  # still theirs, still uncommitted


def test_off_delivers_no_hand_edit(tmp_path: Path) -> None:
    blog = _blog(tmp_path, "off")
    before = blog.remote_log()
    note = "content/posts/note.mdx"
    (blog.root / note).write_text(article("Note", "Committed by hand."))
    blog.git("add", note)
    blog.git("commit", "-q", "-m", "a note")
    res = blog.ok("sweep")
    assert 'hand_edits = "off"' in res.stdout
    blog.ok("run", "--until-idle")
    assert blog.remote_log() == before


def test_bad_hand_edits_value_is_a_config_error(tmp_path: Path) -> None:
    blog = _blog(tmp_path, "some")
    res = blog.blogpub("sweep")
    assert res.returncode == 1
    assert "sync.hand_edits must be one of all, committed, off, got 'some'" in res.stderr


def test_sweep_names_the_paths_it_could_not_deliver_every_time(blog: Blog) -> None:
    other = blog.clone("other")
    (other.root / HELLO).write_text(article("Hello", "Rewritten on another machine."))
    other.git("commit", "-q", "-am", "rewrite")
    other.git("push", "-q", "origin", "main")
    (blog.root / HELLO).write_text(article("Hello", "Rewritten here, differently."))

    first = blog.ok("sweep")
    assert f"not delivered (in conflict): {HELLO}" in first.stderr
    again = blog.ok("sweep")  # nothing new to try: the paths are still named
    assert f"not delivered (in conflict): {HELLO}" in again.stderr
