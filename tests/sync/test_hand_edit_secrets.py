"""A hand edit holding a secret is held back: under the default `hand_edits = "all"` the file
a person drops into the article folder is scanned like a submitted source; with a finding it
is not committed, not pushed, and named by `status` and `doctor` until it is removed or its
fingerprint allowed. Real git, the real secrets corpus (tests/corpus/secrets)."""

from __future__ import annotations

import re
import subprocess

from testing import secret_corpus
from testing.fixtures import CONFIG, Blog, article

# An AWS key pair as a person might paste it into notes: Nosey Parker's example secret key.
SECRET = secret_corpus.one("np.aws.2", 2)
HAND = article("Deploy notes", "Keys for the bucket:\n\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n")
HAND += SECRET + "\n"


def on_remote(blog: Blog, path: str) -> bool:
    proc = subprocess.run(["git", "cat-file", "-e", f"main:{path}"], cwd=blog.remote)
    return proc.returncode == 0


def test_a_hand_edit_with_a_secret_is_held_back_until_allowed(blog: Blog) -> None:
    posts = blog.root / "content" / "posts"
    (posts / "hand.md").write_text(HAND)
    (posts / "fine.md").write_text(article("Fine", "A hand edit with nothing to hide."))
    before = blog.remote_log()

    blog.ok("run", "--until-idle")

    assert on_remote(blog, "content/posts/fine.md")  # the clean edit of the same pass goes
    assert not on_remote(blog, "content/posts/hand.md")
    touched = blog.remote_git("log", "--format=%H", "main", "--", "content/posts/hand.md")
    assert touched == "" and len(blog.remote_log()) == len(before) + 1
    assert "?? content/posts/hand.md" in blog.git("status", "--porcelain")  # left as it was

    status = blog.ok("status").stdout
    assert "hand edits held back, a secret was found" in status
    fingerprint = re.search(r"content/posts/hand\.md: .* line \d+ \(([0-9a-f]{20})\)", status)
    assert fingerprint, status
    doctor = blog.blogpub("doctor")
    assert doctor.returncode == 1
    assert "held back, not delivered: content/posts/hand.md: " in doctor.stdout, doctor.stdout
    assert "[scan] allow" in doctor.stdout
    # Named, never repeated: no output and no file of the state dir holds the secret.
    stored = b"".join(
        p.read_bytes() for p in (blog.root / ".git/blogpub").rglob("*") if p.is_file()
    )
    assert SECRET.encode() not in stored
    assert SECRET not in status + doctor.stdout + doctor.stderr

    # A sweep later changes nothing: still held.
    blog.ok("sweep")
    assert not on_remote(blog, "content/posts/hand.md")

    # A person judges it no secret (here: an example key) and allows its fingerprint.
    allowed = CONFIG + f'\n[scan]\nallow = ["{fingerprint.group(1)}"]\n'
    (blog.root / ".blogpub.toml").write_text(allowed)
    blog.ok("sweep")
    assert on_remote(blog, "content/posts/hand.md")
    assert blog.remote_file("content/posts/hand.md") == HAND.encode()
    assert "held back" not in blog.ok("status").stdout
    after = blog.blogpub("doctor").stdout
    assert "ok       hand edits no hand edit holds a secret" in after, after


def test_a_hand_edit_whose_secret_is_removed_is_delivered(blog: Blog) -> None:
    hand = blog.root / "content" / "posts" / "hand.md"
    hand.write_text(HAND)
    blog.ok("sweep")
    assert not on_remote(blog, "content/posts/hand.md")
    cleaned = HAND.replace(SECRET, "(the secret key lives in the password manager)")
    hand.write_text(cleaned)
    blog.ok("sweep")
    assert blog.remote_file("content/posts/hand.md") == cleaned.encode()
    assert "held back" not in blog.ok("status").stdout
