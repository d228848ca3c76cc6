"""The files below some folders of one commit, read only when asked for.

Prepare and delivery ask a big blog's tree for its paths (where a new article may go, what
it would collide with) and for a few files' bytes; reading the bytes of all 20,000 articles
to answer that cost a second per job. The paths and blob ids come from one walk of the
tree; a blob is read when its path is looked up, and kept."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping


class TreeFiles(Mapping[str, bytes]):
    """Repository-relative path → bytes, backed by path → blob id."""

    def __init__(self, oids: dict[str, str], read: Callable[[Iterable[str]], dict[str, bytes]]):
        self.oids = oids  # path → blob id, as the tree holds them
        self._read = read
        self._data: dict[str, bytes] = {}  # blob id → bytes read so far

    def __getitem__(self, path: str) -> bytes:
        oid = self.oids[path]
        data = self._data.get(oid)
        if data is None:
            data = self._data[oid] = self._read([oid])[oid]
        return data

    def __contains__(self, path: object) -> bool:
        return path in self.oids

    def __iter__(self) -> Iterator[str]:
        return iter(self.oids)

    def __len__(self) -> int:
        return len(self.oids)

    def read(self, paths: Iterable[str]) -> dict[str, bytes]:
        """The bytes of many paths at once (one pass over the object store)."""
        wanted = {p: self.oids[p] for p in paths}
        missing = {oid for oid in wanted.values() if oid not in self._data}
        if missing:
            self._data.update(self._read(missing))
        return {p: self._data[oid] for p, oid in wanted.items()}

    def fetch(self, oids: Iterable[str]) -> dict[str, bytes]:
        """Blob id → bytes, read without keeping them (a pass over the whole blog)."""
        return self._read(oids)
