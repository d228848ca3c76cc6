"""The worked judge example in docs/steps.md does what the text says, through gitpub."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from testing.fixtures import Blog, article
from testing.paths import ROOT

DOC = ROOT / "docs" / "steps.md"


def example_judge() -> str:
    section = DOC.read_text().split("## A judge in a few lines", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "docs/steps.md lost its judge example"
    return found.group(1)


def test_documented_judge_skips_a_repeated_title_and_publishes_a_new_one(blog: Blog) -> None:
    tools = blog.root / "tools"
    tools.mkdir()
    (tools / "title_judge.py").write_text(example_judge())
    config = (blog.root / ".blogpub.toml").read_text()
    argv = json.dumps([sys.executable, "tools/title_judge.py"])  # relative to the repo root
    (blog.root / ".blogpub.toml").write_text(f"{config}\n[steps]\njudge = {argv}\n")
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "judge by title")
    blog.git("push", "--quiet", "origin", "main")
    blog.trust()

    again = blog.submit(
        "k1", article("Hello", "Completely different words, same title.", slug="hello-again")
    )
    fresh = blog.submit("k2", article("Fresh", "A title the blog does not have.", slug="fresh"))
    blog.ok("run", "--until-idle")

    skipped = blog.job(again)
    assert skipped["job"]["state"] == "SKIPPED"
    reasons = [e["detail"].get("reason") for e in skipped["events"]]
    assert "same title as content/posts/hello.mdx" in reasons
    assert blog.job(fresh)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/fresh.mdx").startswith(b"---\ntitle: Fresh")


def test_documented_judge_answers_keep_in_recheck(tmp_path: Path) -> None:
    script = tmp_path / "title_judge.py"
    script.write_text(example_judge())
    request = {
        "mode": "recheck",
        "candidate": {"path": "content/posts/a.mdx", "text": article("A", "x")},
        "delta": [{"path": "content/posts/b.mdx", "text": article("B", "y")}],
    }
    proc = subprocess.run(
        [sys.executable, str(script)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert json.loads(proc.stdout) == {"decision": "KEEP"}
