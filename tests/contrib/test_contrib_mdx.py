"""contrib/mdx-validate: the validate step compiling articles with the real MDX compiler.

Needs Node and the step's npm packages, installed OUTSIDE the source tree before the suite
(`.ci/run` does it: `npm ci` on a copy of package.json and package-lock.json in the folder
named by GITPUB_TEST_MDX_DEPS, see conftest). The tests never install anything themselves;
without those packages they skip and say why. They run the contrib script's own bytes,
copied beside a link to that node_modules."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from testing.fixtures import MDX_DEPS, Blog, article
from testing.paths import ROOT

HERE = ROOT / "contrib" / "mdx-validate"
SCRIPT = HERE / "validate.mjs"


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The node executable and a runnable copy of validate.mjs beside the installed packages."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed here")
    installed = MDX_DEPS / "node_modules" / "@mdx-js" / "mdx" / "package.json"
    if not installed.is_file():
        pytest.skip(f"the MDX packages are not installed in {MDX_DEPS} (.ci/run installs them)")
    lock = MDX_DEPS / "package-lock.json"
    if not lock.is_file() or lock.read_bytes() != (HERE / "package-lock.json").read_bytes():
        pytest.skip(f"{MDX_DEPS} holds packages of another package-lock.json (run .ci/run)")
    where = tmp_path_factory.mktemp("mdx-validate")
    shutil.copyfile(SCRIPT, where / "validate.mjs")
    (where / "node_modules").symlink_to(MDX_DEPS / "node_modules", target_is_directory=True)
    return node, where / "validate.mjs"


def validate(node: tuple[str, Path], request: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node[0], str(node[1])],
        input=request if isinstance(request, str) else json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
    )


def answer(node: tuple[str, Path], text: str, path: str = "content/posts/a.mdx") -> dict[str, Any]:
    proc = validate(node, {"path": path, "text": text})
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_valid_mdx_compiles(node: tuple[str, Path]) -> None:
    text = article("Notes", '# Heading\n\n<Callout kind="tip">Use **MDX**.</Callout>\n\n{1 + 1}')
    assert answer(node, text) == {"ok": True}


def test_unclosed_component_is_rejected_with_its_line(node: tuple[str, Path]) -> None:
    text = article("Broken", "Intro.\n\n<Callout>\n\nnever closed")
    result = answer(node, text)
    assert result["ok"] is False
    assert "closing tag" in result["reason"]
    assert result["line"] == 7  # counted in the article, front matter included


def test_bad_expression_the_simple_builtin_check_lets_through(node: tuple[str, Path]) -> None:
    text = article("JS", "Objects look like {a: 1} in JavaScript.")
    from gitpub.prepare.builtins import mdx

    assert mdx({"path": "content/posts/a.mdx", "text": text}) == {"ok": True}
    result = answer(node, text)
    assert result["ok"] is False and result["line"] == 5


def test_front_matter_is_not_compiled_but_must_close(node: tuple[str, Path]) -> None:
    assert answer(node, "---\ntitle: <not jsx {\n---\n\nBody.\n") == {"ok": True}
    result = answer(node, "---\ntitle: open\n\nBody.\n")
    assert result == {
        "ok": False,
        "reason": "front matter opened with --- is never closed",
        "line": 1,
    }


def test_markdown_files_compile_as_markdown(node: tuple[str, Path]) -> None:
    assert answer(node, "Plain <b>markdown with {braces}\n", path="content/posts/a.md") == {
        "ok": True
    }


@pytest.mark.parametrize("request_text", ["not json", "[1]", '{"path": "a.mdx"}'])
def test_request_outside_the_protocol_exits_nonzero(
    node: tuple[str, Path], request_text: str
) -> None:
    proc = validate(node, request_text)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1


def test_gitpub_sends_an_article_that_does_not_compile_to_review(
    node: tuple[str, Path], blog: Blog
) -> None:
    config = (blog.root / ".blogpub.toml").read_text()
    config += f"\n[steps]\nvalidate = [{json.dumps(node[0])}, {json.dumps(str(node[1]))}]\n"
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
