"""Subsetting a real CJK font: the font gate against fontTools' subsetter and `pyftsubset`.

Character sets are the first N characters of GB2312's hanzi table (level 1 is the 3,755 most
common ones), continued into GBK for 7,000, plus ASCII. Each tool writes a woff2:

  gate        gitpub's font gate (HarfBuzz when uharfbuzz is installed, woff2 quality from the
              config, default 10), in one process that keeps the source font loaded
  fontTools   fontTools.subset in-process, default options (woff2 at Brotli quality 11)
  pyftsubset  the command, as a user or a build script runs it (interpreter start-up included)

Then the case that matters for publishing: a 3,000-character subset exists and one article
adds one character (gate vs pyftsubset on the 3,001 characters); an article that adds none
(time spent in the gate); and, when a TrueType CJK font is installed, what woff2's glyf
transform costs and saves.

    python benchmarks/bench_fonts.py                # 500, 3,000 and 7,000 characters, 3 runs
    python benchmarks/bench_fonts.py --quick        # 500 characters, 1 run
    python benchmarks/bench_fonts.py --quick --sizes 100 1000
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitpub import config, fonts
from gitpub.fonts import engine
from gitpub.fonts.source import load

ASCII = "".join(chr(c) for c in range(0x20, 0x7F))


def common_hanzi(n: int) -> str:
    """The first n hanzi in GB2312 order, then GBK's, for a deterministic 'common' set."""
    out: list[str] = []
    for lead_range, trail_range, codec in (
        (range(0xB0, 0xF8), range(0xA1, 0xFF), "gb2312"),
        (range(0x81, 0xA1), range(0x40, 0xFF), "gbk"),
    ):
        for lead in lead_range:
            for trail in trail_range:
                try:
                    ch = bytes([lead, trail]).decode(codec)
                except UnicodeDecodeError:
                    continue
                if "\u4e00" <= ch <= "\u9fff" and ch not in out:
                    out.append(ch)
                    if len(out) == n:
                        return "".join(out)
    raise SystemExit(f"only {len(out)} hanzi available, asked for {n}")


def find_font(family: str) -> tuple[str, int] | None:
    if not shutil.which("fc-match"):
        return None
    proc = subprocess.run(
        ["fc-match", "-f", "%{file}\n%{index}\n%{family}", family],
        capture_output=True,
        text=True,
    )
    parts = proc.stdout.split("\n")
    if len(parts) < 3 or family.split(":")[0].lower() not in parts[2].lower():
        return None
    return parts[0], int(parts[1] or 0)


@dataclass
class Timing:
    wall: float  # median seconds on the clock
    cpu: float  # median CPU seconds (this process and its children): steadier on a busy host


def _cpu() -> float:
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(runs: dict[str, Callable[[], object]], reps: int) -> dict[str, Timing]:
    """Median timings of each callable; the callables take turns, so a burst of load on a
    shared machine lands on all of them alike instead of on whichever ran at the time."""
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(reps):
        for name, fn in runs.items():
            cpu, start = _cpu(), time.perf_counter()
            fn()
            walls[name].append(time.perf_counter() - start)
            cpus[name].append(_cpu() - cpu)
    return {
        name: Timing(statistics.median(walls[name]), statistics.median(cpus[name])) for name in runs
    }


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(where: Path, source: str, face: int, text: str) -> Path:
    root = where / "blog"
    (root / "content" / "posts").mkdir(parents=True)
    # fonts.source must be a file of the repository: a link to the system font stands in.
    (root / "fonts").mkdir()
    link = root / "fonts" / Path(source).name
    link.symlink_to(Path(source).resolve())
    (root / ".blogpub.toml").write_text(
        f'[fonts]\nsource = "fonts/{link.name}"\nface = {face}\noutputs = ["public/blog.woff2"]\n',
        encoding="utf-8",
    )
    (root / "content" / "posts" / "all.md").write_text(text, encoding="utf-8")
    _git(where, "init", "--quiet", str(root))
    _git(root, "add", ".")
    _git(
        root,
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.invalid",
        "commit",
        "--quiet",
        "-m",
        "articles",
    )
    return root


def gate_full(root: Path) -> Callable[[], object]:
    cfg = config.load(root)
    out = root / "public" / "blog.woff2"

    def run() -> None:
        out.unlink(missing_ok=True)
        fonts.regenerate(cfg, root)

    run()  # the first build in a process also loads the source font and its cmap
    return run


def fonttools_lib(source: str, face: int, text: str, out: Path) -> Callable[[], object]:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    def run() -> None:
        font = TTFont(source, fontNumber=face)
        subsetter = subset.Subsetter(subset.Options())
        subsetter.populate(text=text)
        subsetter.subset(font)
        buf = io.BytesIO()
        font.flavor = "woff2"
        font.save(buf)
        out.write_bytes(buf.getvalue())

    return run


def pyftsubset(source: str, face: int, text: str, out: Path) -> Callable[[], object]:
    exe = shutil.which("pyftsubset")
    argv = [exe] if exe else [sys.executable, "-m", "fontTools.subset"]
    text_file = out.with_suffix(".txt")
    text_file.write_text(text, encoding="utf-8")
    command = argv + [
        source,
        f"--font-number={face}",
        f"--text-file={text_file}",
        "--flavor=woff2",
        f"--output-file={out}",
    ]
    return lambda: subprocess.run(command, check=True)


def fmt(t: Timing, size: int) -> str:
    return f"{t.wall:6.2f} s {t.cpu:6.2f} s {size:>10,} B"


def ratio(a: Timing, b: Timing, size_a: int, size_b: int) -> str:
    return (
        f"{a.wall / b.wall:.2f}× wall, {a.cpu / b.cpu:.2f}× CPU, "
        f"{100 * (size_a / size_b - 1):+.1f}% bytes"
    )


HEAD = f"{'wall':>8} {'CPU':>8} {'woff2':>12}"


def full_builds(source: str, face: int, sizes: list[int], tmp: Path) -> None:
    print(f"\nFull subset to N characters (+ ASCII), medians of {REPS}:")
    print(f"{'chars':>6} | {'gate':^30} | {'fontTools subset':^30} | {'pyftsubset':^30} |")
    print(f"{'':>6} | {HEAD} | {HEAD} | {HEAD} | gate vs pyftsubset")
    for n in sizes:
        text = common_hanzi(n) + ASCII
        where = tmp / f"full-{n}"
        where.mkdir()
        root = make_repo(where, source, face, text)
        outs = {
            "gate": root / "public" / "blog.woff2",
            "fontTools": where / "fonttools.woff2",
            "pyftsubset": where / "pyftsubset.woff2",
        }
        t = measure(
            {
                "gate": gate_full(root),
                "fontTools": fonttools_lib(source, face, text, outs["fontTools"]),
                "pyftsubset": pyftsubset(source, face, text, outs["pyftsubset"]),
            },
            REPS,
        )
        size = {name: out.stat().st_size for name, out in outs.items()}
        cells = " | ".join(fmt(t[name], size[name]) for name in outs)
        versus = ratio(t["gate"], t["pyftsubset"], size["gate"], size["pyftsubset"])
        print(f"{n:>6} | {cells} | {versus}")


def incremental(source: str, face: int, tmp: Path) -> None:
    base = common_hanzi(3000)
    extra = common_hanzi(3001)[-1]
    where = tmp / "incremental"
    where.mkdir()
    root = make_repo(where, source, face, base + ASCII)
    cfg = config.load(root)
    fonts.regenerate(cfg, root)
    out = root / "public" / "blog.woff2"
    committed = out.read_bytes()
    article = root / "content" / "posts" / "new.md"
    py_out = where / "pyftsubset.woff2"

    def add_one() -> None:
        out.write_bytes(committed)  # the subset as committed: one character short
        article.write_text(f"今天多了一个字：{extra}", encoding="utf-8")
        fonts.gate(cfg, root)

    t = measure(
        {"gate": add_one, "pyftsubset": pyftsubset(source, face, base + extra + ASCII, py_out)},
        REPS,
    )
    size_gate, size_py = out.stat().st_size, py_out.stat().st_size
    print(f"\nAfter one new character in a 3,000-character subset, medians of {REPS}:")
    print(f"  {'':<11} {HEAD}")
    print(f"  gate        {fmt(t['gate'], size_gate)}")
    print(f"  pyftsubset  {fmt(t['pyftsubset'], size_py)}")
    print(f"  gate vs pyftsubset: {ratio(t['gate'], t['pyftsubset'], size_gate, size_py)}")
    print("  (targets: at most 0.33× the time, at most +3% bytes)")

    article.write_text("今天没有新字：" + base[:200], encoding="utf-8")
    fonts.gate(cfg, root)
    answer: dict[str, object] = {}

    def no_new() -> None:
        answer.update(fonts.gate(cfg, root))

    none = measure({"gate": no_new}, max(REPS, 7))["gate"]
    assert answer["written"] == []
    print(
        f"\nPublish of an article that adds no character: {none.wall * 1000:.1f} ms in the gate "
        f"({none.cpu * 1000:.1f} ms CPU), nothing written"
    )


def quality_sweep(source_path: str, face: int, tmp: Path) -> None:
    """The woff2 pass alone on the 3,000-character subset, at the qualities worth choosing."""
    source = load(config.FontsConfig(source=source_path, face=face), tmp)
    keep = frozenset(map(ord, common_hanzi(3000) + ASCII)) & source.coverage
    sfnt = engine.subset(source, keep, engine.choose("auto"))
    print(f"\nwoff2 pass alone on the 3,000-character subset, medians of {REPS}:")
    print(f"  {'':<11} {HEAD}")
    for quality in (9, 10, 11):
        data: list[bytes] = []

        def run(q: int = quality, keep: list[bytes] = data) -> None:
            keep[:] = [engine.encode(sfnt, "woff2", q, {})]

        timing = measure({"encode": run}, REPS)["encode"]
        print(f"  quality {quality:>2}  {fmt(timing, len(data[0]))}")


def glyf_transform(tmp: Path) -> None:
    found = find_font("WenQuanYi Micro Hei")
    if found is None:
        print("\nglyf transform: no TrueType CJK font (WenQuanYi Micro Hei) installed; skipped")
        return
    path, face = found
    cfg = config.FontsConfig(source=path, face=face)
    source = load(cfg, tmp)
    keep = frozenset(map(ord, common_hanzi(7000) + ASCII)) & source.coverage
    sfnt = engine.subset(source, keep, engine.choose("auto"))
    print(f"\nwoff2 of a {len(keep):,}-character WenQuanYi subset, median of {REPS}:")
    print(f"  {'':<36} {HEAD}")
    for quality in (9, 10):
        for transform in (True, False):
            data: list[bytes] = []

            def run(q: int = quality, t: bool = transform, keep: list[bytes] = data) -> None:
                keep[:] = [engine.encode(sfnt, "woff2", q, {}, transform=t)]

            timing = measure({"encode": run}, REPS)["encode"]
            label = "with" if transform else "without"
            print(f"  quality {quality:>2}, {label:>7} glyf transform: {fmt(timing, len(data[0]))}")


REPS = 3


def main() -> None:
    global REPS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 characters, one run")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=None, metavar="N", help="character counts"
    )
    args = parser.parse_args()
    REPS = args.reps or (1 if args.quick else 3)
    found = find_font("Noto Sans CJK SC:style=Regular")
    if found is None:
        raise SystemExit("no Noto Sans CJK SC found (Debian: apt-get install fonts-noto-cjk)")
    source, face = found
    print(f"source: {Path(source).name} face {face}; engine: {engine.choose('auto')}")
    print(f"gate woff2 quality: {config.FontsConfig().quality} (default); CPUs: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="gitpub-bench-fonts-") as tmp:
        sizes = args.sizes or ([500] if args.quick else [500, 3000, 7000])
        full_builds(source, face, sizes, Path(tmp))
        if not args.quick:
            incremental(source, face, Path(tmp))
            quality_sweep(source, face, Path(tmp))
            glyf_transform(Path(tmp))


if __name__ == "__main__":
    main()
