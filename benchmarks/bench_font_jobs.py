"""What real CJK fonts cost a job, side by side with the same job on the same blog without them.

The blog: 131 real Chinese posts (tests/corpus/posts: hbchen, huxblog and six of lynkxu),
pushed to a local bare remote, in four copies — no [fonts] table; the system's Noto Sans
CJK collection (`NotoSansCJK-Regular.ttc`, 19 MB, linked into the repository as people do)
with one subset at the default woff2 quality (10); one subset at `quality = 9`; the same
font chunked. Timed in turns, medians of the repetitions, one
process per command as a person runs them (bytecode cache warm):

- a job (`submit` + `run --until-idle`) whose article uses only characters the blog has;
- a job whose article is another real post (xovel's, in order), which brings new characters;
- `dry-run` of such a post;
- the worker's start: from `run --until-idle` starting to the job's `prepare:start`.

    python benchmarks/bench_font_jobs.py               # 5 repetitions
    python benchmarks/bench_font_jobs.py --reps 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import _git, blogpub_argv, hermetic_env  # noqa: E402
from bench_fonts import find_font  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "posts" / "posts.tar.xz"
BLOGS = ("hbchen/content/post/", "huxblog/_posts/", "lynkxu/src/content/")
NEW = "xovel/source/_posts/"
TABLES = {
    "none": "",
    "fonts": (
        '\n[fonts]\nsource = "fonts/{name}"\nface = {face}\noutputs = ["static/fonts/blog.woff2"]\n'
    ),
    "quality 9": (
        '\n[fonts]\nsource = "fonts/{name}"\nface = {face}\noutputs = ["static/fonts/blog.woff2"]\n'
        "quality = 9\n"
    ),
    "chunked": '\n[fonts]\nsource = "fonts/{name}"\nface = {face}\nchunked = "static/fonts/blog"\n',
}


def corpus() -> tuple[list[bytes], list[bytes]]:
    """(the blog's 131 posts, the posts that arrive later), as their repositories hold them."""
    with tarfile.open(CORPUS) as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile() and m.name.endswith((".md", ".markdown"))),
            key=lambda m: m.name,
        )
        posts = {m.name: tar.extractfile(m).read() for m in members}  # type: ignore[union-attr]
    blog = [d for n, d in posts.items() if n.startswith(BLOGS)][:131]
    later = [d for n, d in posts.items() if n.startswith(NEW)]
    return blog, later


def make_blog(base: Path, mode: str, source: str, face: int, posts: list[bytes]) -> Path:
    remote, root = base / "remote.git", base / "blog"
    base.mkdir(parents=True)
    _git(base, "init", "--quiet", "--bare", str(remote))
    _git(base, "clone", "--quiet", str(remote), str(root))
    (root / "content" / "posts").mkdir(parents=True)
    for i, data in enumerate(posts):
        (root / "content" / "posts" / f"post-{i:03d}.md").write_bytes(data)
    table = TABLES[mode].format(name=Path(source).name, face=face)
    (root / ".blogpub.toml").write_text(
        '[publish]\nremote = "origin"\nbranch = "main"\ncontent = ["content/posts"]\n'
        'suffixes = [".md"]\n' + table,
        encoding="utf-8",
    )
    if table:
        (root / "fonts").mkdir()
        (root / "fonts" / Path(source).name).symlink_to(Path(source).resolve())
        subprocess.run([*blogpub_argv()[0], "fonts"], cwd=root, check=True, capture_output=True)
    _git(root, "add", ".")
    _git(root, "commit", "--quiet", "-m", "the blog")
    _git(root, "push", "--quiet", "origin", "HEAD:main")
    return root


def _cli(root: Path, *args: str) -> str:
    out = subprocess.run(
        [*blogpub_argv()[0], *args], cwd=root, check=True, capture_output=True, text=True
    )
    return out.stdout


def job(root: Path, text: bytes, key: str) -> tuple[float, float, dict[str, object]]:
    """(seconds of submit + run, seconds from run's start to prepare:start, the font step)."""
    src = root.parent / f"{key}.md"
    src.write_bytes(text)
    started = time.perf_counter()
    job_id = json.loads(_cli(root, "submit", "--key", key, "--source", str(src), "--json"))[
        "job_id"
    ]
    run_at = time.time()
    _cli(root, "run", "--until-idle")
    took = time.perf_counter() - started
    shown = json.loads(_cli(root, "show", job_id, "--json"))
    if shown["job"]["state"] != "PUBLISHED":
        last = shown["events"][-1]
        raise SystemExit(
            f"{root}: job {key} ended {shown['job']['state']} ({last['step']}: {last['detail']})"
        )
    events = shown["events"]
    start = next(e for e in events if e["step"] == "prepare:start")["at"]
    begun = datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp() - run_at
    fonts = next((e["detail"] for e in events if e["step"] == "step:fonts"), {})
    return took, begun, fonts


def dry_run(root: Path, text: bytes) -> float:
    src = root.parent / "dry.md"
    src.write_bytes(text)
    started = time.perf_counter()
    _cli(root, "dry-run", "--source", str(src))
    return time.perf_counter() - started


def known_text(posts: list[bytes], rng: random.Random, n: str) -> bytes:
    """A new article of characters the blog already uses (and words of its own)."""
    have = sorted({c for p in posts for c in p.decode("utf-8", "ignore") if c > "\u2e80"})
    body = "".join(rng.choice(have) for _ in range(300))
    return f"---\ntitle: 旧字新文 {n}\n---\n\n{body}\n\nnote {n} {rng.random()}\n".encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    found = find_font("Noto Sans CJK SC:style=Regular")
    if found is None:
        raise SystemExit("no Noto Sans CJK SC found (Debian: apt-get install fonts-noto-cjk)")
    source, face = found
    posts, later = corpus()
    rng = random.Random(37)
    results: dict[str, dict[str, list[float]]] = {m: {} for m in TABLES}
    rewritten: dict[str, list[int]] = {m: [] for m in TABLES}
    with tempfile.TemporaryDirectory(prefix="gitpub-bench-font-jobs-") as tmp_name:
        tmp = Path(tmp_name)
        hermetic_env(tmp / "home")
        os.environ["XDG_CACHE_HOME"] = str(tmp / "home" / ".cache")
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a person's warm bytecode cache
        os.environ["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        roots = {m: make_blog(tmp / m, m, source, face, posts) for m in TABLES}
        for root in roots.values():  # compiled bytecode, the font's facts and the index cached
            job(root, known_text(posts, rng, "warm"), "warm")
        for rep in range(args.reps):
            same = known_text(posts, rng, str(rep))
            new = later[rep % len(later)]
            order = list(TABLES) if rep % 2 == 0 else list(reversed(TABLES))
            for mode in order:
                root = roots[mode]
                figures = results[mode]
                took, begun, _ = job(root, same, f"same-{rep}")
                figures.setdefault("job, no new character", []).append(took)
                figures.setdefault("worker start → prepare", []).append(begun)
                figures.setdefault("dry-run, new characters", []).append(dry_run(root, new))
                took, _, fonts = job(root, new, f"new-{rep}")
                figures.setdefault("job, new characters", []).append(took)
                rewritten[mode].append(len(fonts.get("written", []) or []))
    print(
        f"131 real Chinese posts; {Path(source).name} face {face} (19 MB, linked); "
        f"medians of {args.reps}, seconds"
    )
    shown = {"fonts": "one subset", "quality 9": "quality 9", "chunked": "chunked"}
    print(f"{'':28}{'no fonts':>10}" + "".join(f"{name:>12}{'+':>7}" for name in shown.values()))
    for what in results["none"]:
        med = {m: statistics.median(results[m][what]) for m in TABLES}
        extra = "".join(f"{med[m]:12.2f}{med[m] - med['none']:+7.2f}" for m in shown)
        print(f"{what:28}{med['none']:10.2f}{extra}")
    print(
        "font files rewritten per new-character job (median): "
        + ", ".join(f"{shown[m]} {statistics.median(rewritten[m]):.0f}" for m in shown)
    )
    print("  (goals: each job and dry-run ≤ +1.5 s; the worker's first prepare within 0.3 s)")


if __name__ == "__main__":
    main()
