"""contrib/site_build_gate.py with Debian's hugo: the blog's own generator builds the site in
the job's worktree; a post hugo cannot build waits in REVIEW with hugo's own message."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from testing.fixtures import Blog, git
from testing.paths import ROOT

GATE = ROOT / "contrib" / "site_build_gate.py"


@pytest.fixture
def hugo_blog(tmp_path: Path) -> Blog:
    hugo = shutil.which("hugo")
    if hugo is None:
        pytest.skip("hugo is not installed here (Debian: apt-get install hugo)")
    remote, root = tmp_path / "remote.git", tmp_path / "blog"
    git(tmp_path, "init", "--quiet", "--bare", str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(root))
    (root / "hugo.toml").write_text('baseURL = "https://example.org/"\ntitle = "小站"\n')
    (root / "layouts" / "_default").mkdir(parents=True)
    (root / "layouts" / "_default" / "single.html").write_text(
        "<h1>{{ .Title }}</h1>{{ .Content }}\n"
    )
    (root / "layouts" / "_default" / "list.html").write_text(
        "{{ range .Pages }}{{ .Title }}{{ end }}\n"
    )
    (root / "content" / "posts").mkdir(parents=True)
    (root / "content" / "posts" / "first.md").write_text("---\ntitle: 第一篇\n---\n\n你好。\n")
    review = json.dumps(
        [[sys.executable, str(GATE), hugo, "--noBuildLock", "--destination", "{out}"]]
    )
    (root / ".blogpub.toml").write_text(
        f'[publish]\ncontent = ["content/posts"]\nsuffixes = [".md"]\n[steps]\nreview = {review}\n'
    )
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "a small hugo site")
    git(root, "push", "--quiet", "origin", "HEAD:main")
    blog = Blog(root, remote)
    blog.trust()  # the gate is an external command named by .blogpub.toml
    return blog


def _publish(blog: Blog, key: str, text: str) -> dict[str, object]:
    src = blog.root.parent / f"{key}.md"
    src.write_text(text, encoding="utf-8")
    job_id = blog.ok("submit", "--key", key, "--source", str(src), "--json").json()["job_id"]
    blog.ok("run", "--until-idle")
    return dict(blog.job(job_id))


def test_hugo_gate_passes_a_good_post_and_stops_a_broken_one(hugo_blog: Blog) -> None:
    good = "---\ntitle: 第二篇\nslug: second\n---\n\n一切正常。\n"
    shown = _publish(hugo_blog, "good", good)
    assert shown["job"]["state"] == "PUBLISHED"
    assert hugo_blog.remote_file("content/posts/second.md") == good.encode()

    before = hugo_blog.remote_log()
    broken = "---\ntitle: 坏的\nslug: broken\n---\n\n{{< no-such-shortcode >}}\n"
    shown = _publish(hugo_blog, "broken", broken)
    assert shown["job"]["state"] == "REVIEW"
    events = shown["events"]
    assert isinstance(events, list)
    reason = next(e for e in events if e["step"] == "prepare:done")["detail"]["reason"]
    assert reason.startswith("review0: ")
    assert 'shortcode "no-such-shortcode" not found' in reason  # hugo's own words
    assert hugo_blog.remote_log() == before
