"""Counting what reached the remote: a draft step that logs each paid run, a remote hook that
logs each push received, and the exactly-once check built on both."""

from __future__ import annotations

import os
import random
import sys
from collections import Counter
from pathlib import Path

from gitpub.core import userdirs
from testing.fixtures import CONFIG, Blog, make_blog

WORDS = [
    "swallow",
    "barn",
    "april",
    "sourdough",
    "flour",
    "water",
    "patience",
    "train",
    "alps",
    "night",
    "borrow",
    "checker",
    "tomato",
    "banana",
    "paper",
    "baltic",
    "brackish",
    "tide",
    "snapshot",
    "moss",
    "forest",
    "north",
    "river",
    "granite",
    "lantern",
    "harbor",
    "copper",
    "violin",
    "meadow",
    "glacier",
    "orchard",
    "falcon",
    "pepper",
    "quartz",
    "saffron",
    "tundra",
    "walnut",
    "yeast",
    "zephyr",
    "anchor",
    "basil",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "grove",
    "heron",
    "iris",
    "juniper",
    "kelp",
]


def distinct(i: int) -> str:
    """Article bodies that no dedup judge would call duplicates of each other."""
    rng = random.Random(i)
    return " ".join(rng.sample(WORDS, 14)) + f" (number {i})."


DRAFT = """\
import json, os, re, sys, time
req = json.load(sys.stdin)
with open(os.environ["DRAFT_LOG"], "a") as fh:
    fh.write(req["job_id"] + "\\n")
gate = re.search(r"waitfor:(\\S+)", req["source"])
deadline = time.time() + 60
while gate and not os.path.exists(gate.group(1)) and time.time() < deadline:
    time.sleep(0.05)
time.sleep(float(os.environ.get("DRAFT_SECONDS", "0")))
print(json.dumps({"text": req["source"]}))
"""

PUSH_LOG_HOOK = """#!/bin/sh
# Branch updates only: a job's landmark rides in the same push (gitpub.deliver.landmark).
case "$1" in refs/heads/*) echo "$1 $3" >> "$(dirname "$0")/../pushes.log" ;; esac
"""


def counting_blog(base: Path) -> tuple[Blog, Path]:
    script = base / "draft.py"
    script.write_text(DRAFT)
    blog = make_blog(base, CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{script}"]\n')
    blog.trust()
    hook = blog.remote / "hooks" / "update"
    hook.write_text(PUSH_LOG_HOOK)
    hook.chmod(0o755)
    return blog, base / "draft.log"


def draft_spool(blog: Blog, job_id: str) -> Path:
    """Where the running draft step keeps its pid, output and exit status: in the job's
    folder, or on a shared store outside the clone (which may be deleted under it)."""
    if os.environ.get("GITPUB_STORE"):
        return userdirs.cache_dir() / "spool" / job_id / "draft.run"
    return blog.root / ".git" / "blogpub" / "jobs" / job_id / "steps" / "draft.run"


def drafts(log: Path) -> Counter[str]:
    return Counter(log.read_text().split()) if log.exists() else Counter()


def pushes(blog: Blog) -> list[str]:
    log = blog.remote / "pushes.log"
    return log.read_text().splitlines() if log.exists() else []


def assert_exactly_once(
    blog: Blog, job_ids: list[str], draft_log: Path, batches: int | None = None
) -> None:
    """Every job PUBLISHED by one commit on the remote, drafted once; at most one push per
    job (jobs ready together share one), exactly `batches` pushes when the test knows."""
    for job_id in job_ids:
        job = blog.job(job_id)["job"]
        assert job["state"] == "PUBLISHED", (job_id, blog.job(job_id)["events"])
        assert blog.commits_with_job(job_id) == 1
        # The recorded hash is the remote's own commit, carrying the article.
        body = blog.remote_git("show", "-s", "--format=%B", job["remote_commit"])
        assert f"Blog-Job-Id: {job_id}" in body
        files = blog.remote_git("show", "--name-only", "--format=", job["remote_commit"]).split()
        assert files == [job["target_path"]]
    assert drafts(draft_log) == Counter({j: 1 for j in job_ids})
    # A lost answer was confirmed, never re-pushed: no more pushes than deliveries.
    received = pushes(blog)
    assert 1 <= len(received) <= len(job_ids)
    if batches is not None:
        assert len(received) == batches, received
