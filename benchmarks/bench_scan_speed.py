"""The scanner's speed before and after a change, side by side in one run.

Each repetition scans the real Markdown corpus (tests/corpus/markdown) and the real blog
posts (tests/corpus/posts) once with this tree's gitpub and once with another tree's (an
older checkout, a `git archive` of main), alternating, each in a fresh process after a
warm-up pass. CPU time is measured, not wall time: on a shared machine the other processes
move wall time by tens of percent between two runs of the same code, CPU time by a few.

    python benchmarks/bench_scan_speed.py --against ../gitpub-main   # a folder holding gitpub/
    python benchmarks/bench_scan_speed.py                            # this tree alone
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run in the child: the corpora as the tests read them, scanned as `submit` scans a file.
CHILD = """
import json, sys, time
sys.path.insert(0, {tests!r})
from testing.secret_corpus import markdown, posts
from gitpub import scan
corpora = {{"markdown": markdown(), "posts": posts()}}
for docs in corpora.values():
    for name, text in docs:
        scan.scan(text, path=name)
out = {{}}
for key, docs in corpora.items():
    start = time.process_time()
    for name, text in docs:
        scan.scan(text, path=name)
    out[key] = time.process_time() - start
    out[key + "_mb"] = sum(len(t.encode()) for _, t in docs) / 1e6
out["gitpub"] = scan.__file__
print(json.dumps(out))
"""


def one_run(tree: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = CHILD.format(tests=str(ROOT / "tests"))
    # `python -c` puts the working folder first on sys.path: run where no gitpub/ is.
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    where = Path(result.pop("gitpub")).resolve()
    assert where.is_relative_to(tree), f"{tree}: imported {where}"
    return {k: float(v) for k, v in result.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="a folder holding another gitpub/")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    trees = {"this tree": ROOT}
    if args.against:
        trees["against"] = args.against.resolve()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.reps):
        for name, tree in trees.items():
            runs[name].append(one_run(tree))
    first = runs["this tree"][0]
    print(
        f"CPU seconds, median of {args.reps}; markdown {first['markdown_mb']:.2f} MB, "
        f"posts {first['posts_mb']:.2f} MB"
    )
    print(f"{'tree':<12}{'markdown MB/s':>16}{'posts MB/s':>14}")
    speed: dict[str, dict[str, float]] = {}
    for name, rows in runs.items():
        speed[name] = {
            key: first[f"{key}_mb"] / statistics.median(r[key] for r in rows)
            for key in ("markdown", "posts")
        }
        print(f"{name:<12}{speed[name]['markdown']:>16.2f}{speed[name]['posts']:>14.2f}")
    if "against" in speed:
        ratios = [speed["this tree"][k] / speed["against"][k] for k in ("markdown", "posts")]
        print(f"{'ratio':<12}{ratios[0]:>16.2f}{ratios[1]:>14.2f}")


if __name__ == "__main__":
    main()
