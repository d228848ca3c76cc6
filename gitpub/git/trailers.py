"""The trailers that identify a job's commit across rebases, and their lookup.

A rebase gives the commit a new hash, so a job is found by what its message says,
never by the hash gitpub recorded locally."""

from __future__ import annotations

import re
from collections.abc import Mapping, Set

from gitpub.core.ids import JobId, Oid, Sha256
from gitpub.git.process import run_git
from gitpub.git.repo import Repo

JOB_ID = "Blog-Job-Id"
MANIFEST = "Blog-Manifest-Sha256"
BASE = "Blog-Base-Commit"
NODE = "Blog-Writer-Node"
EXTERNAL_SYNC = "Blog-External-Sync"

JOB_REF_PREFIX = "refs/blog-jobs/"


def job_ref(job_id: str) -> str:
    return JOB_REF_PREFIX + job_id


def format_message(subject: str, trailers: Mapping[str, str]) -> str:
    """A commit message: one subject line, a blank line, then `Key: value` trailers."""
    subject = " ".join(subject.split()) or "blog: publish"
    lines = [f"{key}: {' '.join(value.split())}" for key, value in trailers.items()]
    return f"{subject}\n\n" + "\n".join(lines) + "\n"


def job_trailers(job_id: JobId, manifest: Sha256, base: Oid, node: str) -> dict[str, str]:
    return {JOB_ID: job_id, MANIFEST: manifest, BASE: base, NODE: node}


def find_remote_all(
    repo: Repo, tracking_ref: str, base: str | None, job_id: str, manifest: str
) -> list[Oid]:
    """Every commit on the remote-tracking branch carrying BOTH the job id and manifest
    trailers, newest first. Trailers are only a claim: `confirm` checks each one's content.

    Only the remote-tracking ref is searched (never local branches, never --all): a pushed-then-
    left-behind local job branch must not make an unpublished job look published."""
    return find_remote_many(repo, tracking_ref, base, {(job_id, manifest)}).get(
        (job_id, manifest), []
    )


def find_remote_many(
    repo: Repo, tracking_ref: str, base: str | None, wanted: Set[tuple[str, str]]
) -> dict[tuple[str, str], list[Oid]]:
    """`find_remote_all` for many (job id, manifest) pairs sharing one base: one walk."""
    tip = repo.resolve(tracking_ref)
    if tip is None:
        return {}
    hide = [base] if base else []
    out: dict[tuple[str, str], list[Oid]] = {}
    for commit in repo.walk(tip, hide):
        found = commit.message_trailers
        pair = (found.get(JOB_ID, ""), found.get(MANIFEST, ""))
        if pair in wanted:
            out.setdefault(pair, []).append(Oid(str(commit.id)))
    return out


def find_local(repo: Repo, job_id: str, manifest: str | None = None) -> Oid | None:
    """Recovery lookup: `refs/blog-jobs/<id>` in O(1), else a trailer search over local refs.

    With `manifest`, only a commit carrying that manifest trailer too counts."""
    direct = repo.resolve(job_ref(job_id))
    if direct is not None and carries(repo, direct, job_id, manifest):
        return direct
    return grep_local(repo, job_id, manifest)


def carries(repo: Repo, oid: str, job_id: str, manifest: str | None = None) -> bool:
    """Whether commit `oid` is the job's: its job-id trailer, and the manifest one if given."""
    t = repo.trailers(oid)
    return t.get(JOB_ID) == job_id and (manifest is None or t.get(MANIFEST) == manifest)


def point_job_ref(repo: Repo, job_id: str, oid: str, why: str) -> None:
    """Point `refs/blog-jobs/<id>` at the job's commit, the O(1) recovery index (no-op when
    it already does)."""
    if repo.resolve(job_ref(job_id)) != oid:
        repo.update_ref(job_ref(job_id), oid, None, f"gitpub: {why} job {job_id}")


_HEX = re.compile(r"^[0-9a-f]{40,64}$")


def grep_local(repo: Repo, job_id: str, manifest: str | None = None) -> Oid | None:
    """Fallback: `git log --grep` over local branches and job refs.

    git prints one hash per line (`--format=%H`); each candidate's trailers are then parsed
    on their own, so several matching commits can never be glued into one record."""
    proc = run_git(
        [
            "log",
            "--format=%H",
            "--fixed-strings",
            f"--grep={JOB_ID}: {job_id}",
            "--branches",
            f"--glob={JOB_REF_PREFIX}*",
        ],
        repo.root,
        check=False,
    )
    # A ref at an object a `git gc --prune=now` removed makes git log fail: nothing found
    # then, and the commit is made again from the artifacts.
    out = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else ""
    for line in out.splitlines():
        oid = line.strip()
        if _HEX.match(oid) and carries(repo, oid, job_id, manifest):
            return Oid(oid)
    return None
