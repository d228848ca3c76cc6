"""The articles this node's earlier jobs are still delivering.

Jobs ready together are delivered together, each prepared on the same snapshot of the remote,
so a job cannot find a duplicate that an earlier job of the same batch brings in the remote
branch. The prepare judge counts those articles as the blog's: two submissions of one text
under two keys end as one PUBLISHED and one SKIPPED, as they do when delivered one by one."""

from __future__ import annotations

from pathlib import Path

from gitpub.context import Context, memo
from gitpub.core.states import State
from gitpub.store import reads
from gitpub.store.jobs import Job

ON_THE_WAY = (
    State.READY_TO_COMMIT,
    State.LOCAL_COMMITTING,
    State.LOCAL_COMMITTED,
    State.PUSHING,
    State.RECHECK_CANDIDATES,
    State.RETRY_WAIT,
)


class _Sealed:
    """Articles read from sealed artifact folders. A batch of n jobs reads each earlier
    job's article n times over otherwise. Sealed artifacts do not change; a job prepared
    again may seal other bytes into its folder, so the key holds the manifest's hash. Bounded
    by bytes: it starts over when full."""

    MAX_BYTES = 32 << 20

    def __init__(self) -> None:
        self.data: dict[tuple[str, str | None, str], bytes] = {}
        self.size = 0

    def read(self, root: Path, folder: str, sealed: str | None, path: str) -> bytes:
        key = (folder, sealed, path)
        data = self.data.get(key)
        if data is None:
            data = (root / folder / path).read_bytes()
            if self.size + len(data) > self.MAX_BYTES:
                self.data.clear()
                self.size = 0
            self.data[key] = data
            self.size += len(data)
        return data


def articles(ctx: Context, job: Job, own: str) -> dict[str, bytes]:
    """Path → bytes of each article an earlier job of this node has sealed and not yet
    delivered; the job's own target `own` is left out (a job is never judged against the
    path it writes)."""
    rows = reads.sealed_before(ctx.store, job, ON_THE_WAY)
    out: dict[str, bytes] = {}
    sealed_memo = memo(ctx.memos, _Sealed)
    for path, folder, sealed in rows:
        if path == own:
            continue
        try:
            out[path] = sealed_memo.read(ctx.state_dir, folder, sealed, path)
        except OSError:
            continue  # damaged artifacts are that job's to report, not this one's
    return out
