"""Where a forge shows a commit or a branch, from the remote's URL: GitHub, GitLab, Bitbucket,
Gitea, Forgejo and Codeberg spell their paths differently. A remote with no web address (a
path on disk, an unknown host over ssh) gets no links rather than wrong ones."""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import quote, urlsplit

from gitpub.store.jobs import Job

_SCP = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!/)(.+)$")  # git@host:owner/repo.git


class Web(NamedTuple):
    base: str  # https://host/owner/repo
    forge: str  # github | gitlab | bitbucket | gitea


def _forge(host: str) -> str | None:
    host = host.lower()
    if host == "github.com" or host.startswith("github."):
        return "github"
    if "gitlab" in host:
        return "gitlab"
    if "bitbucket" in host:
        return "bitbucket"
    if host == "codeberg.org" or "gitea" in host or "forgejo" in host:
        return "gitea"
    return None


def web_base(remote_url: str) -> Web | None:
    """The remote's web address, or None when it has none that gitpub knows."""
    scp = _SCP.match(remote_url) if "://" not in remote_url else None
    if scp:
        host, path = scp[1], scp[2]
    else:
        parts = urlsplit(remote_url)
        if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path  # credentials and ports left behind
    forge = _forge(host)
    path = path.strip("/").removesuffix(".git")
    if forge is None or not path:
        return None
    return Web(f"https://{host}/{path}", forge)


def commit_url(web: Web, oid: str) -> str:
    if web.forge == "gitlab":
        return f"{web.base}/-/commit/{oid}"
    if web.forge == "bitbucket":
        return f"{web.base}/commits/{oid}"
    return f"{web.base}/commit/{oid}"


def branch_url(web: Web, branch: str) -> str:
    name = quote(branch, safe="/")
    if web.forge == "gitlab":
        return f"{web.base}/-/tree/{name}"
    if web.forge == "bitbucket":
        return f"{web.base}/branch/{name}"
    if web.forge == "gitea":
        return f"{web.base}/src/branch/{name}"
    return f"{web.base}/tree/{name}"


def links(web: Web, job: Job, branch: str) -> list[tuple[str, str]]:
    """(label, address) of the job's commit on the remote and of its review branch."""
    out = []
    if job.remote_commit:
        out.append(
            (f"commit {job.remote_commit[:12]} on {branch}", commit_url(web, job.remote_commit))
        )
    if job.review_branch:
        out.append((f"review branch {job.review_branch}", branch_url(web, job.review_branch)))
    return out
