"""What gitpub's hooks cost a person's git commands that do not concern gitpub.

Three repositories, built the same way (not timed), differ only in their hooks folder:

- none:   no hooks at all;
- floor:  `#!/bin/sh` + `exit 0` as post-commit and reference-transaction, the least any hook
          costs (one fork+exec of the shell per invocation);
- gitpub: the hooks `git blogpub install` writes, with the state dir and branch file in place.

Timed, interleaved round by round in shuffled order so drift hits every variant alike:
`git commit --allow-empty` on a branch that is not the published one, and `git update-ref` of
an unrelated ref. One more row times a commit on the published branch (the hooks' hint path).
With `--python`, a fourth variant runs a Python hook that imports gitpub, for scale.

    python benchmarks/bench_hooks.py              # 300 rounds
    python benchmarks/bench_hooks.py --quick      # 40 rounds
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import hermetic_env  # noqa: E402  (the same hermetic set-up as the spine bench)

from gitpub.git.repo import Repo  # noqa: E402
from gitpub.sync import hooks  # noqa: E402
from gitpub.sync.hooks import setup as hook_setup  # noqa: E402

FLOOR_HOOK = "#!/bin/sh\nexit 0\n"
PYTHON_HOOK = f"#!{sys.executable}\nimport gitpub.sync.edits\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_repo(root: Path, variant: str, branch: str) -> None:
    """A small blog repository checked out on `branch`, with the variant's hooks."""
    git(root.parent, "init", "-q", str(root))
    posts = root / "content" / "posts"
    posts.mkdir(parents=True)
    for i in range(20):
        (posts / f"post-{i}.mdx").write_text(f"---\ntitle: Post {i}\n---\n\nBody {i}.\n" * 20)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "scaffold")
    git(root, "commit", "-q", "--allow-empty", "-m", "second")
    if branch != "main":
        git(root, "switch", "-q", "-c", branch)
    folder = root / ".git" / "hooks"
    for sample in folder.glob("*.sample"):
        sample.unlink()
    if variant == "gitpub":
        hook_setup.install(Repo(root), "main")
    elif variant in ("floor", "python"):
        for name in hooks.HOOK_NAMES:
            (folder / name).write_text(FLOOR_HOOK if variant == "floor" else PYTHON_HOOK)
            (folder / name).chmod(0o755)


def spawn(cwd: Path, argv: list[str]) -> float:
    """Seconds one git command takes, fork to exit; output discarded."""
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def operations(root: Path) -> dict[str, Callable[[int], list[str]]]:
    a, b = git(root, "rev-parse", "HEAD"), git(root, "rev-parse", "HEAD~1")
    return {
        "commit": lambda i: ["git", "commit", "-q", "--allow-empty", "-m", f"bench {i}"],
        "update-ref": lambda i: ["git", "update-ref", "refs/heads/bench", a if i % 2 else b],
    }


def measure(
    repos: dict[str, Path], op: str, rounds: int, rng: random.Random
) -> dict[str, list[float]]:
    ops = {variant: operations(root)[op] for variant, root in repos.items()}
    times: dict[str, list[float]] = {v: [] for v in repos}
    for i in range(rounds):
        order = list(repos)
        rng.shuffle(order)
        for variant in order:
            times[variant].append(spawn(repos[variant], ops[variant](i)))
    return times


def report(title: str, times: dict[str, list[float]]) -> None:
    med = {v: statistics.median(t) * 1000 for v, t in times.items()}
    none, floor = med["none"], med["floor"]
    print(f"\n{title}  (median of {len(next(iter(times.values())))} runs)")
    print(f"  {'hooks':<8}{'median':>10}{'vs floor':>10}{'hook cost':>11}{'vs floor hook':>15}")
    for variant, m in med.items():
        cost = m - none
        rel = f"{m / floor:.2f}x"
        share = "" if variant == "none" else f"{cost / (floor - none):.2f}x"
        print(f"  {variant:<8}{m:>8.2f}ms{rel:>10}{cost:>9.2f}ms{share:>15}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 rounds instead of 300")
    parser.add_argument("--python", action="store_true", help="also time a Python hook")
    args = parser.parse_args()
    rounds = 40 if args.quick else 300
    rng = random.Random(6)
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        base = Path(tmp)
        # No automatic `git gc` in the middle of a timed round.
        hermetic_env(base / "home", "[gc]\n\tauto = 0\n")
        variants = ["none", "floor", "gitpub"] + (["python"] if args.python else [])
        off = {v: base / f"{v}-work" for v in variants}
        on = {v: base / f"{v}-main" for v in variants if v != "python"}
        for v, root in off.items():
            make_repo(root, v, "work")
        for v, root in on.items():
            make_repo(root, v, "main")
        print(f"git {git(base, 'version').split()[-1]}, /bin/sh -> {os.path.realpath('/bin/sh')}")
        unrelated = {v: r for v, r in off.items() if v != "python"}
        report("git commit, not on the published branch", measure(unrelated, "commit", rounds, rng))
        report("git update-ref of an unrelated ref", measure(unrelated, "update-ref", rounds, rng))
        report("git commit on the published branch (hint)", measure(on, "commit", rounds, rng))
        if args.python:
            report(
                "git commit, with a Python hook importing gitpub",
                measure(off, "commit", max(5, rounds // 10), rng),
            )


if __name__ == "__main__":
    main()
