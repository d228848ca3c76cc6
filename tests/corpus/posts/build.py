"""Rebuild posts.tar.xz from clones of the public blogs listed in SOURCES.md (run by hand, not
by the tests). Every post of each blog's post folder is stored exactly as the repository holds
it, at the commit SOURCES.md names.

    python tests/corpus/posts/build.py HBCHEN HUXBLOG JANE LYNKXU XOVEL GO_WEBSITE \\
        WEEKLY_PRACTICE SIMONW_TIL JBRANCHAUD_TIL

A folder of "" is the whole repository (a TIL collection: one post per file), less its
top-level README, which is an index of the posts and no post itself.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

# (name in the archive, commit, folder of posts), in the order of the command line.
BLOGS = (
    ("hbchen", "bc17c84714eaa10ed8b145a2fb2638c31f591025", "content/post"),
    ("huxblog", "6619d45344a835e12c2bc35a4ef49609d45f1c3c", "_posts"),
    ("jane", "b4aac7720efcf0d7f25258c12d64d472402d03cb", "exampleSite/content"),
    ("lynkxu", "ccbcc80ae9fcfceb02e719fb26f3ebec2d92cf71", "src/content"),
    ("xovel", "fe3bc8212ff10f521d5becb8fab17b5278bbb56f", "source/_posts"),
    ("goblog", "b02076ae6df08ee9d495fe4b283f88ac18e51012", "_content/blog"),
    ("weekly-practice", "98cda5a6594bce2a11ca6618d987bd92554aebbd", "notes"),
    ("simonw-til", "8d908b6d36cdd27bc6464392435ac6223a00caac", ""),
    ("jbranchaud-til", "453e9edbdf2be4165b65cbcce7342ac7bb9c4859", ""),
)
SUFFIXES = (".md", ".markdown", ".mdx")


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def main(repos: list[Path]) -> None:
    target = Path(__file__).with_name("posts.tar.xz")
    count = 0
    with tarfile.open(target, "w:xz") as tar:
        for (name, commit, folder), repo in zip(BLOGS, repos, strict=True):
            where = [f"{folder}/"] if folder else []
            listing = _git(repo, "ls-tree", "-r", "--name-only", commit, *where).decode()
            paths = [p for p in listing.splitlines() if p.endswith(SUFFIXES)]
            for path in sorted(p for p in paths if "/" in p or folder):
                data = _git(repo, "show", f"{commit}:{path}")
                info = tarfile.TarInfo(f"{name}/{path}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                count += 1
    print(f"{count} posts written to {target}", file=sys.stderr)


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]])
