"""Everything one gitpub process needs about one repository, opened once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitpub import config as config_mod
from gitpub.config import Config
from gitpub.errors import GitpubError
from gitpub.gitrepo import Repo
from gitpub.locks import Locks
from gitpub.store import Store


@dataclass
class Context:
    repo: Repo
    config: Config
    store: Store
    locks: Locks

    @property
    def state_dir(self) -> Path:
        return self.repo.state_dir

    def job_dir(self, job_id: str) -> Path:
        return self.state_dir / "jobs" / job_id

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


def open_context(path: Path, *, need_remote: bool = True) -> Context:
    """Discover the repository at or above path, load its config and open its store."""
    repo = Repo.discover(path)
    cfg = config_mod.load(repo.root)
    if need_remote and not repo.has_remote(cfg.publish.remote):
        raise GitpubError(
            f"{repo.root}: no remote named {cfg.publish.remote!r} "
            f"(set publish.remote in {config_mod.CONFIG_NAME} or `git remote add`)"
        )
    state = repo.state_dir
    store = Store(state / "state.sqlite3")
    return Context(repo=repo, config=cfg, store=store, locks=Locks(state / "locks"))
