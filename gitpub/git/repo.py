"""Repository access: pygit2 for reads, the git executable for everything that touches a
remote, a worktree or a rebase, so the user's credential helpers, ssh config and hooks work."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Literal, NamedTuple

from gitpub.core.errors import GitCommandError, NotARepository
from gitpub.core.ids import Oid
from gitpub.git.process import git_env, git_out, run_git
from gitpub.git.treefiles import TreeFiles

if TYPE_CHECKING:
    import pygit2


def _pygit2() -> ModuleType:
    """pygit2, imported on first use: importing it costs more than the whole of `submit` or
    `status`, which find the repository and read no git object."""
    import pygit2

    return pygit2


LET_GO_HISTORY = 200
"""Values of a remote-tracking ref `Repo.let_go` looks at: a takedown is noticed within that
many fetches."""


class PushResult(NamedTuple):
    ok: bool
    rejected_non_ff: bool
    stderr: str
    marked: bool = False  # the push created its `marks` too, atomically with the branch


class Repo:
    """The live checkout of a blog repository and its shared git directory."""

    def __init__(self, root: Path, common_dir: Path | None = None) -> None:
        self.root = root
        self._pg: pygit2.Repository | None = None
        # The last `files_under` answer: a batch prepares every job on one base commit.
        self._files: tuple[tuple[str, tuple[str, ...]], TreeFiles] | None = None
        self.fetched_at = 0.0  # time.monotonic() of this process's last fetch of a branch
        if common_dir is None:
            found = _find_checkout(root)
            if found is not None and found[0] == root.resolve():
                common_dir = found[1]
            else:
                common_dir = Path(self.pg.path).resolve()
                # A linked worktree's .git points at worktrees/<name>; the common dir is the
                # parent's.
                commondir_file = common_dir / "commondir"
                if commondir_file.exists():
                    common_dir = (common_dir / commondir_file.read_text().strip()).resolve()
        self.common_dir = common_dir

    @property
    def pg(self) -> pygit2.Repository:
        """The pygit2 handle, opened on first use (commands that read no object never pay)."""
        if self._pg is None:
            try:
                self._pg = _pygit2().Repository(str(self.root))
            except _pygit2().GitError as exc:
                raise NotARepository(_unusable(self.root, exc)) from None
        return self._pg

    @classmethod
    def discover(cls, start: Path) -> Repo:
        found = _find_checkout(start)
        if found is not None:
            return cls(found[0], found[1])
        # Anything out of the ordinary (GIT_DIR, a bare repository, core.worktree, no
        # repository at all): libgit2's discovery decides, and the error says which.
        try:
            where = _pygit2().discover_repository(str(start))
        except _pygit2().GitError:
            where = None
        if not where:
            raise NotARepository(f"{start}: not inside a git repository")
        try:
            repo = _pygit2().Repository(where)
        except _pygit2().GitError as exc:
            raise NotARepository(_unusable(Path(where), exc)) from None
        if repo.is_bare or repo.workdir is None:
            raise NotARepository(f"{start}: a bare repository has no checkout to publish from")
        return cls(Path(repo.workdir).resolve())

    @property
    def state_dir(self) -> Path:
        return self.common_dir / "blogpub"

    # ------------------------------------------------------------------ reads (pygit2)

    def resolve(self, ref: str) -> Oid | None:
        try:
            return Oid(str(self.pg.revparse_single(ref).peel(_pygit2().Commit).id))
        except (KeyError, ValueError, _pygit2().GitError):
            return None

    def has_remote(self, name: str) -> bool:
        # The repository's own config file names its remotes in nearly every clone; git's
        # other config files (includes, the global one) need libgit2 to read.
        try:
            text = (self.common_dir / "config").read_text("utf-8", "replace")
        except OSError:
            text = ""
        if re.search(rf'^\s*\[remote\s+"{re.escape(name)}"\s*\]', text, re.MULTILINE):
            return True
        return name in self.pg.remotes.names()

    def remote_url(self, name: str) -> str | None:
        try:
            url: str | None = self.pg.remotes[name].url
        except (KeyError, ValueError, _pygit2().GitError):
            return None
        return url

    def tracking_ref(self, remote: str, branch: str) -> str:
        return f"refs/remotes/{remote}/{branch}"

    def commit(self, oid: str) -> pygit2.Commit:
        commit: pygit2.Commit = self.pg[oid].peel(_pygit2().Commit)
        return commit

    def trailers(self, oid: str) -> dict[str, str]:
        try:
            return dict(self.commit(oid).message_trailers)
        except (KeyError, ValueError, _pygit2().GitError):
            return {}

    def walk(self, tip: str, hide: Iterable[str] = ()) -> Iterator[pygit2.Commit]:
        """Commits reachable from tip and not from any of hide, newest first."""
        walker = self.pg.walk(_pygit2().Oid(hex=tip), _pygit2().enums.SortMode.TOPOLOGICAL)
        for h in hide:
            with contextlib.suppress(KeyError, ValueError, _pygit2().GitError):
                walker.hide(_pygit2().Oid(hex=h))  # an unknown commit hides nothing
        yield from walker

    def find_by_trailers(
        self, tip: str, hide: Iterable[str], wanted: Mapping[str, str]
    ) -> Oid | None:
        """The newest commit in tip's history (minus hide) whose trailers include `wanted`."""
        for commit in self.walk(tip, hide):
            trailers = commit.message_trailers
            if all(trailers.get(k) == v for k, v in wanted.items()):
                return Oid(str(commit.id))
        return None

    def blob_at(self, commit: str, path: str) -> bytes | None:
        try:
            entry = self.commit(commit).tree[path]
        except (KeyError, ValueError):
            return None
        if entry.type_str != "blob":
            return None
        return self.blobs([str(entry.id)])[str(entry.id)]

    def blobs(self, oids: Iterable[str]) -> dict[str, bytes]:
        """Blob contents by id. Those pygit2 cannot see — a partial clone fetches blobs only
        when asked — are read through git, which fetches them from the promisor remote."""
        out: dict[str, bytes] = {}
        absent = []
        for oid in oids:
            try:
                out[oid] = self.pg[oid].peel(_pygit2().Blob).data
            except (KeyError, ValueError, _pygit2().GitError):
                absent.append(oid)
        if absent:
            out.update(_cat_blobs(self.root, absent))
        return out

    def files_under(self, commit: str, folders: Sequence[str]) -> TreeFiles:
        """Every blob below the given folders at commit, by repository-relative path, each
        read when first looked up (`TreeFiles`). The last answer is kept (a commit never
        changes), so the jobs of a batch, all built on one base, share what it read."""
        found = self.commit(commit)
        asked = (str(found.id), tuple(folders))  # by commit id: a ref name could move
        if self._files is not None and self._files[0] == asked:
            return self._files[1]
        oids: dict[str, str] = {}
        tree = found.tree
        for folder in folders:
            try:
                sub = tree[folder] if folder else tree
            except KeyError:
                continue
            if isinstance(sub, _pygit2().Tree):
                self._walk_tree(sub, folder, oids)
        files = TreeFiles(oids, self.blobs)
        self._files = (asked, files)
        return files

    def _walk_tree(self, tree: pygit2.Tree, prefix: str, found: dict[str, str]) -> None:
        for entry in tree:
            name = str(entry.name)
            path = f"{prefix}/{name}" if prefix else name
            if entry.type_str == "tree":
                self._walk_tree(self.pg[entry.id].peel(_pygit2().Tree), path, found)
            elif entry.type_str == "blob":
                found[path] = str(entry.id)

    def changed_paths(self, old: str, new: str) -> list[str]:
        diff = self.commit(old).tree.diff_to_tree(self.commit(new).tree)
        paths = set()
        for delta in diff.deltas:
            paths.add(delta.old_file.path)
            paths.add(delta.new_file.path)
        return sorted(paths)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if ancestor == descendant:
            return True
        return bool(
            self.pg.descendant_of(_pygit2().Oid(hex=descendant), _pygit2().Oid(hex=ancestor))
        )

    def reachable(self, tip: str, wanted: Iterable[str]) -> set[str]:
        """Which of `wanted` (commit ids) are `tip` or its ancestors, in one walk that stops
        once all are found: asking `is_ancestor` of each walks the history once per commit."""
        left = set(wanted)
        found: set[str] = set()
        if not left:
            return found
        # Unsorted, from the tip itself: a topological order would read the whole history
        # before the first commit.
        for commit in self.pg.walk(_pygit2().Oid(hex=tip), _pygit2().enums.SortMode.NONE):
            oid = str(commit.id)
            if oid in left:
                found.add(oid)
                left.discard(oid)
                if not left:
                    break
        return found

    def let_go(self, ref: str, tip: str, history: int = LET_GO_HISTORY) -> set[str]:
        """The commits `ref` held at an earlier value (its last `history` reflog entries) that
        `tip` no longer holds: what a force-push or a reset took off the branch `ref` tracks.
        Empty at once, with no walk, when every earlier value is in `tip`'s history."""
        out = git_out(
            ["reflog", "show", f"-n{history}", "--format=%H", ref, "--"], self.root, check=False
        )
        seen = dict.fromkeys(line for line in out.split() if line)
        left = [o for o in seen if o != tip and not self.is_ancestor(o, tip)]
        if not left:
            return set()
        # A value whose objects `gc` pruned is passed over.
        return set(
            git_out(["rev-list", "--ignore-missing", *left, "--not", tip], self.root).split()
        )

    def current_branch(self) -> str | None:
        if self.pg.head_is_detached or self.pg.head_is_unborn:
            return None
        return str(self.pg.head.shorthand)

    # ----------------------------------------------------------- writes (git executable)

    def git(self, *args: str, cwd: Path | None = None, check: bool = True) -> str:
        return git_out(args, cwd or self.root, check=check)

    def update_ref(self, ref: str, new: str, old: str | None, reason: str) -> None:
        """Compare-and-swap: moves ref to new only if it still points at old ('' = absent)."""
        args = ["update-ref", "-m", reason, ref, new]
        if old is not None:
            args.append(old or "0" * 40)
        run_git(args, self.root)

    def delete_ref(self, ref: str, reason: str) -> None:
        run_git(["update-ref", "-m", reason, "-d", ref], self.root)

    def fetch(self, remote: str, branch: str, cwd: Path | None = None) -> None:
        spec = f"+refs/heads/{branch}:{self.tracking_ref(remote, branch)}"
        run_git(["fetch", "--quiet", "--no-tags", remote, spec], cwd or self.root)
        self.fetched_at = time.monotonic()

    def fetch_commit(self, remote: str, oid: str) -> None:
        """Bring one commit (and what it needs) from the remote, moving no ref: a base
        another node prepared on, which this clone never fetched."""
        run_git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, oid], self.root)

    def push(
        self,
        remote: str,
        src: str,
        branch: str,
        cwd: Path | None = None,
        *,
        expect: str | None = None,
        marks: Mapping[str, str] | None = None,
    ) -> PushResult:
        """Push `src` to `branch`. With `expect` (a commit id, or "" for "absent") the push
        replaces whatever the branch holds provided it is still `expect`: a compare-and-swap
        for branches gitpub owns alone (review branches), never for the published one.

        `marks` (ref -> object) are created in the same atomic push, each only where the
        remote has no such ref yet: all land with the branch, or nothing does. A remote that
        cannot push atomically gets the branch alone (`marked` says which happened)."""
        lease = [] if expect is None else [f"--force-with-lease=refs/heads/{branch}:{expect}"]
        spec = f"{src}:refs/heads/{branch}"
        if marks:
            # Without --force a ref that exists is never overwritten by an unrelated commit.
            extra = [f"{oid}:{name}" for name, oid in marks.items()]
            proc = self._push(["--atomic", *lease, remote, spec, *extra], cwd)
            if b"does not support --atomic" not in proc.stderr:
                return _push_result(proc, marked=True)
        return _push_result(self._push([*lease, remote, spec], cwd))

    def delete_remote(self, remote: str, expected: Mapping[str, str]) -> bool:
        """Delete these refs on the remote, each only if it still holds its expected value
        (not atomically: each goes or stays on its own); whether all went."""
        leases = [f"--force-with-lease={name}:{oid}" for name, oid in expected.items()]
        return self._push([*leases, remote, *[f":{n}" for n in expected]], None).returncode == 0

    def _push(self, args: list[str], cwd: Path | None) -> subprocess.CompletedProcess[bytes]:
        return run_git(["push", "--porcelain", *args], cwd or self.root, check=False)

    def is_clean(self, cwd: Path | None = None) -> bool:
        return git_out(["status", "--porcelain", "--untracked-files=no"], cwd or self.root) == ""


def _push_result(proc: subprocess.CompletedProcess[bytes], marked: bool = False) -> PushResult:
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    rejected = proc.returncode != 0 and (
        "non-fast-forward" in out or "fetch first" in out or "[rejected]" in out
    )
    return PushResult(proc.returncode == 0, rejected, out.strip(), marked and proc.returncode == 0)


def _unusable(where: Path, exc: Exception) -> str:
    """Why pygit2 cannot open a repository, in one line a person can act on."""
    proc = subprocess.run(
        ["git", "rev-parse", "--show-object-format"],
        cwd=where if where.is_dir() else where.parent,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    if proc.stdout.decode().strip() == "sha256":
        return (
            f"{where}: a SHA-256 repository (extensions.objectformat = sha256); "
            "gitpub serves SHA-1 repositories only"
        )
    return f"{where}: cannot open the repository: {exc}"


def _cat_blobs(root: Path, oids: Sequence[str]) -> dict[str, bytes]:
    proc = run_git(["cat-file", "--batch"], root, input=("\n".join(oids) + "\n").encode())
    out, data, pos = {}, proc.stdout, 0
    for oid in oids:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode().split()
        if len(header) < 3 or header[1] != "blob":
            raise GitCommandError(["git", "cat-file", "--batch"], 1, f"fatal: bad object {oid}")
        size = int(header[2])
        out[oid] = data[end + 1 : end + 1 + size]
        pos = end + 1 + size + 1
    return out


def _find_checkout(start: Path) -> tuple[Path, Path] | None:
    """(worktree root, common git dir) of the checkout at or above start, found the way git
    finds it in the ordinary case: the nearest `.git` folder, or `.git` file naming one (a
    linked worktree, whose `commondir` leads to the shared folder). None for anything else,
    which `Repo.discover` leaves to libgit2."""
    if any(v in os.environ for v in ("GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES")):
        return None
    try:
        here = start.resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            gitdir = dot
        elif dot.is_file():
            try:
                line = dot.read_text("utf-8").strip()
            except OSError:
                return None
            if not line.startswith("gitdir: "):
                return None
            gitdir = (folder / line[len("gitdir: ") :]).resolve()
        else:
            continue
        if not (gitdir / "HEAD").is_file():
            return None
        common = gitdir
        with contextlib.suppress(OSError):
            common = (gitdir / (gitdir / "commondir").read_text("utf-8").strip()).resolve()
        try:
            config = (common / "config").read_text("utf-8", "replace")
        except OSError:
            return None
        if re.search(r"^\s*(worktree|bare\s*=\s*true)", config, re.MULTILINE | re.IGNORECASE):
            return None
        if re.search(r"^\s*objectformat\s*=\s*sha256", config, re.MULTILINE | re.IGNORECASE):
            return None  # libgit2 refuses it; Repo.discover then says why in one line
        return folder, common
    return None


# ------------------------------------------------ read helpers for external_sync and the hooks


def merge_base(repo: Repo, a: str, b: str) -> Oid | None:
    """The best common ancestor of two commits, or None when they share no history."""
    try:
        found = repo.pg.merge_base(_pygit2().Oid(hex=a), _pygit2().Oid(hex=b))
    except (KeyError, ValueError, _pygit2().GitError):
        return None
    return Oid(str(found)) if found else None


Operation = Literal["rebase", "merge", "cherry-pick", "revert", "bisect"]

# The file git leaves in a checkout's git folder while each operation is stopped half-way
# (libgit2's `git_repository_state` reads the same ones). `git am` shares the rebase's folder.
_UNDER_WAY: tuple[tuple[Operation, str], ...] = (
    ("rebase", "rebase-merge"),
    ("rebase", "rebase-apply"),
    ("merge", "MERGE_HEAD"),
    ("revert", "REVERT_HEAD"),
    ("cherry-pick", "CHERRY_PICK_HEAD"),
    ("bisect", "BISECT_LOG"),
)


def in_progress(cwd: Path, *operations: Operation) -> Operation | None:
    """Which operation (of `operations`; of any when none is named) is under way in the
    checkout at `cwd` — its index and HEAD belong to whoever started it — or None.

    Asked of the files git itself reads, where git keeps them for this checkout (a linked
    worktree has its own), at the moment of asking: never of a cache."""
    marks = [(op, name) for op, name in _UNDER_WAY if not operations or op in operations]
    args = [arg for _, name in marks for arg in ("--git-path", name)]
    where = git_out(["rev-parse", *args], cwd).splitlines()
    for (op, _), path in zip(marks, where, strict=True):
        if (cwd / path).exists():
            return op
    return None


def unmerged_paths(cwd: Path) -> list[str]:
    """Paths left unmerged by a stopped merge, rebase or cherry-pick in the checkout at cwd."""
    out = run_git(["diff", "--name-only", "-z", "--diff-filter=U"], cwd, check=False).stdout
    return sorted({p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p})


def config_value(repo: Repo, key: str, *, path: bool = False) -> str | None:
    """One git config value as git itself resolves it (includes, global file, `~`)."""
    args = ["config", "--get", key] if not path else ["config", "--type=path", "--get", key]
    proc = run_git(args, repo.root, check=False)
    value = proc.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    return value if proc.returncode == 0 and value else None
