"""Ready jobs delivered together vs the naive loop, side by side in one run.

For each size (30, 100 and 300 articles by default), each repetition builds two fresh blogs on
bare remotes whose post-receive hook counts the pushes they receive (not timed), then times,
in alternating order:

- gitpub: the articles are submitted (not timed), then `git blogpub run --until-idle` takes
  every job from RECEIVED to PUBLISHED: prepare (draft, judge, secret scan, validation,
  manifest), commit, delivery;
- the floor: a shell loop that, per article, writes the file, `git add`, `git commit` and
  `git push` — what a fire-and-forget pipeline does, with no job, no check and no recovery.

Python's bytecode cache is warm, as on a person's machine (a first run of two articles, not
timed, fills it in the scratch folder). Medians per size; the ratio is gitpub's median over
the loop's. Every run is checked: each job PUBLISHED with exactly one commit on the remote.

    python benchmarks/bench_batch.py                 # 30, 100, 300 articles
    python benchmarks/bench_batch.py --sizes 10 --reps 1
    python benchmarks/bench_batch.py --sizes 30 --existing 1000   # into a big blog
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_e2e import _git, articles, blogpub_argv, hermetic_env, make_blog, pushes

LOOP = """\
set -e
i=0
for src in "$@"; do
  i=$((i + 1))
  dest="content/posts/loop-$i.mdx"
  cp "$src" "$dest"
  git add "$dest"
  git commit --quiet -m "publish $dest"
  git push --quiet origin HEAD:main
done
"""


@dataclass
class Timed:
    seconds: float
    pushes: int


def blog_with_posts(base: Path, existing: int) -> tuple[Path, Path]:
    """A blog of `existing` hand-written posts besides the scaffold's one (not timed)."""
    blog, remote = make_blog(base)
    if existing:
        for i, text in enumerate(articles(existing, seed=1000)):
            (blog / "content" / "posts" / f"old-{i}.mdx").write_text(text)
        _git(blog, "add", ".")
        _git(blog, "commit", "--quiet", "-m", "the blog so far")
        _git(blog, "push", "--quiet", "origin", "HEAD:main")
        (remote / "pushes.log").unlink()
    return blog, remote


def gitpub_run(base: Path, count: int, seed: int, existing: int = 0) -> Timed:
    blog, remote = blog_with_posts(base, existing)
    argv, _ = blogpub_argv()
    sources = write_sources(base, count, seed)
    for i, src in enumerate(sources):
        subprocess.run(
            [*argv, "submit", "--key", f"bench-{i}", "--source", str(src)],
            cwd=blog,
            check=True,
            capture_output=True,
        )
    started = time.perf_counter()
    subprocess.run([*argv, "run", "--until-idle"], cwd=blog, check=True, capture_output=True)
    took = time.perf_counter() - started
    check_published(blog, remote, count)
    return Timed(took, pushes(remote))


def loop_run(base: Path, count: int, seed: int, existing: int = 0) -> Timed:
    blog, remote = blog_with_posts(base, existing)
    sources = write_sources(base, count, seed)
    script = base / "loop.sh"
    script.write_text(LOOP)
    started = time.perf_counter()
    subprocess.run(
        ["sh", str(script), *map(str, sources)], cwd=blog, check=True, capture_output=True
    )
    took = time.perf_counter() - started
    return Timed(took, pushes(remote))


def write_sources(base: Path, count: int, seed: int) -> list[Path]:
    out = []
    for i, text in enumerate(articles(count, seed)):
        src = base / f"source-{i}.mdx"
        src.write_text(text)
        out.append(src)
    return out


def check_published(blog: Path, remote: Path, count: int) -> None:
    argv, _ = blogpub_argv()
    listing = subprocess.run(
        [*argv, "status", "--all"], cwd=blog, check=True, capture_output=True, text=True
    ).stdout
    published = listing.count("PUBLISHED")
    ids = _git(remote, "log", "--format=%(trailers:key=Blog-Job-Id,valueonly)", "main").split()
    if published < count or len(ids) != count or len(set(ids)) != count:
        raise SystemExit(f"not every job published once: {published} PUBLISHED, {len(ids)} commits")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[30, 100, 300])
    ap.add_argument("--reps", type=int, default=3, help="repetitions per size (default 3)")
    ap.add_argument(
        "--existing",
        type=int,
        default=0,
        help="posts the blog already has (default 0): the judge compares each job with them",
    )
    args = ap.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="gitpub-bench-batch-"))
    rows = []
    try:
        hermetic_env(scratch / "home")
        # As on a person's machine, Python caches the bytecode of what it imports: without
        # that, every run would compile gitpub's modules from source, a cost the loop's git
        # never pays. The cache goes into the scratch folder (never beside an editable
        # install's sources), and a first run of two articles, not timed, fills it.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
        gitpub_run(scratch / "warm-up", 2, seed=99)
        for size in args.sizes:
            ours: list[Timed] = []
            floor: list[Timed] = []
            for rep in range(args.reps):
                pair = [("gitpub", gitpub_run), ("loop", loop_run)]
                if rep % 2:
                    pair.reverse()  # alternate who goes first: the machine's drift hits both
                for name, fn in pair:
                    timed = fn(scratch / f"{size}-{rep}-{name}", size, rep, args.existing)
                    (ours if name == "gitpub" else floor).append(timed)
            rows.append((size, ours, floor))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    _, label = blogpub_argv()
    blog = f", into a blog of {args.existing} posts" if args.existing else ""
    print(
        f"\nready jobs → PUBLISHED on a local bare remote{blog} ({args.reps} runs each, medians)\n"
    )
    header = (
        f"{'articles':>8} {label + ' run --until-idle':>32} {'pushes':>7}"
        f" {'naive loop':>11} {'pushes':>7} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for size, ours, floor in rows:
        mine = statistics.median(t.seconds for t in ours)
        base = statistics.median(t.seconds for t in floor)
        print(
            f"{size:>8} {mine:>30.2f} s {max(t.pushes for t in ours):>7}"
            f" {base:>9.2f} s {max(t.pushes for t in floor):>7} {mine / base:>5.2f}×"
        )
    print("\npushes counted by each bare remote's post-receive hook (the most of any run);")
    print("naive loop: per article cp, git add, git commit, git push (sh)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
