"""external_sync on real git with the real hooks installed: hand commits, uncommitted edits and
notes reach the remote with no job, exactly once, and nothing outside content paths is staged."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from testing.fixtures import Blog, article, git

from gitpub.context import open_context
from gitpub.sync import edits

HELLO = "content/posts/hello.mdx"


def state_dir(blog: Blog) -> Path:
    return blog.root / ".git" / "blogpub"


def outbox_rows(blog: Blog) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(state_dir(blog) / "state.sqlite3") as conn:
        return list(
            conn.execute(
                "SELECT kind, status, job_id FROM blog_publication_outbox ORDER BY created_at"
            )
        )


def sync_commits(blog: Blog) -> list[str]:
    """Commits on the remote branch that external_sync made (they carry its trailer)."""
    out = blog.remote_git(
        "log", "--format=%H", "--fixed-strings", "--grep=Blog-External-Sync: ", "main"
    )
    return out.split()


def remote_paths(blog: Blog, commit: str) -> list[str]:
    return blog.remote_git("show", "--format=", "--name-only", commit).split()


def fix_typo(blog: Blog) -> None:
    path = blog.root / HELLO
    path.write_text(path.read_text().replace("written by hand", "written by hand, typo fixed"))


def test_hand_commit_reaches_the_remote_without_a_job(blog: Blog) -> None:
    blog.ok("install")
    (blog.root / "content/posts/note.mdx").write_text(article("Note", "A note committed by hand."))
    blog.git("add", "content/posts/note.mdx")
    blog.git("commit", "-q", "-m", "a note, by hand")
    mine = blog.git("rev-parse", "HEAD")

    blog.ok("run", "--until-idle")
    assert blog.remote_log()[0] == mine  # the person's own commit, as they made it
    assert blog.remote_file("content/posts/note.mdx").startswith(b"---\ntitle: Note")
    assert blog.status() == []  # no job
    assert outbox_rows(blog) == [("external_sync", "delivered", None)]


def test_a_hint_alone_triggers_registration(blog: Blog) -> None:
    blog.ok("install")
    with open_context(blog.root) as ctx:
        assert edits.scan(ctx) == 0  # nothing yet; the periodic scan is not due again
        (blog.root / "content/posts/note.mdx").write_text(article("Note", "Hinted."))
        blog.git("add", "content/posts/note.mdx")
        blog.git("commit", "-q", "-m", "note")
        assert (state_dir(blog) / "hints").exists()
        assert edits.register_hints(ctx) == 1
        assert not list(state_dir(blog).glob("hints*"))  # consumed
        assert edits.register_hints(ctx) == 0
        assert edits.sweep(ctx) == 1
    assert blog.remote_file("content/posts/note.mdx").endswith(b"Hinted.\n")


def test_uncommitted_typo_found_by_reconcile_when_every_hint_is_lost(blog: Blog) -> None:
    blog.ok("install")
    fix_typo(blog)
    (blog.root / "README.md").write_text("a blog, edited but not for publishing\n")
    (blog.root / "notes.txt").write_text("scratch, untracked\n")
    (blog.root / "TODO.md").write_text("staged by the person, not for gitpub\n")
    blog.git("add", "TODO.md")
    for hint in state_dir(blog).glob("hints*"):
        hint.unlink()

    before = len(blog.remote_log())
    blog.ok("run", "--until-idle")
    blog.ok("run", "--until-idle")  # once: a second run finds nothing new

    assert len(blog.remote_log()) == before + 1
    (commit,) = sync_commits(blog)
    assert remote_paths(blog, commit) == [HELLO]
    assert b"typo fixed" in blog.remote_file(HELLO)
    # Everything outside content paths is exactly as the person left it.
    assert blog.remote_file("README.md") == b"a blog\n"
    assert blog.porcelain() == [" M README.md", "?? notes.txt", "A  TODO.md"]
    assert blog.git("rev-parse", "HEAD") == blog.remote_log()[0]
    assert blog.status() == []


def test_crash_right_after_the_push_delivers_exactly_once(blog: Blog) -> None:
    blog.ok("install")
    other = blog.clone("other")  # the remote moves meanwhile: a rebase is needed
    (other.root / "about.txt").write_text("pushed by someone else\n")
    other.git("add", "about.txt")
    other.git("commit", "-q", "-m", "someone else")
    other.git("push", "-q", "origin", "main")
    fix_typo(blog)
    (blog.root / "README.md").write_text("dirty, never staged\n")

    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "during_external_sync_push"})
    assert res.returncode == 137
    assert len(sync_commits(blog)) == 1  # the push itself went through

    blog.ok("run", "--until-idle")
    assert len(sync_commits(blog)) == 1
    assert [s for _, s, _ in outbox_rows(blog)] == ["delivered"]
    assert blog.remote_file("about.txt") == b"pushed by someone else\n"
    assert b"typo fixed" in blog.remote_file(HELLO)
    # The local branch was moved onto the rebased copy; the dirty file survived the move.
    assert blog.git("rev-parse", "HEAD") == blog.remote_log()[0]
    assert blog.porcelain() == [" M README.md"]


def test_a_conflicting_hand_edit_waits_for_a_person(blog: Blog) -> None:
    other = blog.clone("other")
    (other.root / HELLO).write_text(article("Hello", "Rewritten on another machine."))
    other.git("commit", "-q", "-am", "rewrite")
    other.git("push", "-q", "origin", "main")
    remote_before = blog.remote_log()
    (blog.root / HELLO).write_text(article("Hello", "Rewritten here, differently."))

    res = blog.ok("sweep")
    assert HELLO in res.stderr
    assert blog.remote_log() == remote_before  # nothing forced
    assert [s for _, s, _ in outbox_rows(blog)] == ["conflict"]
    assert "hand edits: 0 waiting for delivery, 1 in conflict" in blog.ok("status").stdout
    # The edit is safe in a local commit, and the checkout is untouched otherwise.
    assert (
        b"differently"
        in subprocess.run(
            ["git", "show", f"HEAD:{HELLO}"], cwd=blog.root, capture_output=True, check=True
        ).stdout
    )
    assert blog.porcelain() == []

    # The person merges it by hand (keeping their wording); the next run delivers it.
    blog.git("pull", "--rebase", "-q", check=False)
    (blog.root / HELLO).write_text(article("Hello", "Rewritten here, differently, merged."))
    blog.git("add", HELLO)
    git(blog.root, "rebase", "--continue", env={"GIT_EDITOR": "true"})
    blog.ok("run", "--until-idle")
    assert b"merged" in blog.remote_file(HELLO)
    assert [s for _, s, _ in outbox_rows(blog)] == ["delivered", "delivered"]


def _conflicting_hand_edit(blog: Blog) -> None:
    other = blog.clone("other")
    (other.root / HELLO).write_text(article("Hello", "Rewritten on another machine."))
    other.git("commit", "-q", "-am", "rewrite")
    other.git("push", "-q", "origin", "main")
    (blog.root / HELLO).write_text(article("Hello", "Rewritten here, differently."))
    blog.ok("sweep")
    assert "1 in conflict" in blog.ok("status").stdout


def test_a_conflict_the_person_pushed_by_hand_is_no_longer_counted(blog: Blog) -> None:
    _conflicting_hand_edit(blog)
    # The person merges and pushes with plain git: no new event is registered for gitpub.
    blog.git("pull", "--rebase", "-q", check=False)
    (blog.root / HELLO).write_text(article("Hello", "Rewritten here, differently, merged."))
    blog.git("add", HELLO)
    git(blog.root, "rebase", "--continue", env={"GIT_EDITOR": "true"})
    blog.git("push", "-q", "origin", "main")
    blog.ok("run", "--until-idle")
    assert [s for _, s, _ in outbox_rows(blog)] == ["delivered"]
    assert "hand edits" not in blog.ok("status").stdout


def test_a_conflict_the_person_dropped_is_no_longer_counted(blog: Blog) -> None:
    _conflicting_hand_edit(blog)
    blog.git("fetch", "-q", "origin")
    blog.git("reset", "-q", "--hard", "origin/main")  # the person keeps the other side
    blog.ok("run", "--until-idle")
    assert [s for _, s, _ in outbox_rows(blog)] == ["superseded"]
    assert "hand edits" not in blog.ok("status").stdout


def test_edits_on_another_branch_are_not_published(blog: Blog) -> None:
    blog.git("switch", "-q", "-c", "drafts")
    fix_typo(blog)
    before = blog.remote_log()
    blog.ok("run", "--until-idle")
    assert blog.remote_log() == before
    assert blog.porcelain() == [f" M {HELLO}"]
    assert outbox_rows(blog) == []
