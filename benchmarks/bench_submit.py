"""What `submit` and `status` cost, against the floor of any Python tool using SQLite and JSON.

One blog repository (a bare remote and a clone, built once, not timed) and a source file.
Timed, interleaved round by round in shuffled order so drift hits every variant alike:

- floor:        `python -c "import sqlite3, json"` (interpreter start-up and the two modules);
- libraries:    the floor plus what the modules behind `submit` import at their top (click,
                which parses every command line, typing, pathlib, dataclasses, datetime,
                uuid, tomllib, platformdirs): the least `submit` costs before gitpub runs;
- submit:       `python -m gitpub submit --key K --source FILE` in the clone, a new key each time,
                so every run records a new job (database write with fsync, job folder);
- git blogpub:  the same through `git blogpub submit`, as the README shows it (git finds the
                `git-blogpub` console script of this interpreter first on PATH);
- status:       `python -m gitpub status` in the clone.

With `--baseline PYTHON` (an interpreter with another gitpub installed, e.g. a virtualenv of the
previous release), `submit` and `status` also run through it, in a blog of their own, in the
same rounds: before and after, side by side.

Then, once, the modules the submit process imported: pygit2 and fontTools must not be there.

    python benchmarks/bench_submit.py            # 40 rounds
    python benchmarks/bench_submit.py --rounds 5
    python benchmarks/bench_submit.py --baseline /tmp/gitpub-0.1.0/bin/python
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import hermetic_env, make_blog  # noqa: E402

HEAVY = ("pygit2", "fontTools", "uharfbuzz", "filelock")
LIBRARIES = "click, typing, pathlib, dataclasses, datetime, uuid, tomllib, platformdirs"
"""What the modules behind `submit` import at their top."""


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall time, and CPU time (user + system) of the child: steadier on a shared host."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def imported_by_submit(blog: Path, source: Path) -> list[str]:
    """Top-level modules of HEAVY that `submit` imports, read from `-X importtime`."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitpub", "submit"]
        + ["--key", "importtime", "--source", str(source)],
        cwd=blog,
        capture_output=True,
        text=True,
        check=True,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    return [m for m in HEAVY if m in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument(
        "--baseline", metavar="PYTHON", help="also time submit and status of this interpreter"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="gitpub-bench-submit-") as tmp:
        base = Path(tmp)
        hermetic_env(base / "home")
        # As on a person's machine, Python caches the bytecode of what it imports (the warm-up
        # below writes it): without that, every run compiles gitpub's modules from source.
        # The cache goes into the scratch folder, never beside an editable install's sources.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
        blog, _ = make_blog(base / "repo")
        other = make_blog(base / "baseline")[0] if args.baseline else blog
        source = base / "source.mdx"
        source.write_text("---\ntitle: A post\n---\n\nSome words, submitted.\n" * 20)
        py = sys.executable
        keys = iter(range(10**9))
        variants = {
            "floor": lambda: [py, "-c", "import sqlite3, json"],
            "libraries": lambda: [py, "-c", f"import sqlite3, json, {LIBRARIES}"],
            "submit": lambda: (
                [py, "-m", "gitpub", "-C", str(blog), "submit"]
                + ["--key", f"k{next(keys)}", "--source", str(source)]
            ),
            "git blogpub submit": lambda: (
                ["git", "blogpub", "submit"] + ["--key", f"k{next(keys)}", "--source", str(source)]
            ),
            "status": lambda: [py, "-m", "gitpub", "status"],
        }
        if args.baseline:
            old = args.baseline
            variants["submit, baseline"] = lambda: (
                [old, "-m", "gitpub", "-C", str(other), "submit"]
                + ["--key", f"k{next(keys)}", "--source", str(source)]
            )
            variants["status, baseline"] = lambda: [old, "-m", "gitpub", "-C", str(other), "status"]
        for argv in variants.values():  # warm the page cache; the first submit makes the DB
            timed(argv(), blog)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        order = list(variants)
        rng = random.Random(13)
        for _ in range(args.rounds):
            rng.shuffle(order)
            for name in order:
                times[name].append(timed(variants[name](), blog))

        print(
            f"Python {sys.version.split()[0]}, CPUs: {os.cpu_count()}, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        print(f"medians of {args.rounds} interleaved runs")

        def med(name: str, i: int) -> float:
            return statistics.median(sample[i] for sample in times[name])

        print(f"  {'command':<20} {'wall':>9} {'vs floor':>9} {'CPU':>9} {'vs floor':>9}")
        for name in variants:
            wall, cpu = med(name, 0), med(name, 1)
            print(
                f"  {name:<20} {wall * 1000:7.1f}ms {wall / med('floor', 0):8.2f}x "
                f"{cpu * 1000:7.1f}ms {cpu / med('floor', 1):8.2f}x"
            )
        if args.baseline:
            print(f"  baseline: {args.baseline}")
        print("  (target: submit at most 3x the floor)")
        heavy = imported_by_submit(blog, source)
        print(f"heavy modules imported by submit: {', '.join(heavy) if heavy else 'none'}")


if __name__ == "__main__":
    main()
