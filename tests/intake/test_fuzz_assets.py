"""Asset names, fuzzed, through the doors that take them: the Python API (`assets={name:
bytes}`), and `git blogpub dry-run --asset FILE=NAME`, which goes on to the prepare rules (a
name that meets an existing file up to case or Unicode normalization, the article's own path).

A name is taken, or refused with one line (an InputError through the API: never another
exception), or the preview says REVIEW with its reason on one line; nothing is recorded on a
refusal, and no secret in a name is repeated."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from testing import fuzzing
from testing.fixtures import Blog, article

SEGMENTS = st.one_of(
    st.sampled_from(
        [
            "images",
            "x.png",
            "..",
            ".",
            "",
            ".hidden",
            "CON",
            "com1.txt",
            "a b ",
            " lead",
            "trail.",
            "a:b",
            "a\\b",
            "a*b",
            "hello.mdx",
            "Hello.mdx",
            unicodedata.normalize("NFC", "café.png"),
            unicodedata.normalize("NFD", "café.png"),
            unicodedata.normalize("NFD", "CAFÉ.png"),
            "x" * 256,
            "漢字.png",
            fuzzing.GH_TOKEN,
            fuzzing.CREDENTIAL,
        ]
    ),
    fuzzing.words(surrogates=False),
)
NAMES = st.lists(SEGMENTS, min_size=1, max_size=3).map("/".join)


def _exists(blog: Blog) -> None:
    """Files an asset may meet: a picture written NFC, beside the hand-written hello.mdx."""
    (blog.root / "content" / "posts" / unicodedata.normalize("NFC", "café.png")).write_bytes(b"a")
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "a picture")
    blog.git("push", "--quiet", "origin", "HEAD:main")


def test_asset_names_through_the_api(blog: Blog) -> None:
    from gitpub import Publisher
    from gitpub.core.errors import InputError

    publisher = Publisher(blog.root)
    text = article("Named", "A post with a fuzzed asset.")

    @given(names=st.lists(NAMES, min_size=1, max_size=2))
    @fuzzing.budget(2)
    def one(names: list[str]) -> None:
        fuzzing.tried("asset-names-api")
        before = fuzzing.written(blog.root)
        try:
            publisher.submit(text, key="|".join(names), assets={n: b"\x89PNG" for n in names})
        except InputError as exc:
            fuzzing.check_line(fuzzing.shown(exc.message), names)
            assert fuzzing.written(blog.root) == before, (names, exc.message)

    one()


def test_asset_names_through_a_dry_run(blog: Blog) -> None:
    _exists(blog)
    picture = blog.root.parent / "picture.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n")
    source = blog.root.parent / "post.mdx"
    source.write_text(article("Pictured", "A post with a fuzzed asset."))

    @given(name=NAMES)
    @fuzzing.budget(0.5)
    def one(name: str) -> None:
        fuzzing.tried("asset-names-dry-run")
        before = fuzzing.written(blog.root), blog.git("worktree", "list")
        argv = ["dry-run", "--source", str(source), "--target", "content/posts/pictured.mdx"]
        argv += ["--asset", f"{picture}={name}"]
        code, out, err = fuzzing.in_process(blog.root, argv, b"")
        fuzzing.check_refusal(code, out, err, name)
        assert (fuzzing.written(blog.root), blog.git("worktree", "list")) == before, name
        if code == 0:
            head = out.split("\ndiff:\n", 1)[0].splitlines()
            prefixes = ("outcome:", "base:", "target:", "asset:", "manifest:", "  ")
            assert all(line.startswith(prefixes) for line in head), (name, out)

    one()


# ---------------------------------------------------------------------------- what it found


def test_found_assets_that_no_checkout_can_hold_together_are_refused_first(blog: Blog) -> None:
    """`images` beside `images/images`: the job folder was half written when the second
    could not be, and the API raised FileExistsError. Two names equal up to case or
    normalization are refused alike; nothing is recorded."""
    from gitpub import Publisher
    from gitpub.core.errors import InputError

    publisher = Publisher(blog.root)
    text = article("Twins", "Two assets that cannot both be files.")
    nfc, nfd = (unicodedata.normalize(f, "café.png") for f in ("NFC", "NFD"))
    for names, said in (
        (["images", "images/images"], "--asset 'images': a file where --asset 'images/images'"),
        (["a.png", "A.png"], "one name up to case"),
        ([nfc, nfd], "one name up to Unicode normalization (NFC and NFD)"),
        (["Img/a.png", "img/b.png"], "'img' and 'Img' are one name up to case"),
    ):
        with pytest.raises(InputError, match=re.escape(said)):
            publisher.submit(text, key="twins", assets={n: b"x" for n in names})
        assert not (blog.root / ".git" / "blogpub").exists(), names
    cli = blog.blogpub(
        "submit",
        "--key",
        "twins",
        "--source",
        "-",
        "--asset",
        f"{blog.root / 'README.md'}=a",
        "--asset",
        f"{blog.root / 'README.md'}=a/b",
        input=text,
    )
    assert cli.returncode == 1 and cli.stderr.count("\n") == 1, cli
