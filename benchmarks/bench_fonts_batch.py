"""A batch of jobs on a font blog against the naive loop, side by side in one run.

The blog already uses N common hanzi (one hand-written post, GB 2312 order as in
bench_fonts.py) served from the real Noto Sans CJK SC; then K articles arrive, each bringing
two hanzi the blog has never used (plus Latin words, so the similarity judge answers NEW).
Timed, taking turns, medians of the repetitions:

- gitpub, single: `outputs = [one .woff2]`; the K jobs submitted (not timed), then
  `git blogpub run --until-idle` takes every job to PUBLISHED (prepare with the font gate,
  commit, delivery — which rebuilds the subset whenever two jobs' subsets collide);
- gitpub, chunked: the same with `chunked = folder`;
- the loop: what a build script without gitpub does per article — write it, `pyftsubset` the
  whole font to the characters of every article, `git add`, `git commit`, `git push`.

Every gitpub run is checked: each job PUBLISHED with one commit on the remote, and the font
files on the remote hold every character of every article the font draws.

    python benchmarks/bench_fonts_batch.py                 # 10 articles into 3,000 hanzi
    python benchmarks/bench_fonts_batch.py --count 5 --chars 500 --reps 1
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import POST_RECEIVE, _git, blogpub_argv, hermetic_env, pushes  # noqa: E402
from bench_fonts import ASCII, common_hanzi, find_font  # noqa: E402

LOOP = """\
set -e
font="$1"; face="$2"; shift 2
i=0
for src in "$@"; do
  i=$((i + 1))
  dest="content/posts/loop-$i.mdx"
  cp "$src" "$dest"
  cat content/posts/*.mdx > "$TMPDIR/all.txt"
  printf '%s' "$ASCII_TEXT" >> "$TMPDIR/all.txt"
  pyftsubset "$font" --font-number="$face" --text-file="$TMPDIR/all.txt" --flavor=woff2 \\
    --output-file=public/fonts/blog.woff2
  git add "$dest" public/fonts/blog.woff2
  git commit --quiet -m "publish $dest"
  git push --quiet origin HEAD:main
done
"""

TABLES = {
    "single": 'outputs = ["public/fonts/blog.woff2"]\n',
    "chunked": 'chunked = "public/fonts/blog"\n',
}


def make_blog(base: Path, source: str, face: int, known: str, mode: str) -> tuple[Path, Path]:
    """A bare remote counting its pushes, and a clone whose one post uses `known`, with the
    font outputs of `mode` built and pushed (not timed)."""
    remote, blog = base / "remote.git", base / "blog"
    base.mkdir(parents=True)
    _git(base, "init", "--quiet", "--bare", str(remote))
    hook = remote / "hooks" / "post-receive"
    hook.write_text(POST_RECEIVE)
    hook.chmod(0o755)
    _git(base, "clone", "--quiet", str(remote), str(blog))
    (blog / "fonts").mkdir()
    link = blog / "fonts" / Path(source).name
    link.symlink_to(Path(source).resolve())
    table = TABLES.get(mode, TABLES["single"])
    (blog / ".blogpub.toml").write_text(
        '[publish]\nremote = "origin"\nbranch = "main"\ncontent = ["content/posts"]\n\n'
        f'[fonts]\nsource = "fonts/{link.name}"\nface = {face}\n{table}',
        encoding="utf-8",
    )
    posts = blog / "content" / "posts"
    posts.mkdir(parents=True)
    (posts / "hello.mdx").write_text(f"---\ntitle: Hello\n---\n\n{known}\n", encoding="utf-8")
    argv, _ = blogpub_argv()
    subprocess.run([*argv, "fonts"], cwd=blog, check=True, capture_output=True)
    _git(blog, "add", ".")
    _git(blog, "commit", "--quiet", "-m", "scaffold")
    _git(blog, "push", "--quiet", "origin", "HEAD:main")
    (remote / "pushes.log").unlink()
    return blog, remote


def write_sources(base: Path, count: int, known: str, fresh: str, seed: int) -> list[Path]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        words = " ".join(
            "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(60)
        )
        hanzi = "".join(rng.choices(known, k=40)) + fresh[2 * i : 2 * i + 2]
        src = base / f"source-{i}.mdx"
        src.write_text(
            f"---\ntitle: Post {i}\nslug: post-{seed}-{i}\n---\n\n{words}\n\n{hanzi}\n",
            encoding="utf-8",
        )
        out.append(src)
    return out


def gitpub_run(
    base: Path, source: str, face: int, known: str, fresh: str, mode: str, count: int, seed: int
) -> float:
    blog, remote = make_blog(base, source, face, known, mode)
    argv, _ = blogpub_argv()
    for i, src in enumerate(write_sources(base, count, known, fresh, seed)):
        subprocess.run(
            [*argv, "submit", "--key", f"k-{i}", "--source", str(src)],
            cwd=blog,
            check=True,
            capture_output=True,
        )
    started = time.perf_counter()
    subprocess.run([*argv, "run", "--until-idle"], cwd=blog, check=True, capture_output=True)
    took = time.perf_counter() - started
    check(blog, remote, count, source, face)
    return took


def loop_run(
    base: Path, source: str, face: int, known: str, fresh: str, count: int, seed: int
) -> float:
    blog, remote = make_blog(base, source, face, known, "single")
    sources = write_sources(base, count, known, fresh, seed)
    script = base / "loop.sh"
    script.write_text(LOOP)
    env = {
        **os.environ,
        "TMPDIR": str(base),
        "ASCII_TEXT": ASCII,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    started = time.perf_counter()
    subprocess.run(
        ["sh", str(script), source, str(face), *map(str, sources)],
        cwd=blog,
        check=True,
        capture_output=True,
        env=env,
    )
    took = time.perf_counter() - started
    if pushes(remote) != count:
        raise SystemExit(f"the loop pushed {pushes(remote)} times, not {count}")
    return took


def check(blog: Path, remote: Path, count: int, source: str, face: int) -> None:
    from fontTools.ttLib import TTFont

    ids = _git(remote, "log", "--format=%(trailers:key=Blog-Job-Id,valueonly)", "main").split()
    if len(ids) != count or len(set(ids)) != count:
        raise SystemExit(f"not every job published once: {len(ids)} job commits for {count}")
    files = _git(remote, "ls-tree", "-r", "--name-only", "main").split()
    used: set[int] = set()
    held: set[int] = set()
    for name in files:
        data = subprocess.run(
            ["git", "show", f"main:{name}"], cwd=remote, capture_output=True, check=True
        ).stdout
        if name.startswith("content/posts/"):
            used |= set(map(ord, data.decode("utf-8")))
        elif name.endswith(".woff2"):
            held |= set(TTFont(io.BytesIO(data)).getBestCmap())
    cover = set(TTFont(source, fontNumber=face, lazy=True).getBestCmap())
    if not (used & cover) <= held:
        raise SystemExit(f"the remote's fonts lack {len((used & cover) - held)} used characters")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=10, help="articles in the batch")
    parser.add_argument("--chars", type=int, default=3000, help="hanzi the blog already uses")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    found = find_font("Noto Sans CJK SC:style=Regular")
    if found is None:
        raise SystemExit("no Noto Sans CJK SC found (Debian: apt-get install fonts-noto-cjk)")
    if not shutil.which("pyftsubset", path=str(Path(sys.executable).parent)):
        raise SystemExit("pyftsubset is not beside this interpreter (pip install fonttools)")
    source, face = found
    known = common_hanzi(args.chars)
    fresh = common_hanzi(args.chars + 2 * args.count)[args.chars :]
    times: dict[str, list[float]] = {"single": [], "chunked": [], "loop": []}
    with tempfile.TemporaryDirectory(prefix="gitpub-bench-fonts-batch-") as tmp_name:
        tmp = Path(tmp_name)
        hermetic_env(tmp / "home")
        os.environ["XDG_CACHE_HOME"] = str(tmp / "home" / ".cache")
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a person's warm bytecode cache
        for rep in range(args.reps):
            for name in times:
                base = tmp / f"{name}-{rep}"
                if name == "loop":
                    took = loop_run(base, source, face, known, fresh, args.count, rep)
                else:
                    took = gitpub_run(base, source, face, known, fresh, name, args.count, rep)
                times[name].append(took)
    med = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"{args.count} articles, 2 new hanzi each, into a blog of {args.chars:,} hanzi "
        f"({Path(source).name} face {face}); medians of {args.reps}"
    )
    for name, label in (
        ("loop", "loop: pyftsubset + commit + push each"),
        ("single", "gitpub run, single subset"),
        ("chunked", "gitpub run, chunked"),
    ):
        print(f"  {label:<40}{med[name]:8.2f} s  {med[name] / med['loop']:.2f}× the loop")
    print("  (goal: ≤ 1.0× the loop)")


if __name__ == "__main__":
    main()
