"""`git blogpub demo [DIR]`: a scratch Chinese blog, its bare remote and a second clone, and
four jobs that show what gitpub is for: three published (a plain publish, a second writer's
article, a race whose only conflict is the font subset — regenerated), and an update of an
article a person edited meanwhile, which stops in CONFLICT with nothing overwritten."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from gitpub import intake
from gitpub.cli.commands import demo_font
from gitpub.cli.commands.output import say
from gitpub.config import faces
from gitpub.context import Context, open_context
from gitpub.core.errors import InputError
from gitpub.git.process import run_git
from gitpub.ops import worker
from gitpub.store import jobs
from gitpub.store.jobs import Job

MARKER = ".gitpub-demo"

CONFIG = """\
[publish]
remote = "origin"
branch = "main"
content = ["content/posts"]

[fonts]
source = "{source}"{face}
outputs = ["public/fonts/blog.woff2"]
always = "ascii"
cjk_punctuation = true
quality = 5

[retry]
base_delay = 1.0
"""

ARTICLES = {
    "durable": (
        "持久化发布",
        "一次发布就是一个作业：有状态、有历史、有收件箱。进程随时可能死掉，作业不会丢。",
    ),
    "fonts": (
        "字体子集",
        "中文网页字体只保留文章用到的汉字。两台机器同时发文，冲突只在字体文件上：重新生成即可。",
    ),
    "garden": (
        "阳台菜园",
        "番茄需要阳光和耐心；辣椒怕冷，薄荷长得飞快。",
    ),
}


def _article(slug: str, extra: str = "") -> str:
    title, body = ARTICLES[slug]
    return f"---\ntitle: {title}\nslug: {slug}\n---\n\n{body}{extra}\n"


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


@contextlib.contextmanager
def _node(name: str, root: Path) -> Iterator[Context]:
    """Open a clone as writer node `name` (the Blog-Writer-Node trailer)."""
    before = os.environ.get("GITPUB_NODE")
    os.environ["GITPUB_NODE"] = name
    try:
        with open_context(root) as ctx:
            yield ctx
    finally:
        if before is None:
            os.environ.pop("GITPUB_NODE", None)
        else:
            os.environ["GITPUB_NODE"] = before


def _scaffold(root: Path) -> tuple[Path, Path, Path, str]:
    remote, blog, desk = root / "remote.git", root / "blog", root / "desk"
    _git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    _git(root, "clone", "--quiet", str(remote), str(blog))
    for clone in (blog,):
        _git(clone, "config", "user.name", "gitpub demo")
        _git(clone, "config", "user.email", "demo@gitpub.invalid")
    _git(blog, "checkout", "--quiet", "-B", "main")
    system = demo_font.system_font()
    (blog / "fonts").mkdir()
    if system is not None:
        # fonts.source must be a file of the repository: a link to the system font will do
        # for a scratch blog (a real blog commits the font itself).
        (blog / "fonts" / system.name).symlink_to(system)
        source, where = f"fonts/{system.name}", f"the system font {system.name}"
    else:
        chars = "".join(t + b for t, b in ARTICLES.values()) + "修改一处错字加上一句"
        (blog / "fonts" / "demo.ttf").write_bytes(demo_font.build(chars))
        source, where = "fonts/demo.ttf", "a font built on the spot (no CJK font installed)"
    # A Chinese blog says so (Hugo's languageCode), and a collection's face follows it: the
    # SC face, not the JP one a collection may hold first.
    (blog / "hugo.toml").write_text('title = "gitpub demo"\nlanguageCode = "zh-CN"\n')
    chosen = faces.choose(blog / source, "zh-CN") if source.endswith(".ttc") else None
    face = f"\nface = {chosen[0]}    # {chosen[1]}, for zh-CN" if chosen else ""
    (blog / ".blogpub.toml").write_text(CONFIG.format(source=source, face=face))
    (blog / "content" / "posts").mkdir(parents=True)
    (blog / "content" / "posts" / ".keep").write_text("")
    _git(blog, "add", ".")
    _git(blog, "commit", "--quiet", "-m", "blog: scaffold")
    _git(blog, "push", "--quiet", "origin", "main")
    _git(root, "clone", "--quiet", str(remote), str(desk))
    _git(desk, "config", "user.name", "a person")
    _git(desk, "config", "user.email", "person@gitpub.invalid")
    return remote, blog, desk, where


def _path(ctx: Context, job: Job) -> str:
    states = [e["to_state"] for e in jobs.events(ctx.store, job.job_id) if e["to_state"]]
    return " → ".join(states)


def _story(ctx: Context, job: Job, label: str) -> Job:
    final = jobs.require(ctx.store, job.job_id)
    steps = {e["step"] for e in jobs.events(ctx.store, job.job_id)}
    note = " (font-only conflict: subsets regenerated)" if "fonts:regenerated" in steps else ""
    say(f"  {label}: {_path(ctx, final)}{note}")
    return final


def main(target: Path | None) -> None:
    root = _scratch(target)
    (root / MARKER).write_text("made by git blogpub demo\n")
    remote, blog, desk, font = _scaffold(root)
    say(f"demo blog:    {blog}   (writer node A)")
    say(f"second clone: {desk}   (writer node B, and a person)")
    say(f"bare remote:  {remote}")
    say(f"source font:  {font}")
    say("")

    with _node("writer-a", blog) as a:
        first, _ = intake.submit(a, key="demo:durable", text=_article("durable"))
        worker.run_until_idle(a)
        say("1. node A publishes an article; its font subset is built and committed with it")
        first = _story(a, first, f"job {first.job_id[:8]}")

        # Node A prepares a second article and commits it locally, then node B publishes
        # first: both changed the font subset from the same base.
        second, _ = intake.submit(a, key="demo:fonts", text=_article("fonts"))
        update, _ = intake.submit(
            a,
            key="demo:durable-v2",
            text=_article("durable", "修改一处错字。"),
            target=first.target_path,
        )
        worker.run_until_idle(a, deliver=False)

    with _node("writer-b", desk) as b:
        _git(desk, "pull", "--quiet", "origin", "main")
        other, _ = intake.submit(b, key="demo:garden", text=_article("garden"))
        worker.run_until_idle(b)
        say("2. node B publishes a third article meanwhile (new characters, new subset)")
        _story(b, other, f"job {other.job_id[:8]}")
        # And a person fixes the first article by hand, after A's snapshot of it.
        _git(desk, "pull", "--quiet", "origin", "main")
        post = desk / (first.target_path or "")
        post.write_text(post.read_text("utf-8") + "加上一句。\n", encoding="utf-8")
        _git(desk, "commit", "--quiet", "-am", "a person edits the first article")
        _git(desk, "push", "--quiet", "origin", "main")

    with _node("writer-a", blog) as a:
        worker.run_until_idle(a)
        say("3. node A delivers its second article: the subsets conflict, gitpub regenerates")
        second = _story(a, second, f"job {second.job_id[:8]}")
        say("4. node A's update of the first article meets the person's edit: CONFLICT")
        update = _story(a, update, f"job {update.job_id[:8]}")
        say("")
        say(f"remote: {_count(remote)} commits on main; the person's edit is intact")
        say(f"look:   git -C {blog} blogpub status")
        say(f"        git -C {blog} blogpub show {update.job_id[:8]}")
        say(
            f"        resolve in {a.worktree_dir(update.job_id)}, then `git blogpub resolve "
            f"{update.job_id[:8]} --continue` (or --abandon)"
        )
    if second.state.value != "PUBLISHED" or update.state.value != "CONFLICT":
        raise InputError(
            f"demo did not go as designed ({second.state.value}, {update.state.value}); "
            f"see `git -C {blog} blogpub status`"
        )


def _count(remote: Path) -> int:
    out = run_git(["rev-list", "--count", "main"], remote).stdout
    return int(out.decode().strip())
