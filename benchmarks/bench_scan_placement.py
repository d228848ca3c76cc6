"""Recall by placement and false positives on real posts: gitpub's scanner beside
detect-secrets, on material neither was built from.

Recall: every token of tests/testing/secret_formats.py (vendor-documented formats, generated at run
time; no rule set's examples) placed bare, in English sentences, glued to Chinese text with
full-width punctuation, the same Chinese sentences with spaces around the token, in
assignments and in code; then real-looking passwords in the forms people paste them, and the
demo values tutorials show (which should not be found). A text counts as found when the tool
reports anything in it. The "held out" rows keep only the tokens no rule of gitpub's own
matches: what the upstream rule sets, loaded unchanged, find once tokens may end at any
boundary.

False positives: every real blog post with code of tests/corpus/posts (nine public blogs,
SOURCES.md there), a post counting once however many findings it has. Speed: MB/s over all
posts (median of --reps runs, each tool reading the same files from disk).

    pip install -e '.[bench]'                       # detect-secrets 1.5.0
    python benchmarks/bench_scan_placement.py       # everything, 3 repetitions for speed
    python benchmarks/bench_scan_placement.py --quick
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_scan import detect_secrets_scanner, gitpub_finds, write_all

from gitpub import scan

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from testing.secret_corpus import has_code, posts  # noqa: E402
from testing.secret_formats import DEMOS, PLACEMENTS, Case, Placement, cases, passwords  # noqa: E402


# The Chinese sentences again with a space on each side of the token: what gitleaks' own
# end-of-token check accepts, so the gap between the two rows is the full-width boundary.
def _spaced(put: Placement) -> Placement:
    return lambda c: put(Case(c.format, f" {c.token} "))


SPACED = tuple(_spaced(put) for put in PLACEMENTS["chinese"])
ROWS = [
    ("bare", PLACEMENTS["bare"]),
    ("sentence", PLACEMENTS["sentence"]),
    ("chinese, glued", PLACEMENTS["chinese"]),
    ("chinese, spaced", SPACED),
    ("assignment", PLACEMENTS["assignment"]),
    ("code", PLACEMENTS["code"]),
]


def held_out(chosen: list[Case]) -> list[Case]:
    """The tokens no rule of gitpub's own (tokens.toml) matches: found, if at all, by the
    upstream rule sets, whose rules were not written from these formats' documentation."""
    from gitpub.scan import rules

    own = [r.regex for r in rules.builtin().rules if r.source == "tokens.toml"]
    return [c for c in chosen if not any(regex.search(c.token) for regex in own)]


def texts(every: int) -> dict[str, list[tuple[str, str]]]:
    """(file name, text) per row: placements of the tokens, passwords, demos."""
    chosen = list(cases()[::every])
    out = {
        row: [(f"{c.format.name}-{i}.md", put(c)) for c in chosen for i, put in enumerate(puts)]
        for row, puts in ROWS
    }
    out["ai, sentence"] = [
        (f"{c.format.name}-{i}.md", put(c))
        for c in chosen
        if c.format.ai
        for i, put in enumerate(PLACEMENTS["sentence"])
    ]
    held = held_out(chosen)
    for row, puts in ROWS[1:3]:
        out[f"{row}, held out ({len(held)})"] = [
            (f"{c.format.name}-{i}.md", put(c)) for c in held for i, put in enumerate(puts)
        ]
    out["password forms"] = [(f"{form}.md", text) for form, text in passwords()]
    out["demo values (lower is better)"] = [(f"demo-{i}.md", t) for i, t in enumerate(DEMOS)]
    return out


def measure(
    finds: Callable[[Path], bool], rows: dict[str, list[Path]], docs: list[Path], reps: int
) -> dict[str, float]:
    result = {row: sum(finds(p) for p in paths) / len(paths) for row, paths in rows.items()}
    times = []
    for rep in range(reps):
        start = time.perf_counter()
        flagged = sum(finds(p) for p in docs)
        times.append(time.perf_counter() - start)
        if rep == 0:
            result["flagged"] = flagged
    result["mbps"] = sum(p.stat().st_size for p in docs) / 1e6 / statistics.median(times)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a fifth of each corpus, 1 rep")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--gitpub-only", action="store_true", help="skip detect-secrets even when installed"
    )
    args = parser.parse_args()
    every, reps = (5, 1) if args.quick else (1, args.reps)
    docs = [(n, t) for n, t in posts() if has_code(t)][::every]
    with tempfile.TemporaryDirectory(prefix="gitpub-bench-placement-") as tmp:
        root = Path(tmp)
        rows: dict[str, list[Path]] = {}
        for i, (row, items) in enumerate(texts(every).items()):
            (root / str(i)).mkdir()
            rows[row] = write_all(root / str(i), items)
        (root / "posts").mkdir()
        paths = write_all(root / "posts", docs)
        size = sum(p.stat().st_size for p in paths) / 1e6
        print(
            f"{len(cases()[::every])} tokens of {len({c.format.name for c in cases()})} formats; "
            f"{len(paths)} real posts with code, {size:.2f} MB; speed: median of {reps}"
        )
        tools = [
            (f"gitpub ({scan.ruleset()['rules']} rules)", gitpub_finds),
            ("detect-secrets 1.5.0", None if args.gitpub_only else detect_secrets_scanner()),
        ]
        results = {}
        for name, finds in tools:
            if finds is None:
                if not args.gitpub_only:
                    print(f"{name}: not installed (pip install -e '.[bench]')")
                continue
            results[name] = measure(finds, rows, paths, reps)
        names = list(results)
        print(f"{'found':<32}" + "".join(f"{n:>24}" for n in names))
        for row in rows:
            print(f"{row:<32}" + "".join(f"{results[n][row]:>24.1%}" for n in names))
        shares = [(results[n]["flagged"], results[n]["flagged"] / len(paths)) for n in names]
        flagged = "".join(f"{f'{count:.0f} ({share:.2%})':>24}" for count, share in shares)
        print(f"{'real posts flagged':<32}{flagged}")
        print(f"{'MB/s':<32}" + "".join(f"{results[n]['mbps']:>24.2f}" for n in names))
        if len(names) == 2:
            ours, theirs = (results[n]["mbps"] for n in names)
            print(f"speed ratio gitpub / detect-secrets: {ours / theirs:.1f}")


if __name__ == "__main__":
    main()
