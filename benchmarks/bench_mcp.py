"""What an agent pays to hand an article over: a call to a running `git blogpub mcp` against
a `git blogpub submit` process per article, and what starting the server costs.

One blog repository (a bare remote and a clone, built once, not timed). Timed, interleaved
round by round in shuffled order so drift hits every variant alike:

- mcp submit:  one `submit` tool call on a session that stays open (the SDK's own client
               over stdio), a new key each time, so every call records a new job;
- cli submit:  `python -m gitpub submit --key K --source FILE --json`, a new key each time;
- mcp start:   spawning `python -m gitpub mcp` until its `initialize` answer (then closed).

Then, once, submit → PUBLISHED through `wait` on a server started with `--worker` at its
default interval, for a few articles one after another: what an agent waits before it can
tell its user the article is live.

    python benchmarks/bench_mcp.py              # 30 rounds
    python benchmarks/bench_mcp.py --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_e2e import articles, hermetic_env, make_blog  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402


def _params(blog: Path, *extra: str) -> StdioServerParameters:
    import os

    argv = [sys.executable, "-m", "gitpub", "-C", str(blog), "mcp", *extra]
    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


async def _start(blog: Path) -> float:
    start = time.perf_counter()
    async with stdio_client(_params(blog)) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        return time.perf_counter() - start


def _cli_submit(blog: Path, key: str, src: Path) -> float:
    start = time.perf_counter()
    argv = [sys.executable, "-m", "gitpub", "-C", str(blog), "submit", "--key", key]
    subprocess.run([*argv, "--source", str(src), "--json"], check=True, capture_output=True)
    return time.perf_counter() - start


async def rounds(blog: Path, texts: list[str], count: int, base: Path) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"mcp submit": [], "cli submit": [], "mcp start": []}
    async with stdio_client(_params(blog)) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        for i in range(count):
            order = list(out)
            random.shuffle(order)
            for name in order:
                if name == "mcp submit":
                    start = time.perf_counter()
                    res = await session.call_tool("submit", {"key": f"m{i}", "text": texts[2 * i]})
                    assert not res.is_error, res.content
                    out[name].append(time.perf_counter() - start)
                elif name == "cli submit":
                    src = base / f"src-{i}.md"
                    src.write_text(texts[2 * i + 1])
                    out[name].append(_cli_submit(blog, f"c{i}", src))
                else:
                    out[name].append(await _start(blog))
    return out


async def to_published(blog: Path, texts: list[str]) -> list[float]:
    took = []
    async with stdio_client(_params(blog, "--worker")) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        for i, text in enumerate(texts):
            start = time.perf_counter()
            res = await s.call_tool("submit", {"key": f"live{i}", "text": text})
            job_id = res.structured_content["job_id"]  # type: ignore[index]
            done = await s.call_tool("wait", {"job_id": job_id, "timeout_s": 120})
            assert done.structured_content["job"]["state"] == "PUBLISHED", done.content  # type: ignore[index]
            took.append(time.perf_counter() - start)
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--live", type=int, default=5, help="articles timed to PUBLISHED")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        base = Path(tmp)
        hermetic_env(base / "home")
        blog, _ = make_blog(base / "one")
        texts = articles(2 * args.rounds, seed=27)
        timed = asyncio.run(rounds(blog, texts, args.rounds, base))
        live_blog, _ = make_blog(base / "two")
        live = asyncio.run(to_published(live_blog, articles(args.live, seed=72)))
    med = {name: statistics.median(v) * 1000 for name, v in timed.items()}
    print(f"{args.rounds} rounds, medians (ms):")
    for name, ms in med.items():
        print(f"  {name:<12} {ms:8.1f}")
    print(f"  cli submit / mcp submit: {med['cli submit'] / med['mcp submit']:.1f}x")
    print(
        f"submit -> PUBLISHED with --worker (default interval), {args.live} articles: "
        f"median {statistics.median(live):.2f} s, max {max(live):.2f} s"
    )


if __name__ == "__main__":
    main()
