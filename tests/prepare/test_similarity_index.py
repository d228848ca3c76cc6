"""The similarity index gives the judge the answer reading the whole blog gives.

Random blogs in a real repository, changed commit after commit (articles added, edited,
copied, deleted), random candidates (copies, near-copies, strangers, empty bodies, CJK), and
every kind of floor: the built-in judge's answer over the few articles the index hands it
equals its answer over every article of the blog, as today's brute force computes it."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from testing.fixtures import CONFIG, Blog, git, make_blog

from gitpub.context import Context, open_context
from gitpub.git.treefiles import TreeFiles
from gitpub.prepare import builtins, similarity_index
from gitpub.store import grams

WORDS = [
    "harbour", "tide", "granite", "storm", "pier", "lamp", "the", "and", "of", "a",
    "rope", "gull", "salt", "wind", "north", "keel", "moon", "sand", "fog", "bell",
    "山", "水", "月", "小", "高", "石", "出", "落", "风", "雨",
]  # fmt: skip


def body(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def text_of(rng: random.Random, title: str) -> str:
    size = rng.choice([0, 1, 3, 8, 20, 40, 80])
    inner = body(rng, size) if size else rng.choice(["", "ab", "x"])
    heads = [f"---\ntitle: {title}\n---\n\n", f"+++\ntitle = '{title}'\n+++\n", ""]
    return rng.choice(heads) + inner + rng.choice(["\n", "", "\r\n"])


def edited(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(words))
        words[i] = rng.choice([rng.choice(WORDS), "", words[i] + rng.choice(WORDS)])
    return " ".join(words)


def change_blog(rng: random.Random, blog: Blog, texts: dict[str, str], n: int) -> str:
    """Add, edit, copy and delete articles; commit; the commit's id."""
    posts = blog.root / "content" / "posts"
    for _ in range(n):
        roll = rng.random()
        if texts and roll < 0.25:
            path = rng.choice(sorted(texts))
            texts[path] = edited(rng, texts[path])
        elif texts and roll < 0.4:
            texts[f"content/posts/copy-{len(texts)}.md"] = rng.choice(list(texts.values()))
        elif texts and roll < 0.5:
            texts.pop(rng.choice(sorted(texts)))
        else:
            name = rng.choice(["md", "mdx", "txt"])  # .txt: not an article, never judged
            texts[f"content/posts/p{len(texts)}-{rng.randrange(1000)}.{name}"] = text_of(
                rng, f"T{len(texts)}"
            )
    for old in posts.glob("*"):
        if f"content/posts/{old.name}" not in texts and old.name != "hello.mdx":
            old.unlink()
    for path, text in texts.items():
        (blog.root / path).write_bytes(text.encode("utf-8"))
    git(blog.root, "add", "-A")
    git(blog.root, "commit", "--quiet", "--allow-empty", "-m", "change")
    return git(blog.root, "rev-parse", "HEAD").strip()


def candidate(rng: random.Random, texts: dict[str, str]) -> str:
    roll = rng.random()
    if texts and roll < 0.3:
        return rng.choice(list(texts.values()))  # the same article, at another path
    if texts and roll < 0.7:
        return edited(rng, rng.choice(list(texts.values())))
    return text_of(rng, "Candidate")


def answer(ctx: Context, own: str, text: str, pool: dict[str, bytes]) -> dict[str, Any]:
    request = {
        "mode": "prepare",
        "candidate": {"path": own, "text": text},
        "existing": [
            {"path": p, "text": b.decode("utf-8", "replace")} for p, b in sorted(pool.items())
        ],
    }
    s = ctx.config.steps
    return builtins.judge(request, s.similarity_skip, s.similarity_update, s.similar)


def whole_blog(ctx: Context, files: TreeFiles, queued: dict[str, bytes]) -> dict[str, bytes]:
    """Today's pool: every article of the tree, then the queued ones over them."""
    suffixes = tuple(ctx.config.publish.suffixes)
    pool = {p: files[p] for p in files if p.endswith(suffixes)}
    pool.update(queued)
    return pool


@pytest.mark.parametrize(
    ("skip", "update", "budget", "room"),
    [
        (0.85, 0.5, similarity_index.BUDGET, grams.MAX_BLOBS),  # the defaults
        (0.85, 0.5, 0, grams.MAX_BLOBS),  # bounds only: every candidate scored from its text
        (0.3, 0.1, 0, 60),  # low floors; an index that starts over again and again
        (1.0, 1.0, 50, grams.MAX_BLOBS),  # only a perfect score counts
        (0.6, 0.0, similarity_index.BUDGET, grams.MAX_BLOBS),  # floor 0: any shared 3-gram
    ],
)
def test_the_index_answers_as_the_whole_blog_does(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    skip: float,
    update: float,
    budget: int,
    room: int,
) -> None:
    monkeypatch.setattr(similarity_index, "BUDGET", budget)
    monkeypatch.setattr(grams, "MAX_BLOBS", room)
    steps = f"\n[steps]\nsimilarity_skip = {skip}\nsimilarity_update = {update}\n"
    blog = make_blog(
        tmp_path, CONFIG.replace("[publish]\n", '[publish]\nsuffixes = [".md", ".mdx"]\n') + steps
    )
    rng = random.Random(f"{skip}-{update}-{budget}-{room}")
    texts: dict[str, str] = {}
    decisions = set()
    with open_context(blog.root, need_remote=False) as ctx:
        for _ in range(5):
            commit = change_blog(rng, blog, texts, rng.randint(5, 25))
            files = ctx.repo.files_under(commit, ctx.config.publish.content)
            for _ in range(25):
                text = candidate(rng, texts)
                articles = [p for p in files if p.endswith((".md", ".mdx"))]
                own = rng.choice([*articles[:3], "content/posts/new.md"])
                queued = {}
                if rng.random() < 0.3:  # an earlier job's article, on its way to the remote
                    way = rng.choice([*articles[-2:], "content/posts/queued.md"])
                    queued[way] = candidate(rng, texts).encode("utf-8")
                queued.pop(own, None)
                got = similarity_index.pool(ctx, files, own, text, queued)
                want = answer(ctx, own, text, whole_blog(ctx, files, queued))
                assert answer(ctx, own, text, got) == want, (text, own, sorted(got))
                decisions.add((want["decision"], "similar" in want))
    # The blogs reached every kind of answer the judge gives.
    assert {("NEW", False), ("SKIP", False), ("UPDATE", False)} <= decisions
    if update < 1.0:
        assert ("NEW", True) in decisions


def test_an_article_is_read_once_whatever_tree_or_clone_it_is_in(tmp_path: Path) -> None:
    """Blob ids are what the index knows: the next commit's articles cost only the new one,
    and a second clone of the same blog reads none."""
    blog = make_blog(tmp_path, CONFIG)
    rng = random.Random(5)
    texts: dict[str, str] = {}
    first = change_blog(rng, blog, texts, 30)
    read: list[str] = []

    def counted(ctx: Context, commit: str) -> TreeFiles:
        real = ctx.repo.files_under(commit, ctx.config.publish.content)

        def reading(oids: Any) -> dict[str, bytes]:
            oids = list(oids)
            read.extend(oids)
            return ctx.repo.blobs(oids)

        return TreeFiles(real.oids, reading)

    with open_context(blog.root, need_remote=False) as ctx:
        similarity_index.pool(ctx, counted(ctx, first), "content/posts/new.mdx", "a b c", {})
        articles = {p for p in texts if p.endswith((".md", ".mdx"))} | {"content/posts/hello.mdx"}
        blobs = {git(blog.root, "rev-parse", f"HEAD:{p}").strip() for p in articles}
        assert sorted(read) == sorted(blobs)  # each distinct article once, copies never
        texts["content/posts/one-more.mdx"] = "---\ntitle: x\n---\n\nharbour lamp salt\n"
        second = change_blog(rng, blog, texts, 0)
        read.clear()
        similarity_index.pool(ctx, counted(ctx, second), "content/posts/new.mdx", "a b c", {})
        assert read == [git(blog.root, "rev-parse", "HEAD:content/posts/one-more.mdx").strip()]
    other = blog.clone("second")
    read.clear()
    with open_context(other.root, need_remote=False) as ctx:
        head = git(other.root, "rev-parse", "HEAD").strip()
        similarity_index.pool(ctx, counted(ctx, head), "content/posts/new.mdx", "a b c", {})
    assert read == []


def test_without_a_usable_cache_the_judge_reads_the_whole_blog(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, CONFIG)
    rng = random.Random(9)
    texts: dict[str, str] = {}
    commit = change_blog(rng, blog, texts, 20)
    cache = Path(os.environ["XDG_CACHE_HOME"])
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "gitpub").write_text("a file where the cache folder would be\n")
    with open_context(blog.root, need_remote=False) as ctx:
        files = ctx.repo.files_under(commit, ctx.config.publish.content)
        text = next(iter(texts.values()))
        got = similarity_index.pool(ctx, files, "content/posts/new.mdx", text, {})
        assert got == whole_blog(ctx, files, {})
