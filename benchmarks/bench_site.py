"""The built-in MDX check and the built-in judge, this tree against an earlier revision.

Loads `gitpub/site/validate.py` and `gitpub/prepare/builtins.py` as they were at REV (default
`main`, read with `git show`) beside the current ones, then times, in one run:

- the MDX check over every `.mdx` page of tests/corpus/mdx (the longest, 168 KB, holds a
  `<PropertiesTable>` whose attribute runs for thousands of lines);
- the prepare judge of one new post against a blog of N random CJK posts (the memo of 3-grams
  is warm, as in a worker that prepares a batch).

Prints the median of each, and the ratio current / REV.

    python benchmarks/bench_site.py                  # against main, 1,000 posts
    python benchmarks/bench_site.py --rev HEAD~5 --posts 300 --repeat 5
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from gitpub.prepare import builtins
from gitpub.site import validate

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "tests" / "corpus" / "mdx").rglob("*.mdx"))


def old_module(rev: str, path: str, name: str, tmp: Path) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    file = tmp / f"{name}.py"
    file.write_bytes(source)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def medians(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median times of a and b, run alternately: a shared machine's load falls on both."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((a, times[0]), (b, times[1])):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def blog(posts: int, seed: int = 7) -> list[dict[str, str]]:
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    return [
        {
            "path": f"content/posts/p{i}.md",
            "text": f"---\ntitle: p{i}\n---\n\n" + "".join(rng.choices(alphabet, k=1500)) + "\n",
        }
        for i in range(posts)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rev", default="main")
    ap.add_argument("--posts", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        old_validate = old_module(args.rev, "gitpub/site/validate.py", "old_validate", Path(tmp))
        old_builtins = old_module(args.rev, "gitpub/prepare/builtins.py", "old_builtins", Path(tmp))
    texts = {p: p.read_text("utf-8") for p in PAGES}

    def check_all(module: ModuleType) -> Callable[[], None]:
        return lambda: [module.check(p.name, t) for p, t in texts.items()]

    existing = blog(args.posts)
    request = {
        "mode": "prepare",
        "candidate": {"path": "content/posts/new.md", "text": blog(1, seed=99)[0]["text"]},
        "existing": existing,
    }

    def judge(module: ModuleType) -> Callable[[], None]:
        return lambda: module.judge(request, 0.85, 0.5)

    rows = [
        (f"MDX check, {len(PAGES)} corpus pages", check_all(validate), check_all(old_validate)),
        (f"judge, 1 post against {args.posts}", judge(builtins), judge(old_builtins)),
    ]
    print(f"{'':40} {'this tree':>12} {args.rev:>12} {'ratio':>7}")
    for label, new, old in rows:
        new(), old()  # warm: imports, the 3-gram memo
        a, b = medians(new, old, args.repeat)
        print(f"{label:40} {a * 1000:10.1f}ms {b * 1000:10.1f}ms {a / b:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
