"""`git blogpub demo [DIR]`: a scratch blog and its bare remote, an article published end to end."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from gitpub import jobs, worker
from gitpub.commands.output import say
from gitpub.context import open_context
from gitpub.errors import InputError
from gitpub.gitrepo import run_git

MARKER = ".gitpub-demo"

CONFIG = """\
[publish]
remote = "origin"
branch = "main"
content = ["content/posts"]

[retry]
base_delay = 1.0
"""

SAMPLE = """\
---
title: 持久化发布：从 fire-and-forget 到可恢复
slug: durable-publication
---

一次发布是一个作业：有状态、有历史、有收件箱。进程随时可能死掉，作业不会丢。

Every publication is a job with a state, a history and an outbox.
"""


def _git(cwd: Path, *args: str) -> None:
    run_git(list(args), cwd)


def _scratch(where: Path | None) -> Path:
    if where is None:
        return Path(tempfile.mkdtemp(prefix="gitpub-demo-"))
    if where.exists() and any(where.iterdir()):
        if not (where / MARKER).exists():
            raise InputError(
                f"{where}: exists and is not an earlier demo folder; pick an empty one"
            )
        for child in where.iterdir():  # an earlier demo of ours: start it over
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    where.mkdir(parents=True, exist_ok=True)
    return where


def main(target: Path | None) -> None:
    root = _scratch(target)
    (root / MARKER).write_text("made by git blogpub demo\n")
    remote, blog = root / "remote.git", root / "blog"
    _git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    _git(root, "clone", "--quiet", str(remote), str(blog))
    _git(blog, "config", "user.name", "gitpub demo")
    _git(blog, "config", "user.email", "demo@gitpub.invalid")
    _git(blog, "checkout", "--quiet", "-B", "main")
    (blog / ".blogpub.toml").write_text(CONFIG)
    (blog / "content" / "posts").mkdir(parents=True)
    (blog / "content" / "posts" / ".keep").write_text("")
    _git(blog, "add", ".")
    _git(blog, "commit", "--quiet", "-m", "blog: scaffold")
    _git(blog, "push", "--quiet", "origin", "main")

    source = root / "article.mdx"
    source.write_text(SAMPLE, encoding="utf-8")
    say(f"demo blog:   {blog}")
    say(f"demo remote: {remote}")
    with open_context(blog) as ctx:
        job, _ = jobs.create(ctx, key="demo:durable-publication", source=SAMPLE)
        say(f"submitted job {job.job_id}")
        worker.run_until_idle(ctx)
        final = jobs.require(ctx.store, job.job_id)
        path = [e["to_state"] for e in jobs.events(ctx.store, job.job_id) if e["to_state"]]
        say("states: " + " → ".join(path))
        say(f"result: {final.state.value} as {final.remote_commit} ({final.target_path})")
        say(f"look:   git -C {blog} blogpub show {final.job_id[:8]}")
    if final.state.value != "PUBLISHED":
        raise InputError(
            f"demo job ended in {final.state.value}; see `git blogpub show {final.job_id}`"
        )
