"""Everything one gitpub process needs about one repository, opened once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gitpub import config as config_mod
from gitpub.config import Config
from gitpub.core import clock
from gitpub.core.errors import GitpubError
from gitpub.core.files import write_atomic
from gitpub.git.locks import Locks
from gitpub.git.repo import Repo
from gitpub.store import lost
from gitpub.store.db import SqliteStore, Store, database_file
from gitpub.store.errors import Unavailable

if TYPE_CHECKING:
    from gitpub.core.throttle import Throttle
    from gitpub.store.pg import PgStore


class Context:
    # A plain class: a dataclass would cost every command ~0.5 ms to create at start-up.
    def __init__(self, repo: Repo, config: Config, store: Store, locks: Locks) -> None:
        self.repo = repo
        self.config = config
        self.store = store
        self.locks = locks
        # What a room keeps from one job to the next for this repository (the similarity
        # judge's 3-grams, sealed articles already read): gone with the Context, never shared
        # by two repositories in one long-lived process. Its `sibling`s share it: a memo is
        # touched by one thread at a time (the crew's judges take turns, delivery runs with
        # the crew idle), and one holding a connection keeps one per thread.
        self.memos: dict[str, object] = {}
        self._throttle: Throttle | None = None

    @property
    def throttle(self) -> Throttle:
        """What holds this worker's external steps to `[steps] concurrency` and `rate`: one
        for the Context and every `sibling` of it. Made on first use: `submit` and `status`
        run no step and import no `threading`."""
        if self._throttle is None:
            from gitpub.core.throttle import Throttle

            self._throttle = Throttle()
        return self._throttle

    @property
    def state_dir(self) -> Path:
        return self.repo.state_dir

    def job_dir(self, job_id: str) -> Path:
        return self.store.job_dir(job_id)

    def worktree_dir(self, job_id: str) -> Path:
        return self.state_dir / "worktrees" / job_id

    @property
    def tracking_ref(self) -> str:
        p = self.config.publish
        return self.repo.tracking_ref(p.remote, p.branch)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


M = TypeVar("M")


def memo(memos: dict[str, object], kind: type[M]) -> M:
    """The memo of class `kind` in a Context's `memos`, made on first use (one per kind)."""
    found = memos.get(kind.__qualname__)
    if found is None:
        found = memos.setdefault(kind.__qualname__, kind())  # two threads: one memo wins
    if not isinstance(found, kind):
        found = memos[kind.__qualname__] = kind()
    return found


def open_context(path: Path, *, need_remote: bool = True, cfg: Config | None = None) -> Context:
    """Discover the repository at or above path, load its config (unless the caller already
    did: `cfg`) and open its store."""
    clock.skew()  # a clock that reads nonsense stops the command before it claims anything
    repo = Repo.discover(path)
    if cfg is None:
        cfg = config_mod.load(repo.root)
    assert cfg.root == repo.root, (cfg.root, repo.root)
    if need_remote:
        require_remote(repo, cfg)
    state = repo.state_dir
    store = open_shared(repo, cfg) if cfg.store_url is not None else open_store(state)
    fleet = store.fleet if store.shared else None
    return Context(repo=repo, config=cfg, store=store, locks=Locks(state / "locks", fleet))


def sibling(ctx: Context) -> Context:
    """The same repository, config, locks and throttle on connections of its own, for another
    thread: a store connection (and a pygit2 handle) is never shared between threads. Open it
    in the thread that uses it, and close it there."""
    repo = Repo(ctx.repo.root, ctx.repo.common_dir)
    cfg = ctx.config
    store = ctx.store.twin() if ctx.store.shared else open_store(repo.state_dir)
    fleet = store.fleet if store.shared else None
    twin = Context(repo=repo, config=cfg, store=store, locks=Locks(ctx.locks.dir, fleet))
    twin._throttle = ctx.throttle
    twin.memos = ctx.memos  # a judge meets the articles the crew's other threads judged
    return twin


def require_remote(repo: Repo, cfg: Config) -> None:
    """Refuse, as every command that publishes does, a repository without the remote."""
    if not repo.has_remote(cfg.publish.remote):
        raise GitpubError(
            f"{repo.root}: no remote named {cfg.publish.remote!r} "
            f"(set publish.remote in {config_mod.CONFIG_NAME} or `git remote add`)"
        )


def open_shared(repo: Repo, cfg: Config) -> PgStore:
    """The node's shared store, scoped to this blog (its remote's URL and branch)."""
    from gitpub.store.blogs import blog_of
    from gitpub.store.pg import PgStore

    assert cfg.store_url is not None
    url = repo.remote_url(cfg.publish.remote)
    if url is None:
        raise GitpubError(
            f"{repo.root}: a shared store names the blog by its remote's URL, and remote "
            f"{cfg.publish.remote!r} has none"
        )
    from gitpub.git.remoteurl import anchored

    blog = blog_of(anchored(url, str(repo.root)), cfg.publish.branch)
    store = PgStore(cfg.store_url, repo.state_dir, blog)
    store.lock_seconds = min(cfg.retry.lease_seconds, 60.0)
    store.clone = _clone_id(repo.state_dir)
    return store


def _clone_id(state: Path) -> str:
    """This clone's id among the nodes of a shared store, made on first use."""
    path = state / "clone-id"
    try:
        return path.read_text("ascii").strip()
    except OSError:
        import uuid

        write_atomic(path, uuid.uuid4().hex.encode("ascii"))
        return path.read_text("ascii").strip()


def no_store_yet(path: Path) -> bool:
    """Whether a read finds no job because this node never stored one: reading must not
    create. (A database missing beside job folders is not that: it was lost. A shared store
    always exists.)"""
    if config_mod.node_store_url() is not None:
        return False
    state = Repo.discover(path).state_dir
    lost.check_absent(state)
    return not database_file(state).exists()


def open_store(state: Path) -> Store:
    """The job database, unless it was lost beside job folders that outlived it (see
    gitpub.store.lost): then every command stops with the fix, rather than read an empty store."""
    lost.check_absent(state)
    try:
        store = SqliteStore(database_file(state))
    except Unavailable:
        raise  # the disk or the filesystem, not the database: never "lost"
    except GitpubError as exc:
        why = lost.why_lost(state, None)
        if why:
            raise lost.DatabaseLost(f"{why}; {exc.message}") from None
        raise
    try:
        lost.check(state, store.conn)
    except BaseException:
        store.close()
        raise
    return store
