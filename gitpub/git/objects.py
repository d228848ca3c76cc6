"""Job commits made in memory: a base tree plus the job's blobs, written straight into the
object database.

No worktree, no index file, no HEAD: nothing a SIGKILL could leave half-made for the next
`git fetch` to trip over, and nothing taken from the person's git configuration (identity,
`commit.gpgsign`, hooks). A commit is signed only when `[publish] sign = true`, and then by
git itself (`git commit-tree -S`), so gpg, ssh and x509 signing set-ups all work."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pygit2

from gitpub.config import Config, split_ident
from gitpub.core.errors import GitCommandError, JobFault
from gitpub.core.ids import Oid
from gitpub.git.process import git_out, run_git
from gitpub.git.repo import Repo


def identity(cfg: Config) -> tuple[str, str]:
    """(name, email) of job commits: `[publish] author`, else gitpub at this node."""
    if cfg.publish.author:
        return split_ident(cfg.publish.author)
    host = "".join(c for c in cfg.node if c.isalnum() or c in "-._") or "local"
    return "gitpub", f"gitpub@{host}"


def ident_env(cfg: Config) -> dict[str, str]:
    """The job identity for a git command that makes commits (a rebase in a worktree)."""
    name, email = identity(cfg)
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def sign_args(cfg: Config) -> list[str]:
    """`-c commit.gpgSign=…` for a git command that commits: the repository's config decides
    nothing about job commits."""
    return ["-c", f"commit.gpgSign={'true' if cfg.publish.sign else 'false'}"]


def tree_with(repo: Repo, base_tree: str, files: Mapping[str, bytes]) -> Oid:
    """base_tree with each path set to its bytes (regular files), written to the odb.

    Only the trees on the written paths are read and written again, never the rest of the
    blog (a theme of thousands of files costs nothing), and never a blob: this works in a
    partial clone that has none."""
    pg = repo.pg
    return Oid(str(_tree_with(pg, pg[base_tree].peel(pygit2.Tree), files)))


Blob = bytes | tuple[pygit2.Oid, int]
"""A file to set: its bytes (a regular file), or an object already in the odb and its mode."""


def _tree_with(
    pg: pygit2.Repository, tree: pygit2.Tree | None, files: Mapping[str, Blob]
) -> pygit2.Oid:
    builder = pg.TreeBuilder(tree) if tree is not None else pg.TreeBuilder()
    below: dict[str, dict[str, Blob]] = {}
    for path, data in files.items():
        head, sep, rest = path.partition("/")
        if sep:
            below.setdefault(head, {})[rest] = data
        elif isinstance(data, bytes):
            builder.insert(head, pg.create_blob(data), pygit2.enums.FileMode.BLOB)
        else:
            builder.insert(head, *data)
    for name, inner in below.items():
        entry = tree[name] if tree is not None and name in tree else None
        subtree = (
            pg[entry.id].peel(pygit2.Tree)
            if entry is not None and entry.type_str == "tree"
            else None
        )
        builder.insert(name, _tree_with(pg, subtree, inner), pygit2.enums.FileMode.TREE)
    return builder.write()


def create_commit(
    cfg: Config,
    repo: Repo,
    tree: str,
    parents: Sequence[str],
    message: str,
    author: pygit2.Signature | None = None,
) -> Oid:
    """A commit object (no ref moves) with the job identity as committer."""
    name, email = identity(cfg)
    committer = pygit2.Signature(name, email)
    if cfg.publish.sign:
        return _signed(cfg, repo, tree, parents, message, author)
    oid = repo.pg.create_commit(
        None,
        author or committer,
        committer,
        message,
        pygit2.Oid(hex=tree),
        [pygit2.Oid(hex=p) for p in parents],
    )
    return Oid(str(oid))


def amend_from_index(
    cfg: Config, repo: Repo, worktree: Path, head: str, message: str, reason: str
) -> Oid:
    """`head`, the commit checked out in `worktree`, made again from the worktree's index with
    `message`: in memory like every job commit (its author kept, the job identity as
    committer), and HEAD moved to it provided HEAD is still `head`."""
    old = repo.commit(head)
    tree = git_out(["write-tree"], worktree)
    new = create_commit(cfg, repo, tree, [str(old.parent_ids[0])], message, author=old.author)
    run_git(["update-ref", "-m", reason, "HEAD", new, head], worktree)
    return new


def _signed(
    cfg: Config,
    repo: Repo,
    tree: str,
    parents: Sequence[str],
    message: str,
    author: pygit2.Signature | None,
) -> Oid:
    env = ident_env(cfg)
    if author is not None:
        env.update(
            GIT_AUTHOR_NAME=author.name,
            GIT_AUTHOR_EMAIL=author.email,
            GIT_AUTHOR_DATE=f"@{author.time} {_offset(author.offset)}",
        )
    args = ["commit-tree", tree, "-S", "-F", "-"]
    for p in parents:
        args += ["-p", p]
    proc = run_git(args, repo.root, check=False, input=message.encode("utf-8"), env=env)
    if proc.returncode != 0:
        raise JobFault(
            "sign_failed",
            "signing the job commit failed",
            proc.stderr.decode("utf-8", "replace"),
        )
    return Oid(proc.stdout.decode().strip())


def _offset(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def based_on(repo: Repo, commit: str, onto: str) -> bool:
    """Whether `onto` is the commit's one parent: replaying it there gives the commit itself."""
    return [str(p) for p in repo.pg[commit].peel(pygit2.Commit).parent_ids] == [onto]


def cherry_pick(cfg: Config, repo: Repo, commit: str, onto: str) -> tuple[Oid | None, list[str]]:
    """The one-commit job replayed onto `onto`, in memory: (new commit, []) or (None, the
    conflicting paths). Like `git rebase` of a single commit, with no worktree and no index
    file. Rename detection is off: it would read blobs a partial clone does not have, and a
    job writes only its own paths."""
    if based_on(repo, commit, onto):
        return Oid(commit), []
    pg = repo.pg
    job = pg[commit].peel(pygit2.Commit)
    parent = job.parents[0]
    tip = pg[onto].peel(pygit2.Commit).tree
    tree = _plain_replay(pg, parent.tree, job.tree, tip)
    if tree is None:
        index = pg.merge_trees(parent.tree, tip, job.tree, flags=pygit2.enums.MergeFlag(0))
        if index.conflicts is not None:
            paths = set()
            for ancestor, ours, theirs in index.conflicts:
                for side in (ancestor, ours, theirs):
                    if side is not None:
                        paths.add(side.path)
            return None, sorted(paths)
        tree = index.write_tree(pg)
    return create_commit(cfg, repo, str(tree), [onto], job.message, author=job.author), []


_FILE_MODES = (
    pygit2.enums.FileMode.BLOB,
    pygit2.enums.FileMode.BLOB_EXECUTABLE,
    pygit2.enums.FileMode.LINK,
)


def _plain_replay(
    pg: pygit2.Repository, parent: pygit2.Tree, job: pygit2.Tree, tip: pygit2.Tree
) -> pygit2.Oid | None:
    """The three-way merge's tree when the answer is plain, else None (merge in full).

    Plain: the job only adds or changes files, and at each of its paths the tip has what
    the job's parent had (no folder in the way either). The merge is then the tip with the
    job's files set, built along those paths alone: a blog's whole tree is not read and
    written again for every job of a batch."""
    files: dict[str, Blob] = {}
    for delta in parent.diff_to_tree(job).deltas:
        new = delta.new_file
        if delta.status_char() not in "AM" or new.mode not in _FILE_MODES:
            return None
        if _entry(tip, new.path) != _entry(parent, new.path) or not _folders(tip, new.path):
            return None
        files[new.path] = (new.id, new.mode)
    return _tree_with(pg, tip, files)


def _entry(tree: pygit2.Tree, path: str) -> tuple[pygit2.Oid, int] | None:
    try:
        obj = tree[path]
    except KeyError:
        return None
    return obj.id, obj.filemode


def _folders(tree: pygit2.Tree, path: str) -> bool:
    """Whether every folder on the way to `path` is a folder in `tree`, or absent."""
    node = tree
    for part in path.split("/")[:-1]:
        if part not in node:
            return True
        child = node / part
        if not isinstance(child, pygit2.Tree):
            return False
        node = child
    return True


def obstruction(repo: Repo, commit: str, path: str) -> tuple[str, str] | None:
    """(the folder on the way to `path`, what it is in `commit`'s tree) when that is not a
    folder: a "submodule" (a gitlink: a file written below it replaces the submodule), a
    "file" or a "symlink"; None when every folder on the way is one, or absent."""
    node = repo.pg[commit].peel(pygit2.Tree)
    parts = path.split("/")
    for depth, part in enumerate(parts[:-1], start=1):
        if part not in node:
            return None
        entry = node[part]
        if entry.filemode == pygit2.enums.FileMode.COMMIT:
            return "/".join(parts[:depth]), "submodule"
        if entry.filemode == pygit2.enums.FileMode.LINK:
            return "/".join(parts[:depth]), "symlink"
        if entry.type_str != "tree":
            return "/".join(parts[:depth]), "file"
        node = repo.pg[entry.id].peel(pygit2.Tree)
    return None


def missing(repo: Repo, oids: Iterable[str]) -> list[str]:
    """Which of these objects the repository does not have, as git itself sees it now.

    Asked of git, not of pygit2, whose object cache remembers what a `git gc --prune=now`
    may have removed since."""
    wanted = [o for o in dict.fromkeys(oids) if o]
    if not wanted:
        return []
    proc = run_git(
        ["cat-file", "--batch-check"],
        repo.root,
        check=False,
        input=("\n".join(wanted) + "\n").encode(),
        env={"GIT_NO_LAZY_FETCH": "1"},
    )
    gone = []
    for oid, line in zip(wanted, proc.stdout.decode("utf-8", "replace").splitlines(), strict=False):
        if line.endswith(" missing"):
            gone.append(oid)
    return gone


def closure(repo: Repo, commit: str, paths: Iterable[str]) -> list[str]:
    """The objects a job commit needs locally: itself, its tree, the trees down to each of
    its paths and the blobs at them (a partial clone may lack every other blob)."""
    out = [commit]
    try:
        tree = repo.pg[commit].peel(pygit2.Commit).tree
    except (KeyError, ValueError, pygit2.GitError):
        return out
    out.append(str(tree.id))
    for path in paths:
        node: pygit2.Object = tree
        for part in path.split("/"):
            if not isinstance(node, pygit2.Tree) or part not in node:
                break
            entry = node[part]
            out.append(str(entry.id))
            try:
                node = repo.pg[entry.id] if entry.type_str == "tree" else entry
            except (KeyError, ValueError, pygit2.GitError):
                break
    return out


def point_refs(repo: Repo, refs: Mapping[str, str], reason: str) -> None:
    """Move several refs at once, all or none (one `update-ref --stdin` transaction)."""
    lines = "".join(f"update {ref} {oid}\n" for ref, oid in refs.items())
    try:
        run_git(["update-ref", "-m", reason, "--stdin"], repo.root, input=lines.encode())
    except GitCommandError as exc:
        raise JobFault("ref_refused", "updating the job refs failed", exc.stderr) from None
