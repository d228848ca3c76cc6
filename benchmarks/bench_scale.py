"""Per-job cost on a big blog, gitpub vs the naive loop, side by side in one run; and the peak
memory of publishing one big source.

The remote is built once with `git fast-import` (cached in the temp folder): `--articles`
articles in one folder plus `.blogpub.toml`, under a history of `--commits` commits (20,000
and 20,000 by default). Each repetition clones it afresh (not timed) and then times, in
alternating order, per job:

- gitpub: `git blogpub submit` then `git blogpub run --until-idle` for one new article
  (prepare with the similarity judge over every article of the blog, secret scan,
  validation, commit, fetch, push, confirmation, fast-forward of the checkout);
- the floor: write the file, `git add`, `git commit`, `git push` — no job, no check.

The similarity judge keeps its index of the blog's 3-grams in the user cache (one per run
here, as one person's): the run's first job builds it and is shown apart; the median is of
the others. Then the judge alone, in process, on one more article: through the index (what
a job runs) against every article of the blog read and compared (what it ran before the
index, the same answer checked). Python's bytecode cache is warm, as on a person's machine.

Then one `--big-mb` MB source (default 50) is submitted and published in a fresh clone, and
the peak resident memory of each command (with the processes it waited for: git) is read
from the kernel (`wait4`). Every job is checked to end PUBLISHED.

    python benchmarks/bench_scale.py                       # 20,000 commits and articles
    python benchmarks/bench_scale.py --commits 2000 --articles 2000 --jobs 3 --reps 1 --big-mb 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench_e2e import articles, blogpub_argv, hermetic_env

START = 1_700_000_000
LAYOUT = 2  # bump when the built repository changes shape

CONFIG = """\
[publish]
remote = "origin"
branch = "main"
content = ["content/posts"]
max_source_bytes = {max_bytes}
"""


def _stream(commits: int, count: int) -> Iterator[bytes]:
    """The first commit holds the config and `count` articles in one folder (as Jekyll's
    `_posts` or Hugo's `content/posts` grow); each later commit is a hand edit of a small
    file beside them, so the history is `commits` long. (A history where every commit adds
    an article writes a tree of up to 20,000 entries 20,000 times: gigabytes to hash.)"""
    for i in range(commits):
        data = f"change {i}\n".encode()
        yield b"commit refs/heads/main\n"
        yield f"mark :{i + 1}\n".encode()
        yield f"committer Bench <bench@example.invalid> {START + i * 60} +0000\n".encode()
        yield f"data {len(data)}\n".encode() + data + b"\n"
        if i > 0:
            yield f"from :{i}\n".encode()
            note = f"Change number {i}.\n".encode()
            yield f"M 100644 inline notes/changes.md\ndata {len(note)}\n".encode() + note + b"\n"
            continue
        cfg = CONFIG.format(max_bytes=200 * 1024 * 1024).encode()
        yield f"M 100644 inline .blogpub.toml\ndata {len(cfg)}\n".encode() + cfg + b"\n"
        for n in range(count):
            words = " ".join(f"w{(n * 7919 + k * 104729) % 50021:x}" for k in range(40))
            blob = f"---\ntitle: Post {n}\n---\n\nPost number {n}: {words}.\n".encode()
            path = f"content/posts/post-{n:05d}.md"
            yield f"M 100644 inline {path}\ndata {len(blob)}\n".encode() + blob + b"\n"


def remote_of(commits: int, count: int) -> Path:
    """The bare remote, built once per size and kept in the temp folder."""
    name = f"gitpub-bench-scale-v{LAYOUT}-c{commits}-a{count}.git"
    path = Path(tempfile.gettempdir()) / name
    if (path / ".complete").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    print(f"building a remote of {commits} commits and {count} articles …", flush=True)
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=path, stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    chunk: list[bytes] = []
    for part in _stream(commits, count):
        chunk.append(part)
        if len(chunk) >= 4096:
            proc.stdin.write(b"".join(chunk))
            chunk.clear()
    proc.stdin.write(b"".join(chunk) + b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "gc", "--quiet"], cwd=path, check=True)
    (path / ".complete").touch()
    return path


def bare_copy(remote: Path, where: Path) -> Path:
    """A remote of this run's own (gitpub and the loop each push to theirs)."""
    bare = where / "remote.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(remote), str(bare)], check=True)
    return bare


def clone(remote: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(remote), str(where)], check=True)
    return where


def rss_of(argv: list[str], cwd: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in MB of the command and the processes it waited for, stdout):
    reaped by wait4, so the kernel's own figure is read."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out_parts: list[bytes] = []
    assert proc.stdout is not None and proc.stderr is not None
    out_parts.append(proc.stdout.read())
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {err.decode(errors='replace')[-2000:]}")
    return took, usage.ru_maxrss // 1024, b"".join(out_parts).decode()


def gitpub_job(blog: Path, src: Path, key: str) -> tuple[float, int]:
    argv, _ = blogpub_argv()
    t1, m1, out = rss_of([*argv, "submit", "--key", key, "--source", str(src), "--json"], blog)
    job_id = json.loads(out)["job_id"]
    t2, m2, _ = rss_of([*argv, "run", "--until-idle"], blog)
    _, _, shown = rss_of([*argv, "show", job_id, "--json"], blog)
    state = json.loads(shown)["job"]["state"]
    if state != "PUBLISHED":
        raise SystemExit(f"job {job_id} ended {state}")
    return t1 + t2, max(m1, m2)


def loop_job(blog: Path, src: Path, n: int) -> float:
    t0 = time.perf_counter()
    dest = f"content/posts/loop-{n}.md"
    shutil.copyfile(src, blog / dest)
    for args in (["add", dest], ["commit", "--quiet", "-m", f"publish {dest}"]):
        subprocess.run(["git", *args], cwd=blog, check=True, capture_output=True)
    subprocess.run(["git", "push", "--quiet", "origin", "HEAD:main"], cwd=blog, check=True)
    return time.perf_counter() - t0


def big_source(where: Path, megabytes: int) -> Path:
    """A long article of ordinary paragraphs (no secret, valid Markdown)."""
    paragraph = (
        "A paragraph of an unusually long article, repeated to reach its size. " * 12
    ) + "\n\n"
    count = megabytes * 1024 * 1024 // len(paragraph) + 1
    src = where / "big.md"
    with src.open("w") as fh:
        fh.write("---\ntitle: The big one\n---\n\n")
        for i in range(count):
            fh.write(f"Part {i}. {paragraph}")
    return src


def judge_figures(blog: Path, text: str, reps: int = 5) -> tuple[float, float]:
    """Median seconds of the prepare judge on `text` in the clone `blog`: through the index,
    and over every article read from git (the judge's answers checked equal)."""
    from gitpub.context import open_context
    from gitpub.prepare import builtins, similarity_index

    own = "content/posts/bench-judge.md"
    with open_context(blog) as ctx:
        base = ctx.repo.resolve(ctx.tracking_ref)
        assert base is not None
        s = ctx.config.steps

        def judged(pool: dict[str, bytes]) -> dict[str, object]:
            existing = [
                {"path": p, "text": b.decode("utf-8", "replace")} for p, b in sorted(pool.items())
            ]
            request = {
                "mode": "prepare",
                "candidate": {"path": own, "text": text},
                "existing": existing,
            }
            return builtins.judge(request, s.similarity_skip, s.similarity_update, s.similar)

        def indexed() -> dict[str, object]:
            files = ctx.repo.files_under(base, ctx.config.publish.content)
            return judged(similarity_index.pool(ctx, files, own, text, {}))

        def whole() -> dict[str, object]:
            files = ctx.repo.files_under(base, ctx.config.publish.content)
            return judged(files.read([p for p in files if p.endswith(".md")]))

        fast: list[float] = []
        for _ in range(reps):
            ctx.repo._files = None  # each call reads the tree, as each job's process does
            t0 = time.perf_counter()
            answer = indexed()
            fast.append(time.perf_counter() - t0)
        ctx.repo._files = None
        t0 = time.perf_counter()
        if whole() != answer:
            raise SystemExit("the index and the whole blog gave the judge different answers")
        slow = time.perf_counter() - t0
    return statistics.median(fast), slow


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--commits", type=int, default=20_000, help="commits of the history")
    ap.add_argument("--articles", type=int, default=20_000, help="articles of the blog")
    ap.add_argument("--jobs", type=int, default=5, help="jobs timed per repetition")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--big-mb", type=int, default=50, help="size of the big source, MB")
    args = ap.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="gitpub-bench-scale-"))
    try:
        hermetic_env(scratch / "home")
        os.environ["XDG_CACHE_HOME"] = str(scratch / "home" / ".cache")
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a person's warm bytecode cache
        os.environ["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
        remote = remote_of(args.commits, args.articles)
        ours: list[float] = []
        floor: list[float] = []
        peaks: list[int] = []
        texts = articles(args.jobs * args.reps * 2, seed=24)
        for rep in range(args.reps):
            work = scratch / f"rep{rep}"
            work.mkdir()
            blog, loop = (clone(bare_copy(remote, work / n), work / n / "clone") for n in "ab")
            for j in range(args.jobs):
                n = rep * args.jobs + j
                src = work / f"src-{n}.md"
                src.write_text(texts[2 * n])
                other = work / f"loop-{n}.md"
                other.write_text(texts[2 * n + 1])
                first_ours = (rep + j) % 2 == 0  # alternate which one goes first
                if first_ours:
                    took, peak = gitpub_job(blog, src, f"k{n}")
                    floor.append(loop_job(loop, other, n))
                else:
                    floor.append(loop_job(loop, other, n))
                    took, peak = gitpub_job(blog, src, f"k{n}")
                ours.append(took)
                peaks.append(peak)
            shutil.rmtree(work)
        first, rest = ours[0], ours[1:] or ours
        med_ours, med_floor = statistics.median(rest), statistics.median(floor)
        print(f"blog: {args.commits} commits, {args.articles} articles; {len(ours)} jobs each")
        print(f"{'':28}{'median s/job':>14}{'max s/job':>11}{'peak RSS MB':>13}")
        print(f"{'gitpub submit + run':28}{med_ours:14.3f}{max(rest):11.3f}{max(peaks):13d}")
        print(f"{'loop add/commit/push':28}{med_floor:14.3f}{max(floor):11.3f}{'':>13}")
        print(f"ratio gitpub/loop: {med_ours / med_floor:.2f}x  (goal: ≤ 1 s/job)")
        print(f"the run's first job, which builds the similarity index: {first:.2f} s")

        work = scratch / "judge"
        work.mkdir()
        blog = clone(bare_copy(remote, work), work / "clone")
        fast, slow = judge_figures(blog, texts[-1])
        print(
            f"prepare judge, one more article: {fast:.3f} s through the index, "
            f"{slow:.2f} s reading every article ({slow / fast:.0f}x; goal: ≤ 0.2 s)"
        )
        shutil.rmtree(work)

        work = scratch / "big"
        work.mkdir()
        blog = clone(bare_copy(remote, work), work / "clone")
        src = big_source(work, args.big_mb)
        cli, _ = blogpub_argv()
        t1, m1, out = rss_of([*cli, "submit", "--key", "big", "--source", str(src), "--json"], blog)
        t2, m2, _ = rss_of([*cli, "run", "--until-idle"], blog)
        job_id = json.loads(out)["job_id"]
        state = json.loads(rss_of([*cli, "show", job_id, "--json"], blog)[2])["job"]["state"]
        size = src.stat().st_size / 1024 / 1024
        print(
            f"big source {size:.0f} MB: submit {t1:.2f} s, peak {m1} MB; "
            f"run {t2:.2f} s, peak {m2} MB; ended {state}"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
