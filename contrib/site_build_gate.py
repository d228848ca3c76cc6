#!/usr/bin/env python3
"""A review gate that builds the site with the blog's own generator, in the job's worktree.

gitpub writes the article (and its assets) into the job's private worktree before the gates
run and names that folder in the request's `worktree` field. This gate runs the command given
on its command line there; a build that fails sends the job to REVIEW with the generator's own
message. `{out}` in the command is replaced by a temporary folder for the built site, so the
build leaves nothing behind in the worktree.

    [steps]
    review = [["python3", "/opt/gitpub/contrib/site_build_gate.py",
               "hugo", "--noBuildLock", "--destination", "{out}"]]
    # Hexo:  [..., "npx", "hexo", "generate"]
    # Astro: [..., "npx", "astro", "build", "--outDir", "{out}"]

Step protocol (docs/steps.md): one JSON object on stdin, {"path", "text", "worktree"}; one on
stdout, {"ok": true} or {"ok": false, "reason": "..."}. A build that fails is an answer (exit
0); only a request outside the protocol or a missing generator exits non-zero.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile

LIMIT = 300  # characters of the generator's message kept in the reason


def message(output: str) -> str:
    """The generator's error: its first line that says ERROR or Error, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line[:LIMIT]
    return (lines[-1] if lines else "the build failed without a message")[:LIMIT]


def main(argv: list[str]) -> int:
    if not argv:
        print("site_build_gate: give the build command, e.g. hugo -d {out}", file=sys.stderr)
        return 2
    try:
        request = json.load(sys.stdin)
        worktree = request["worktree"]
    except (ValueError, KeyError, TypeError):
        print("site_build_gate: the request has no 'worktree' (gitpub too old?)", file=sys.stderr)
        return 2
    if shutil.which(argv[0]) is None:
        print(f"site_build_gate: command not found: {argv[0]}", file=sys.stderr)
        return 127
    with tempfile.TemporaryDirectory(prefix="gitpub-site-") as out:
        command = [arg.replace("{out}", out) for arg in argv]
        proc = subprocess.run(command, cwd=worktree, capture_output=True, text=True)
    if proc.returncode == 0:
        answer = {"ok": True}
    else:
        reason = f"{argv[0]} failed: {message(proc.stderr + proc.stdout)}"
        answer = {"ok": False, "reason": reason}
    print(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
