"""Job folders kept in the shared store: what a worker in a fresh clone needs to drive a job.

A job's folder (`jobs/<id>/`: source, assets, step answers, manifest, artifacts, record)
is written on the node's disk as on the embedded store, and copied into `blog_job_file`
inside the transaction that records the change it belongs to: a step's answer is in the store
the moment its event is, the artifacts the moment the job is PREPARED. A worker that claims
a job first brings the folder back as the store has it (`fetch`).

Only what this process wrote is sent: a file left on this disk by an earlier run, which the
store has since replaced, is never sent back over the newer one. Step spools (`*.run`, a
running command's files) and temporary files stay on the node."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gitpub.core.files import write_atomic
from gitpub.core.ids import sha256_hex
from gitpub.store.db import Connection

Stat = tuple[int, int, int]  # inode, size, mtime_ns


def _stat(path: Path) -> Stat:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


SCRATCH = frozenset({"checkout"})
"""Top folders of a job that only its current worker reads: prepare's scratch checkout."""


def _kept(top: str, folder: Path, name: str) -> bool:
    if name.startswith(".") or name.endswith(".run"):
        return False
    return not (name in SCRATCH and Path(top) == folder)


def _files(folder: Path) -> Iterator[tuple[str, Path]]:
    """(name relative to the folder, path) of every file the store keeps."""
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if _kept(top, folder, d))
        for name in sorted(names):
            if name.startswith(".") or name.endswith(".tmp"):
                continue
            path = Path(top, name)
            yield path.relative_to(folder).as_posix(), path


class Mirror:
    def __init__(self, conn: Connection, root: Path, opened_at: float) -> None:
        self.conn = conn
        self.root = root
        self.opened_ns = int(opened_at * 1e9)
        self._known: dict[str, dict[str, str]] = {}  # job → name → sha256 in the store
        self._seen: dict[tuple[str, str], Stat] = {}  # (job, name) → stat when last in step
        self._pending: list[tuple[str, str, str, Stat]] = []

    def _read_shas(self, conn: Connection, job_id: str) -> dict[str, str]:
        """Name → sha256 of each of the job's files in the store, read now and remembered."""
        rows = conn.execute(
            "SELECT name, sha256 FROM blog_job_file WHERE job_id = ?", (job_id,)
        ).fetchall()
        known = self._known[job_id] = {r[0]: r[1] for r in rows}
        return known

    def keep(self, conn: Connection, job_id: str) -> None:
        """Inside the caller's transaction: send what this process changed in the folder."""
        folder = self.root / job_id
        if not folder.is_dir():
            return
        known = self._known.get(job_id)
        if known is None:
            known = self._read_shas(conn, job_id)
        sent: list[tuple[str, str, str, bytes]] = []
        for name, path in _files(folder):
            try:
                stat = _stat(path)
            except OSError:
                continue
            seen = self._seen.get((job_id, name))
            if name in known:
                if seen == stat:
                    continue  # as it was when it last matched the store
                if seen is None and stat[2] < self.opened_ns:
                    continue  # older than this process: not ours to send
            try:
                data = path.read_bytes()
            except OSError:
                continue
            digest = sha256_hex(data)
            if known.get(name) != digest:
                sent.append((job_id, name, digest, data))
            self._pending.append((job_id, name, digest, stat))
        if sent:
            conn.executemany(
                "INSERT INTO blog_job_file (job_id, name, sha256, data) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (job_id, name) DO UPDATE"
                " SET sha256 = excluded.sha256, data = excluded.data",
                sent,
            )

    def settle(self, committed: bool) -> None:
        """After the transaction: what it sent is known to be in the store, or forgotten."""
        pending, self._pending = self._pending, []
        for job_id, name, digest, stat in pending:
            if committed:
                self._known.setdefault(job_id, {})[name] = digest
                self._seen[(job_id, name)] = stat
            else:
                self._known.pop(job_id, None)
                self._seen.pop((job_id, name), None)

    def fetch(self, job_id: str) -> None:
        """Make the folder on this disk what the store holds (files it lacks are left)."""
        folder = self.root / job_id
        for name, digest in self._read_shas(self.conn, job_id).items():
            path = folder / name
            try:
                stat = _stat(path)
                same = self._seen.get((job_id, name)) == stat
                if same or sha256_hex(path.read_bytes()) == digest:
                    self._seen[(job_id, name)] = stat
                    continue
            except OSError:
                pass
            row = self.conn.execute(
                "SELECT data FROM blog_job_file WHERE job_id = ? AND name = ?", (job_id, name)
            ).fetchone()
            if row is None:
                continue  # gone since its hash was read: the job's change removed it
            write_atomic(path, bytes(row[0]), sync=False)
            self._seen[(job_id, name)] = _stat(path)
