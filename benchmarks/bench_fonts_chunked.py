"""Chunked fonts against the single subset and `pyftsubset`, and the no-op gate against
`status`, on the real Noto Sans CJK SC.

A blog uses N common hanzi (GB 2312 order, as bench_fonts.py) plus ASCII. Then one article
brings one new character (the next one in that order), and each way of serving the font
rebuilds what it must:

  pyftsubset  the command on the whole N+1 set, as a build script runs it (start-up included)
  single      the font gate, `outputs = [one .woff2]`: the whole subset again
  chunked     the font gate, `chunked = folder`: the one chunk that holds the new character

all in the same run, taking turns; then the bytes on disk. Then `git blogpub fonts` with
nothing changed against `git blogpub status` (a process per call, start-up included), for
both modes: what a deploy script pays for calling `fonts` every time. Last, real blogs (the
Chinese blogs of tests/corpus/posts, every post): all chunks against one subset of the same
characters, and what the median article's page loads — the chunks holding any of its
characters — against that one subset.

    python benchmarks/bench_fonts_chunked.py              # 3,000 characters, 5 repetitions
    python benchmarks/bench_fonts_chunked.py --quick      # 500 characters, 3 repetitions
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import hermetic_env  # noqa: E402
from bench_fonts import ASCII, common_hanzi, find_font, measure, pyftsubset  # noqa: E402

from gitpub import config, fonts  # noqa: E402
from gitpub.config import slices  # noqa: E402

CHUNKS = "public/fonts/blog"


def make_blog(where: Path, source: str, face: int, text: str, table: str) -> Path:
    """A repository whose one article holds `text`, with its font outputs built, committed."""
    root = where / "blog"
    (root / "content" / "posts").mkdir(parents=True)
    (root / "fonts").mkdir()
    link = root / "fonts" / Path(source).name
    link.symlink_to(Path(source).resolve())  # fonts.source must be a file of the repository
    (root / ".blogpub.toml").write_text(
        f'[fonts]\nsource = "fonts/{link.name}"\nface = {face}\n{table}', encoding="utf-8"
    )
    (root / "content" / "posts" / "all.md").write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "--quiet", str(root)], check=True)
    fonts.regenerate(config.load(root), root)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "commit", "--quiet", "-m", "blog"], cwd=root, check=True)
    return root


def one_new_character(root: Path, known: str, extra: str) -> tuple[object, dict[str, bytes]]:
    """A callable that restores the committed outputs, writes an article of characters the
    blog has (`known`) and `extra`, and runs the font gate; and the committed outputs."""
    cfg = config.load(root)
    committed = {
        p: (root / p).read_bytes()
        for p in subprocess.run(
            ["git", "ls-files", "public"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split()
    }
    article = root / "content" / "posts" / "new.md"

    def run() -> None:
        for path, data in committed.items():
            (root / path).write_bytes(data)
        article.write_text(f"{known[:40]} {extra}", encoding="utf-8")
        answer = fonts.gate(cfg, root)
        assert answer["written"], "the new character changed nothing"

    return run, committed


def changed_files(root: Path, committed: dict[str, bytes]) -> list[str]:
    return sorted(
        p
        for p in (root / "public").rglob("*")
        if p.is_file() and committed.get(str(p.relative_to(root))) != p.read_bytes()
    )


def nothing_new(roots: dict[str, Path], known: str, reps: int) -> None:
    """The font gate of a job whose article brings no new character (in process, the
    source font's facts cached): what every such publish pays."""
    runs = {}
    for mode, root in roots.items():
        cfg = config.load(root)
        (root / "content" / "posts" / "new.md").write_text(known[:200], encoding="utf-8")
        fonts.gate(cfg, root)  # the outputs current for this article set

        def run(cfg: config.Config = cfg, root: Path = root) -> None:
            assert fonts.gate(cfg, root)["written"] == []

        runs[mode] = run
    t = measure(runs, reps)
    print(f"\nThe font gate of an article that adds no character, medians of {reps}:")
    for mode, timing in t.items():
        print(f"  {mode:<10}{timing.wall * 1000:7.1f} ms ({timing.cpu * 1000:.1f} ms CPU)")


def cli_medians(roots: dict[str, Path], reps: int) -> dict[str, float]:
    """Median seconds of `git blogpub fonts` (each mode) and `status`, taking turns."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    calls = {f"fonts ({mode})": (root, "fonts") for mode, root in roots.items()}
    calls["status"] = (next(iter(roots.values())), "status")
    for root, cmd in calls.values():  # compiled bytecode and the no-op record in place
        for _ in range(2):
            subprocess.run(
                [sys.executable, "-m", "gitpub", "-C", str(root), cmd],
                env=env,
                capture_output=True,
                check=True,
            )
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(reps):
        for name, (root, cmd) in calls.items():
            t0 = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-m", "gitpub", "-C", str(root), cmd],
                env=env,
                capture_output=True,
                check=True,
            ).stdout
            times[name].append(time.perf_counter() - t0)
            if cmd == "fonts":
                assert out.strip() == b"fonts: up to date", out
    return {name: statistics.median(t) for name, t in times.items()}


POSTS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "posts" / "posts.tar.xz"
REAL = {
    "huxblog": "huxblog/_posts/",
    "xovel": "xovel/source/_posts/",
    "weekly-practice": "weekly-practice/notes/",
    "hbchen": "hbchen/content/post/",
    "lynkxu": "lynkxu/src/content/",
}


def real_pages(source: str, face: int, quality: int, blogs: list[str]) -> None:
    """All chunks and the median article's page, as multiples of one subset."""
    from gitpub.config import FontsConfig
    from gitpub.fonts import charset, engine
    from gitpub.fonts.source import load

    fc = FontsConfig(source=source, face=face, quality=quality)
    font = load(fc, Path(source).parent)
    chosen = engine.choose("auto")
    sizes: dict[tuple[frozenset[int], bool], int] = {}

    def size(cps: frozenset[int], chunk: bool = False) -> int:
        """The woff2 with the stamp the gate writes: ~0.2 KB a file, which a chunk pays too."""
        if (cps, chunk) not in sizes:
            sfnt = engine.subset(font, cps, chosen)
            stamp: dict[str, object] = {
                "gitpub": engine.PIPELINE,
                "chars": charset.digest(cps),
                "count": len(cps),
                "source": font.sha256,
                "face": font.face,
                "quality": quality,
            }
            if chunk:
                stamp["slicing"] = slices.SLICING
            sizes[cps, chunk] = len(engine.encode(sfnt, "woff2", quality, stamp))
        return sizes[cps, chunk]

    with tarfile.open(POSTS) as tar:
        members = [
            m for m in tar.getmembers() if m.isfile() and m.name.endswith((".md", ".markdown"))
        ]
        texts = {m.name: tar.extractfile(m).read() for m in members}  # type: ignore[union-attr]
    print(f"\nReal blogs, woff2 quality {quality} (goals: all ≤ 1.3×, a median page ≤ 0.6×):")
    keep = charset.ASCII
    pooled: list[float] = []
    for name in blogs:
        arts = [
            (charset.text_chars(d) | keep) & font.coverage
            for n, d in sorted(texts.items())
            if n.startswith(REAL[name])
        ]
        used = frozenset().union(*arts)
        single = size(used)
        parts = slices.split(used)
        chunk = {s: size(c, chunk=True) for s, c in parts.items()}
        pages = sorted(
            sum(chunk[s] for s in {slices.slice_of(cp) for cp in a}) / single for a in arts
        )
        pooled += pages
        print(
            f"  {name:<16}{len(arts):4d} posts {len(used):5,} chars  one subset {single:9,} B  "
            f"all {len(parts):3d} chunks {sum(chunk.values()) / single:.2f}×  "
            f"median page {statistics.median(pages):.2f}×"
        )
    print(f"  median page of all {len(pooled)} articles: {statistics.median(pooled):.2f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 characters, 3 repetitions")
    parser.add_argument("--chars", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--blogs", default=",".join(REAL), help="real blogs to measure pages on")
    args = parser.parse_args()
    n = args.chars or (500 if args.quick else 3000)
    reps = args.reps or (3 if args.quick else 5)
    found = find_font("Noto Sans CJK SC:style=Regular")
    if found is None:
        raise SystemExit("no Noto Sans CJK SC found (Debian: apt-get install fonts-noto-cjk)")
    source, face = found
    with tempfile.TemporaryDirectory(prefix="gitpub-bench-chunks-") as tmp_name:
        tmp = Path(tmp_name)
        hermetic_env(tmp / "home")
        os.environ["XDG_CACHE_HOME"] = str(tmp / "home" / ".cache")
        base = common_hanzi(n)
        extra = common_hanzi(n + 1)[-1]
        text = base + ASCII
        roots = {}
        for mode, table in (
            ("single", 'outputs = ["public/fonts/blog.woff2"]\n'),
            ("chunked", f'chunked = "{CHUNKS}"\n'),
        ):
            (tmp / mode).mkdir()
            roots[mode] = make_blog(tmp / mode, source, face, text, table)
        py_out = tmp / "pyftsubset.woff2"
        runs: dict[str, object] = {
            "pyftsubset": pyftsubset(source, face, base + extra + ASCII, py_out)
        }
        committed = {}
        for mode, root in roots.items():
            runs[mode], committed[mode] = one_new_character(root, base, extra)
        t = measure(runs, reps)  # type: ignore[arg-type]

        single = (roots["single"] / "public/fonts/blog.woff2").stat().st_size
        chunk_files = [p for p in (roots["chunked"] / CHUNKS).iterdir() if p.suffix == ".woff2"]
        chunk_bytes = sum(p.stat().st_size for p in chunk_files)
        css = (roots["chunked"] / CHUNKS / "blog.css").stat().st_size
        py = py_out.stat().st_size
        where = slices.slice_of(ord(extra))
        fresh = "" if where in {slices.slice_of(ord(ch)) for ch in base} else ", new to the blog"
        print(
            f"source: {Path(source).name} face {face}; {n:,} hanzi + ASCII, then one more "
            f"({extra}, slice {where}{fresh}); medians of {reps}"
        )
        print(f"\n{'':<12}{'wall':>9}{'CPU':>9}{'vs pyftsubset (wall, CPU)':>28}   rewritten")
        for name in ("pyftsubset", "single", "chunked"):
            rel = t[name].wall / t["pyftsubset"].wall
            rel_cpu = t[name].cpu / t["pyftsubset"].cpu
            rewritten = (
                "whole subset"
                if name == "pyftsubset"
                else ", ".join(Path(p).name for p in changed_files(roots[name], committed[name]))
            )
            print(
                f"{name:<12}{t[name].wall:8.3f}s{t[name].cpu:8.3f}s{rel:18.2f}×{rel_cpu:8.2f}×"
                f"   {rewritten}"
            )
        print("  (goals: single ≤ 0.33×, chunked ≤ 0.2×)")
        print(
            f"\nbytes: pyftsubset {py:,}; single {single:,} ({100 * (single / py - 1):+.1f}% vs "
            f"pyftsubset, goal ≤ +3%); chunked {chunk_bytes:,} in {len(chunk_files)} chunks "
            f"({chunk_bytes / single:.2f}× single, goal ≤ 1.3×) + {css:,} B of CSS"
        )

        nothing_new(roots, base, max(reps, 7))
        cli = cli_medians(roots, max(reps, 7))
        print(
            f"\n`git blogpub …` with nothing changed, medians of {max(reps, 7)} (a process each):"
        )
        for name, seconds in cli.items():
            print(f"  {name:<16}{seconds * 1000:7.1f} ms  {seconds / cli['status']:.2f}× status")
        print("  (goal: fonts ≤ 1.5× status)")
        blogs = ["huxblog"] if args.quick else [b for b in args.blogs.split(",") if b]
        real_pages(source, face, 4 if args.quick else 10, blogs)


if __name__ == "__main__":
    main()
