"""contrib/mdx-validate: the validate step compiling articles with the real MDX compiler.

Needs Node and npm; the dependencies are installed into contrib/mdx-validate/node_modules
with `npm ci` when they are not there yet (.ci/run does that before the tests)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Blog, article

HERE = Path(__file__).resolve().parent.parent / "contrib" / "mdx-validate"
SCRIPT = HERE / "validate.mjs"


@pytest.fixture(scope="module")
def node() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are not installed here")
    if not (HERE / "node_modules" / "@mdx-js" / "mdx" / "package.json").is_file():
        try:
            proc = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(HERE)],
                capture_output=True,
                text=True,
                timeout=300,
            )
        except subprocess.TimeoutExpired:
            pytest.skip("npm ci took over 300 s (no registry access?)")
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"npm ci failed (no registry access?): {tail}")
    return node


def validate(node: str, request: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node, str(SCRIPT)],
        input=request if isinstance(request, str) else json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
    )


def answer(node: str, text: str, path: str = "content/posts/a.mdx") -> dict[str, Any]:
    proc = validate(node, {"path": path, "text": text})
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_valid_mdx_compiles(node: str) -> None:
    text = article("Notes", '# Heading\n\n<Callout kind="tip">Use **MDX**.</Callout>\n\n{1 + 1}')
    assert answer(node, text) == {"ok": True}


def test_unclosed_component_is_rejected_with_its_line(node: str) -> None:
    text = article("Broken", "Intro.\n\n<Callout>\n\nnever closed")
    result = answer(node, text)
    assert result["ok"] is False
    assert "closing tag" in result["reason"]
    assert result["line"] == 7  # counted in the article, front matter included


def test_bad_expression_the_simple_builtin_check_lets_through(node: str) -> None:
    text = article("JS", "Objects look like {a: 1} in JavaScript.")
    from gitpub.prepare.builtins import mdx

    assert mdx({"path": "content/posts/a.mdx", "text": text}) == {"ok": True}
    result = answer(node, text)
    assert result["ok"] is False and result["line"] == 5


def test_front_matter_is_not_compiled_but_must_close(node: str) -> None:
    assert answer(node, "---\ntitle: <not jsx {\n---\n\nBody.\n") == {"ok": True}
    result = answer(node, "---\ntitle: open\n\nBody.\n")
    assert result == {
        "ok": False,
        "reason": "front matter opened with --- is never closed",
        "line": 1,
    }


def test_markdown_files_compile_as_markdown(node: str) -> None:
    assert answer(node, "Plain <b>markdown with {braces}\n", path="content/posts/a.md") == {
        "ok": True
    }


@pytest.mark.parametrize("request_text", ["not json", "[1]", '{"path": "a.mdx"}'])
def test_request_outside_the_protocol_exits_nonzero(node: str, request_text: str) -> None:
    proc = validate(node, request_text)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1


def test_gitpub_sends_an_article_that_does_not_compile_to_review(node: str, blog: Blog) -> None:
    config = (blog.root / ".blogpub.toml").read_text()
    config += f"\n[steps]\nvalidate = [{json.dumps(node)}, {json.dumps(str(SCRIPT))}]\n"
    (blog.root / ".blogpub.toml").write_text(config)
    blog.git("commit", "--quiet", "-am", "validate articles with the MDX compiler")
    blog.git("push", "--quiet", "origin", "main")
    blog.trust()
    before = blog.remote_log()

    bad = blog.submit("bad", article("JS", "Objects look like {a: 1} in JavaScript."))
    good = blog.submit("good", article("Tips", "<Callout>Compiles.</Callout>", slug="tips"))
    blog.ok("run", "--until-idle")

    assert blog.job(bad)["job"]["state"] == "REVIEW"
    reasons = [e["detail"].get("reason", "") for e in blog.job(bad)["events"]]
    assert any("MDX: Could not parse expression" in r and "(line 5)" in r for r in reasons)
    assert blog.job(good)["job"]["state"] == "PUBLISHED"
    assert blog.remote_log()[1:] == before
    assert blog.remote_file("content/posts/tips.mdx").startswith(b"---\ntitle: Tips")
