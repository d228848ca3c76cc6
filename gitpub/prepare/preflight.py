"""What stops a job before any step runs, asked the same way by `run` (prepare), `dry-run`
and `doctor`, so none of them promises what another refuses:

- `branch_problem`: the configured remote and branch must exist — on the remote, not only
  in this clone (a blog on `master` whose config says `main` would build on nothing);
- `placement_problems`: every font output must be a path git can hold in a commit of the
  blog: not below a submodule (the commit would replace the submodule, a deletion the write
  set refuses), a file or a symlink, and not in a folder `.gitignore` leaves out (a build's
  output folder, which the site build replaces)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitpub.config import CONFIG_NAME, Config, PublishConfig
from gitpub.context import Context
from gitpub.core.ids import Oid
from gitpub.git import objects, remotes
from gitpub.git.process import run_git
from gitpub.git.repo import Repo


@dataclass(frozen=True)
class Problem:
    what: str  # what is wrong, naming the key, path or branch
    fix: str  # the command or setting that puts it right

    def __str__(self) -> str:
        return f"{self.what}: {self.fix}"


def base(ctx: Context, fetch: Callable[[], Oid | None]) -> tuple[Oid | None, str | None]:
    """The commit a new job builds on, or why there is none (with the fix).

    What the remote had at our last fetch: the job commit then carries only the job's own
    change, never unpushed hand edits of the live checkout. Never a local branch the remote
    lacks: a job built on it could be committed but never delivered. A branch the remote
    holds that this clone never fetched is fetched (`fetch`)."""
    found = ctx.repo.resolve(ctx.tracking_ref)
    if found is not None:
        return found, None
    problem = branch_problem(ctx.repo, ctx.config.publish)
    return (None, str(problem)) if problem else (fetch(), None)


def branch_problem(repo: Repo, pub: PublishConfig) -> Problem | None:
    """Why jobs have no remote branch to build on; None when they have one."""
    if not repo.has_remote(pub.remote):
        return Problem(
            f"no remote named {pub.remote!r}",
            f"`git remote add {pub.remote} URL`, or set publish.remote in {CONFIG_NAME}",
        )
    asked = remotes.heads(repo, pub.remote)
    tracked = repo.resolve(repo.tracking_ref(pub.remote, pub.branch)) is not None
    if asked is None and tracked:
        return None  # the remote cannot be asked now; the last fetch had the branch
    heads = asked if asked is not None else remotes.last_fetched(repo, pub.remote)
    if pub.branch in heads.branches:
        return None
    if not heads.branches:
        return Problem(
            f"remote {pub.remote!r} has no branch yet (an empty repository)",
            f"commit the blog and push it first: git push {pub.remote} HEAD:{pub.branch}",
        )
    default = heads.default or sorted(heads.branches)[0]
    others = ", ".join(sorted(heads.branches)[:5])
    return Problem(
        f"branch {pub.branch!r} does not exist on remote {pub.remote!r} (its default branch "
        f"is {default!r}; it has {others})",
        f"set publish.branch = {default!r} in {CONFIG_NAME}",
    )


def placement_problems(repo: Repo, base: str | None, cfg: Config) -> list[Problem]:
    """Each font output git cannot hold where the config puts it."""
    outputs = _outputs(cfg)
    out = []
    if base is not None:
        for path in outputs:
            found = objects.obstruction(repo, base, path)
            if found is not None:
                folder, kind = found
                out.append(Problem(f"{_key(cfg)} {path} lies inside {kind} {folder!r}", _FIX[kind]))
    for path, rule in ignored(repo, outputs).items():
        out.append(
            Problem(
                f"{_key(cfg)} {path} is ignored by {rule}, like a build's output, which the "
                "site build replaces",
                "put the subsets in a folder the generator copies as it is (Hugo's static/, "
                "Astro's or VitePress's public/, Hexo's source/)",
            )
        )
    return out


_FIX = {
    "submodule": "a commit there would replace the submodule; put the subsets in a folder "
    "of the blog's own repository",
    "file": "a folder cannot be made there; choose another folder",
    "symlink": "git stores the link, not a folder; choose the folder it points to",
}


def _key(cfg: Config) -> str:
    return "fonts.chunked" if cfg.fonts is not None and cfg.fonts.chunked else "fonts.outputs"


def _outputs(cfg: Config) -> Sequence[str]:
    if cfg.fonts is not None and cfg.fonts.chunked is not None:
        from gitpub.config.slices import CSS_NAME

        return (f"{cfg.fonts.chunked}/{CSS_NAME}",)  # every chunk sits beside it
    return cfg.font_outputs


def ignored(repo: Repo, paths: Sequence[str]) -> dict[str, str]:
    """path → the rule that ignores it ("`.gitignore:3` ('public/')"), for each of `paths`
    the repository's ignore rules leave out, tracked or not."""
    if not paths:
        return {}
    proc = run_git(
        ["check-ignore", "--verbose", "--no-index", "--stdin", "-z"],
        repo.root,
        check=False,
        input=b"\0".join(p.encode("utf-8") for p in paths) + b"\0",
    )
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    found = {}
    for i in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[i : i + 4]
        if source and not pattern.startswith("!"):
            found[path] = f"`{source}:{line}` ({pattern!r})"
    return found
