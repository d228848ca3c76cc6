"""Trust covers the code, not only the argv: after `git blogpub trust`, a push that rewrites
any tracked file outside the articles (a script reached through `cd`, a folder run by its
`__main__.py`, a file read by `exec`, a tracked symlinked folder, a site's own config) needs a
new allowance; publishing articles never does. Real git, real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testing.fixtures import CONFIG, Blog, article

MESSAGE = "run `git blogpub trust` on node test-node"
OK = "echo '{\"ok\": true}'"
EVIL = "touch PWNED; " + OK


def steps_toml(review: list[list[str]]) -> str:
    return f"\n[steps]\nreview = {json.dumps(review)}\n"


def held(blog: Blog, job_id: str) -> str:
    entered = [e for e in blog.job(job_id)["events"] if e["to_state"] == "REVIEW"]
    return str(entered[-1]["detail"]["reason"]) if entered else ""


# (argv of the trusted gate, files of the blog, the file the attacker rewrites, its new text)
CASES = {
    "cd inside a shell string": (
        ["sh", "-c", "cd tools && sh gate.sh"],
        {"tools/gate.sh": OK + "\n"},
        "tools/gate.sh",
        EVIL + "\n",
    ),
    "a folder run by its __main__.py": (
        ["python3", "tools"],
        {"tools/__main__.py": "print('{\"ok\": true}')\n"},
        "tools/__main__.py",
        "open('PWNED', 'w').close(); print('{\"ok\": true}')\n",
    ),
    "a file read by exec": (
        ["python3", "-c", "exec(open('tools/g.py').read())"],
        {"tools/g.py": "print('{\"ok\": true}')\n"},
        "tools/g.py",
        "open('PWNED', 'w').close(); print('{\"ok\": true}')\n",
    ),
    "a symlinked folder whose script sources a file beside it": (
        ["sh", "tools/gate.sh"],
        {"scripts/gate.sh": ". tools/answer.sh\n", "scripts/answer.sh": OK + "\n"},
        "scripts/answer.sh",
        EVIL + "\n",
    ),
    "a site config a build gate runs": (
        ["sh", "-c", "sh build.sh"],
        {"build.sh": ". ./site.config.sh\n" + OK + "\n", "site.config.sh": "title=blog\n"},
        "site.config.sh",
        "touch PWNED\n",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_push_rewriting_the_code_behind_a_trusted_command_asks_again(
    blog: Blog, case: str
) -> None:
    argv, files, target, evil = CASES[case]
    for name, text in files.items():
        (blog.root / name).parent.mkdir(parents=True, exist_ok=True)
        (blog.root / name).write_text(text)
    if "symlinked" in case:
        (blog.root / "tools").symlink_to("scripts")
    (blog.root / ".blogpub.toml").write_text(CONFIG + steps_toml([argv]))
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "a gate kept in the repository")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    blog.trust()
    first = blog.submit("k0", article("First", "Published: the gate is allowed."))
    blog.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "PUBLISHED"  # and publishing asks nothing new
    assert "names exactly these commands now" in blog.ok("trust", "--list").stdout

    attacker = blog.clone("attacker")
    (attacker.root / target).write_text(evil)
    attacker.git("commit", "--quiet", "-am", "faster gate")
    attacker.git("push", "--quiet", "origin", "HEAD:main")
    blog.git("pull", "--quiet", "--ff-only", "origin", "main")

    listed = blog.ok("trust", "--list").stdout
    assert "changed since the allowance" in listed
    assert f"  - file {target} blob" in listed and f"  + file {target} blob" in listed
    job_id = blog.submit("k", article("Post", "A body."))
    blog.ok("run", "--until-idle")
    assert MESSAGE in held(blog, job_id)
    assert not (blog.root / "PWNED").exists()
    assert blog.commits_with_job(job_id) == 0


def test_publishing_articles_and_font_outputs_never_asks_again(blog: Blog, tmp_path: Path) -> None:
    (blog.root / "tools").mkdir()
    (blog.root / "tools/gate.sh").write_text(OK + "\n")
    (blog.root / ".blogpub.toml").write_text(CONFIG + steps_toml([["sh", "tools/gate.sh"]]))
    blog.git("add", ".")
    blog.git("commit", "--quiet", "-m", "gate")
    blog.git("push", "--quiet", "origin", "HEAD:main")
    blog.trust()
    ids = [
        blog.submit(f"k{i}", article(f"Post {i}", f"Body number {i} of many.")) for i in range(3)
    ]
    blog.ok("run", "--until-idle")
    # Another writer's article arrives by hand, and the next jobs still pass the same gate.
    other = blog.clone("writer")
    (other.root / "content/posts/by-hand.md").write_text(article("By hand", "A person wrote it."))
    other.git("add", ".")
    other.git("commit", "--quiet", "-m", "a post by hand")
    other.git("push", "--quiet", "origin", "HEAD:main")
    blog.git("pull", "--quiet", "--ff-only", "origin", "main")
    ids.append(blog.submit("k9", article("Later", "Published after the hand edit arrived.")))
    res = blog.ok("run", "--until-idle")
    assert MESSAGE not in res.stderr
    assert [blog.job(i)["job"]["state"] for i in ids] == ["PUBLISHED"] * 4
    assert "names exactly these commands now" in blog.ok("trust", "--list").stdout
