"""One repository, one name: the spellings of a remote URL git reaches the same repository
through normalize alike, and the ones git tells apart stay apart. Pure string work."""

from __future__ import annotations

import pytest

from gitpub.git.remoteurl import normalize
from gitpub.store.blogs import blog_identity, blog_of, schema_name

SAME = [
    # scheme and host case, default ports, credentials, trailing `/` and `.git`
    (
        "https://example.com/team/blog",
        [
            "https://example.com/team/blog.git",
            "https://example.com/team/blog/",
            "https://example.com/team/blog.git/",
            "HTTPS://Example.COM/team/blog",
            "https://example.com:443/team/blog.git",
            "https://bot:t0ken-Xy7@example.com/team/blog.git",
            "https://bot@example.com/team/blog",
        ],
    ),
    ("http://example.com/blog", ["http://example.com:80/blog.git"]),
    ("git://example.com/blog", ["git://example.com:9418/blog.git/"]),
    # ssh: the scp-like `host:path` is relative to the home folder, as `~/path` is
    (
        "ssh://example.com/~/team/blog",
        [
            "git@example.com:team/blog.git",
            "example.com:team/blog",
            "example.com:~/team/blog.git",
            "ssh://git@example.com/~/team/blog.git",
            "ssh://example.com:22/~/team/blog",
            "git+ssh://git@example.com/~/team/blog",
        ],
    ),
    # … and `host:/path` is absolute, as `ssh://host/path` is
    (
        "ssh://example.com/srv/git/blog",
        [
            "example.com:/srv/git/blog.git",
            "ssh://git@example.com/srv/git/blog.git",
            "ssh://example.com:22/srv/git/blog/",
        ],
    ),
    (
        "ssh://example.com/~alice/blog",
        ["example.com:~alice/blog.git", "ssh://example.com/~alice/blog"],
    ),
    ("ssh://example.com:2222/blog", ["ssh://git@example.com:2222/blog.git"]),
    # a folder on this machine: the bare repository, its `.git`, a file:// URL
    (
        "/srv/git/blog",
        ["/srv/git/blog.git", "/srv/git/blog/", "/srv/git/blog/.git", "file:///srv/git/blog.git"],
    ),
]

APART = [
    # git sends `team/blog` (home-relative) for one and `/team/blog` for the other
    ("git@example.com:team/blog.git", "ssh://git@example.com/team/blog.git"),
    ("https://example.com/team/blog", "https://example.com/team/Blog"),
    ("https://example.com/blog", "http://example.com/blog"),
    ("ssh://example.com/blog", "ssh://example.com:2222/blog"),
    ("https://example.com/blog", "https://example.org/blog"),
]


@pytest.mark.parametrize(("name", "spellings"), SAME)
def test_every_spelling_of_one_repository_has_one_name(name: str, spellings: list[str]) -> None:
    assert normalize(name) == name
    assert {normalize(s) for s in spellings} == {name}


@pytest.mark.parametrize(("one", "other"), APART)
def test_what_git_tells_apart_stays_apart(one: str, other: str) -> None:
    assert normalize(one) != normalize(other)


def test_a_blog_is_its_repository_and_its_branch() -> None:
    plain = blog_identity("https://example.com/blog.git/", "main")
    assert blog_identity("https://bot:t0ken-Xy7@example.com/blog", "main") == plain
    assert blog_identity("https://example.com/blog", "drafts") != plain
    assert schema_name(plain) == schema_name(blog_identity("https://example.com/blog", "main"))


def test_the_old_name_is_the_spelling_without_credentials() -> None:
    """Schemas made before remote URLs were normalized were named by this: a node finds its
    own such schema first (tests/store/test_blog_schema.py)."""
    blog = blog_of("https://bot:t0ken-Xy7@example.com/blog.git/", "main")
    assert blog.legacy == "https://example.com/blog.git#main"
    assert "t0ken" not in blog.remote + blog.identity


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("../blog.git", "/home/one/blog.git"),
        ("./mirror/blog.git", "/home/one/clone/mirror/blog.git"),
        ("/srv/blog.git", "/srv/blog.git"),
        ("https://example.com/blog.git", "https://example.com/blog.git"),
        ("git@example.com:blog.git", "git@example.com:blog.git"),
        ("file:///srv/blog.git", "file:///srv/blog.git"),
    ],
)
def test_a_relative_local_remote_is_the_one_beside_its_clone(url: str, expected: str) -> None:
    from gitpub.git.remoteurl import anchored

    assert anchored(url, "/home/one/clone") == expected
