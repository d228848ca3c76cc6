"""gitpub's secret scanner against detect-secrets on the same files, side by side.

Recall: every secret of tests/corpus/secrets (Nosey Parker's true positives) scanned twice,
in its original line and as a bare string in a sentence of prose. False positives: every
real Markdown file of tests/corpus/markdown, a file counting once however many findings it
has. Speed: MB/s over the Markdown corpus (median of --reps runs; each tool scans the same
files from disk, detect-secrets through its own `SecretsCollection.scan_file`).

detect-secrets is not a dependency of gitpub; install it beside the benchmark to compare:

    pip install -e '.[bench]'                  # detect-secrets 1.5.0
    python benchmarks/bench_scan.py              # everything, 3 repetitions for speed
    python benchmarks/bench_scan.py --quick      # a tenth of each corpus, one repetition
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gitpub import scan

# The corpus is read exactly as the recall and false-positive tests read it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from testing.secret_corpus import markdown, prose, secrets  # noqa: E402


def write_all(folder: Path, texts: list[tuple[str, str]]) -> list[Path]:
    paths = []
    for i, (name, text) in enumerate(texts):
        path = folder / f"{i:05d}-{Path(name).name}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def gitpub_finds(path: Path) -> bool:
    return bool(scan.scan(path.read_text("utf-8"), path=path.name))


def detect_secrets_scanner() -> Callable[[Path], bool] | None:
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    # Its default plugins and filters, set up once for the whole run (as its CLI does); the
    # closure keeps the context alive, whose exit would clear them.
    settings = default_settings()
    settings.__enter__()

    def finds(path: Path) -> bool:
        assert settings is not None
        found = SecretsCollection()
        found.scan_file(str(path))
        return bool(list(found))

    return finds


def measure(
    finds: Callable[[Path], bool],
    lines: list[Path],
    bare: list[Path],
    docs: list[Path],
    reps: int,
) -> dict[str, float]:
    caught_line = sum(finds(p) for p in lines)
    caught_bare = sum(finds(p) for p in bare)
    flagged = 0
    times = []
    for rep in range(reps):
        start = time.perf_counter()
        hits = sum(finds(p) for p in docs)
        times.append(time.perf_counter() - start)
        if rep == 0:
            flagged = hits
    size = sum(p.stat().st_size for p in docs) / 1e6
    return {
        "line": caught_line / len(lines),
        "bare": caught_bare / len(bare),
        "fp": flagged / len(docs),
        "flagged": flagged,
        "mbps": size / statistics.median(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of each corpus, 1 rep")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--gitpub-only", action="store_true", help="skip detect-secrets even when installed"
    )
    args = parser.parse_args()
    rows = secrets()
    docs = markdown()
    reps = args.reps
    if args.quick:
        rows, docs, reps = rows[::10], docs[::10], 1
    with tempfile.TemporaryDirectory(prefix="gitpub-bench-scan-") as tmp:
        root = Path(tmp)
        for sub in ("line", "bare", "docs"):
            (root / sub).mkdir()
        lines = write_all(root / "line", [(f"{r['rule']}.md", r["example"]) for r in rows])
        bare = write_all(root / "bare", [(f"{r['rule']}.md", prose(r["bare"])) for r in rows])
        paths = write_all(root / "docs", docs)
        size = sum(p.stat().st_size for p in paths) / 1e6
        print(
            f"{len(rows)} secrets of {len({r['rule'] for r in rows})} formats; "
            f"{len(paths)} Markdown files, {size:.2f} MB; speed: median of {reps}"
        )
        tools: list[tuple[str, Callable[[Path], bool] | None]] = [
            (f"gitpub ({scan.ruleset()['name']})", gitpub_finds),
            ("detect-secrets", None if args.gitpub_only else detect_secrets_scanner()),
        ]
        print(f"{'scanner':<34}{'in line':>9}{'in prose':>10}{'FP files':>14}{'MB/s':>8}")
        results = {}
        for name, finds in tools:
            if finds is None and args.gitpub_only:
                continue
            if finds is None:
                print(f"{name:<34}   (not installed: pip install -e '.[bench]')")
                continue
            r = measure(finds, lines, bare, paths, reps)
            results[name] = r
            fp = f"{r['flagged']:.0f} ({r['fp']:.2%})"
            print(f"{name:<34}{r['line']:>9.1%}{r['bare']:>10.1%}{fp:>14}{r['mbps']:>8.2f}")
        if len(results) == 2:
            ours, theirs = results.values()
            print(f"speed ratio gitpub / detect-secrets: {ours['mbps'] / theirs['mbps']:.2f}")


if __name__ == "__main__":
    main()
