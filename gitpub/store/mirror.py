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
from collections.abc import Iterator, Sequence
from pathlib import Path

from gitpub.core.files import write_atomic
from gitpub.core.ids import sha256_hex
from gitpub.store.db import Connection, parts

Stat = tuple[int, int, int]  # inode, size, mtime_ns


def _stat(path: str | Path) -> Stat:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


SCRATCH = frozenset({"checkout"})
"""Top folders of a job that only its current worker reads: prepare's scratch checkout."""


def _files(folder: Path) -> Iterator[tuple[str, str]]:
    """(name relative to the folder, path) of every file the store keeps, each folder's
    files before its subfolders, in name order. Run at every change a job records, over
    every file of its folder: os.scandir's entries, not a Path per file."""
    yield from _walk(str(folder), "", SCRATCH)


def _walk(top: str, prefix: str, skip: frozenset[str]) -> Iterator[tuple[str, str]]:
    try:
        entries = sorted(os.scandir(top), key=lambda e: e.name)
    except OSError:
        return
    folders = []
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        try:
            folder = entry.is_dir()  # a link to a folder is not walked, nor read as a file
        except OSError:
            continue
        if folder:
            if not (name.endswith(".run") or name in skip or entry.is_symlink()):
                folders.append(entry)
        elif not name.endswith(".tmp"):
            yield prefix + name, entry.path
    for entry in folders:
        yield from _walk(entry.path, f"{prefix}{entry.name}/", frozenset())


class Mirror:
    def __init__(self, conn: Connection, root: Path, opened_at: float) -> None:
        self.conn = conn
        self.root = root
        self.opened_ns = int(opened_at * 1e9)
        self._known: dict[str, dict[str, str]] = {}  # job → name → sha256 in the store
        self._seen: dict[tuple[str, str], Stat] = {}  # (job, name) → stat when last in step
        self._pending: list[tuple[str, str, str, Stat]] = []

    def share(self, other: Mirror) -> None:
        """Know what `other` (this process's mirror on another connection, another thread's)
        knows, from now on together: a job claimed on one thread and prepared on another has
        its stored files' hashes read once, at the claim, not again at its first change."""
        self._known, self._seen, self.opened_ns = other._known, other._seen, other.opened_ns

    def _read_shas(self, conn: Connection, job_ids: Sequence[str]) -> None:
        """Name → sha256 of each of these jobs' files in the store, read now and remembered,
        in one query."""
        for job_id in job_ids:
            self._known[job_id] = {}
        for part in parts(job_ids):
            marks = ", ".join("?" * len(part))
            rows = conn.execute(
                f"SELECT job_id, name, sha256 FROM blog_job_file WHERE job_id IN ({marks})", part
            ).fetchall()
            for job_id, name, digest in rows:
                self._known[job_id][name] = digest

    def keep(self, conn: Connection, job_ids: Sequence[str]) -> None:
        """Inside the caller's transaction: send what this process changed in these jobs'
        folders, in one statement (a statement per file would be a round trip each)."""
        folders = [j for j in job_ids if (self.root / j).is_dir()]
        self._read_shas(conn, [j for j in folders if j not in self._known])
        sent: list[object] = []
        for job_id in folders:
            for name, digest, data in self._changed(job_id):
                sent += [job_id, name, digest, data]
        for start in range(0, len(sent), 4 * _FILES):
            chunk = sent[start : start + 4 * _FILES]
            file_marks = ", ".join(["(?, ?, ?, ?)"] * (len(chunk) // 4))
            conn.execute(
                f"INSERT INTO blog_job_file (job_id, name, sha256, data) VALUES {file_marks}"
                " ON CONFLICT (job_id, name) DO UPDATE"
                " SET sha256 = excluded.sha256, data = excluded.data",
                chunk,
            )

    def _changed(self, job_id: str) -> Iterator[tuple[str, str, bytes]]:
        """(name, sha256, bytes) of each file of the job's folder the store lacks as it is
        now; every file read is remembered as pending until the transaction ends."""
        known = self._known[job_id]
        for name, path in _files(self.root / job_id):
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
                with open(path, "rb") as file:
                    data = file.read()
            except OSError:
                continue
            digest = sha256_hex(data)
            self._pending.append((job_id, name, digest, stat))
            if known.get(name) != digest:
                yield name, digest, data

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

    def fetch(self, job_ids: Sequence[str]) -> None:
        """Make these jobs' folders on this disk what the store holds (files it lacks are
        left): one query for the hashes, one for the files this disk lacks."""
        self._read_shas(self.conn, job_ids)
        wanted: dict[tuple[str, str], str] = {}
        for job_id in job_ids:
            for name, digest in self._known[job_id].items():
                if not self._same(job_id, name, digest):
                    wanted[(job_id, name)] = digest
        if not wanted:
            return
        jobs = sorted({j for j, _ in wanted})
        names = sorted({n for _, n in wanted})
        marks, name_marks = ", ".join("?" * len(jobs)), ", ".join("?" * len(names))
        # Every pair of these jobs and names: a few more rows than wanted, one query.
        rows = self.conn.execute(
            f"SELECT job_id, name, data FROM blog_job_file WHERE job_id IN ({marks})"
            f" AND name IN ({name_marks})",
            [*jobs, *names],
        ).fetchall()
        for job_id, name, data in rows:
            if (job_id, name) not in wanted:
                continue  # gone since its hash was read: the job's change removed it
            path = self.root / job_id / name
            write_atomic(path, bytes(data), sync=False)
            self._seen[(job_id, name)] = _stat(path)

    def _same(self, job_id: str, name: str, digest: str) -> bool:
        """Whether the file on this disk holds what the store does (remembered once true)."""
        path = self.root / job_id / name
        try:
            stat = _stat(path)
            if self._seen.get((job_id, name)) == stat or sha256_hex(path.read_bytes()) == digest:
                self._seen[(job_id, name)] = stat
                return True
        except OSError:
            pass
        return False


_FILES = 200
"""Files per INSERT (4 parameters each)."""
