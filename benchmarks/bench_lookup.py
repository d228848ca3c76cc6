"""Find a job commit by id: `refs/blog-jobs/<id>` against a `git log --grep` scan.

Builds (once, cached under the temp dir) a repository whose main branch has N ordinary commits
with a few hundred gitpub job commits spread through it, each indexed by its job ref, then
times `trailers.find_local` (resolve the ref, check its trailer) and `trailers.grep_local`
(the fallback scan) for jobs near the tip, in the middle and near the root.

    python benchmarks/bench_lookup.py                 # 100,000 commits
    python benchmarks/bench_lookup.py --quick         # 5,000 commits, fewer repetitions
    python benchmarks/bench_lookup.py --commits 20000
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
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from gitpub.core.ids import JobId, Oid, Sha256
from gitpub.git import trailers
from gitpub.git.repo import Repo

LAYOUT = 1  # bump when the generated history changes shape, so old caches are not reused
NAMESPACE = uuid.UUID("5d0a3e4c-2f5b-4b8e-9a59-0c1f3b7d2a11")
START = 1_600_000_000  # author/committer time of the first commit


def job_id(index: int) -> str:
    return str(uuid.uuid5(NAMESPACE, f"job-{index}"))


def job_positions(commits: int, jobs: int) -> list[int]:
    """Commit indexes (0 = root) that carry job trailers: spread evenly, ends included."""
    if jobs >= commits:
        return list(range(commits))
    step = (commits - 1) / (jobs - 1)
    return sorted({round(i * step) for i in range(jobs)})


def _fast_import_stream(commits: int, jobs: set[int]) -> Iterator[bytes]:
    """A fast-import stream: each commit rewrites one of 64 small files; job commits carry
    gitpub's four trailers (formatted by gitpub itself) and get their job ref."""
    for i in range(commits):
        when = START + i * 60
        path = f"content/posts/p{i % 64:02d}.md"
        blob = f"---\ntitle: post {i % 64}\n---\n\nrevision {i}\n".encode()
        if i in jobs:
            jid = job_id(i)
            message = trailers.format_message(
                f"blog: publish {path}",
                trailers.job_trailers(
                    JobId(jid), Sha256(f"{i:064x}"), Oid(f"{max(i - 1, 0):040x}"), "bench"
                ),
            )
        else:
            message = f"edit {path}\n\nAn ordinary hand edit, number {i}.\n"
        data = message.encode()
        yield b"commit refs/heads/main\n"
        yield f"mark :{i + 1}\n".encode()
        yield f"committer Bench <bench@example.invalid> {when} +0000\n".encode()
        yield f"data {len(data)}\n".encode() + data + b"\n"
        if i > 0:
            yield f"from :{i}\n".encode()
        yield f"M 100644 inline {path}\ndata {len(blob)}\n".encode() + blob + b"\n"
        if i in jobs:
            yield f"reset {trailers.job_ref(job_id(i))}\nfrom :{i + 1}\n\n".encode()


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, input=stdin, check=True, capture_output=True)


def build(where: Path, commits: int, jobs: list[int]) -> None:
    where.mkdir(parents=True)
    _git(where, "init", "--quiet", "--initial-branch=main")
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"],
        cwd=where,
        stdin=subprocess.PIPE,
    )
    assert proc.stdin is not None
    chunk: list[bytes] = []
    for part in _fast_import_stream(commits, set(jobs)):
        chunk.append(part)
        if len(chunk) >= 4096:
            proc.stdin.write(b"".join(chunk))
            chunk.clear()
    proc.stdin.write(b"".join(chunk) + b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    # What a repository looks like after an ordinary `git gc`: packed refs and a commit-graph
    # (which gives the log scan its best chance).
    _git(where, "pack-refs", "--all")
    _git(where, "commit-graph", "write", "--reachable")


def cached_repo(commits: int, jobs: list[int]) -> Path:
    key = f"gitpub-bench-lookup-v{LAYOUT}-c{commits}-j{len(jobs)}"
    path = Path(tempfile.gettempdir()) / key
    if (path / ".complete").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    partial = path.with_name(f"{key}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    started = time.perf_counter()
    print(f"building {commits:,} commits with {len(jobs)} job commits in {path} ...")
    build(partial, commits, jobs)
    (partial / ".complete").write_text("")
    partial.rename(path)  # a build killed halfway leaves no cache that looks finished
    print(f"built in {time.perf_counter() - started:.1f} s")
    return path


def median_seconds(fn: Callable[[], object], reps: int) -> float:
    samples = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5,000 commits, fewer repetitions")
    ap.add_argument("--commits", type=int, default=None, help="history length (default 100000)")
    ap.add_argument("--jobs", type=int, default=300, help="job commits in the history")
    ap.add_argument("--reps", type=int, default=None, help="repetitions of the scan")
    args = ap.parse_args(argv)
    commits = args.commits or (5_000 if args.quick else 100_000)
    scan_reps = args.reps or (3 if args.quick else 7)
    ref_reps = 200 if args.quick else 1000
    if commits < 10 or not 3 <= args.jobs <= commits:
        ap.error("need at least 10 commits and 3 ≤ --jobs ≤ --commits")

    positions = job_positions(commits, args.jobs)
    root = cached_repo(commits, positions)
    repo = Repo(root)  # opened once, as a worker's context does
    cases = [
        ("near tip", positions[-1]),
        ("middle", positions[len(positions) // 2]),
        ("near root", positions[0]),
    ]

    print(
        f"\nlookup of one job commit; {commits:,} commits, {len(positions)} job refs,"
        f" median of {ref_reps} (ref) / {scan_reps} (scan) runs\n"
    )
    header = f"{'job':<10} {'depth':>8}  {'find_local (ref)':>17}  {'grep_local (scan)':>17}  ratio"
    print(header)
    print("-" * len(header))
    for label, index in cases:
        jid = job_id(index)
        depth = commits - 1 - index  # commits between the job and the tip
        found = trailers.find_local(repo, jid)
        scanned = trailers.grep_local(repo, jid)
        if found is None or found != scanned:
            print(f"lookup disagrees for {label}: ref {found}, scan {scanned}", file=sys.stderr)
            return 1
        by_ref = median_seconds(lambda j=jid: trailers.find_local(repo, j), ref_reps)
        by_scan = median_seconds(lambda j=jid: trailers.grep_local(repo, j), scan_reps)
        print(
            f"{label:<10} {depth:>8,}  {_fmt(by_ref):>17}  {_fmt(by_scan):>17}"
            f"  {by_scan / by_ref:,.0f}×"
        )
    print(f"\nrepository: {root} (delete it to rebuild)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
