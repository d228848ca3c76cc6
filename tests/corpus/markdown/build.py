"""Rebuild markdown.tar.xz from clones of the public repositories listed in SOURCES.md (run by
hand, not by the tests). The files are stored exactly as their repositories hold them.

    python tests/corpus/markdown/build.py TLDR_CLONE RUST_BLOG_CLONE
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path


def _files(repo: Path, folder: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "--name-only", "HEAD", f"{folder}/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(p for p in out.splitlines() if p.endswith(".md"))


def _blob(repo: Path, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, check=True
    ).stdout


def main(tldr: Path, rust_blog: Path) -> None:
    picks: list[tuple[str, Path, str]] = []
    picks += [("tldr", tldr, p) for p in _files(tldr, "pages.zh/common")]
    picks += [("tldr", tldr, p) for p in _files(tldr, "pages.zh/linux")]
    picks += [("tldr", tldr, p) for p in _files(tldr, "pages/common")[::8]]  # every 8th page
    picks += [("rust-blog", rust_blog, p) for p in _files(rust_blog, "content")]
    target = Path(__file__).with_name("markdown.tar.xz")
    with tarfile.open(target, "w:xz") as tar:
        for name, repo, path in picks:
            data = _blob(repo, path)
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    print(f"{len(picks)} files written to {target}", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
