"""The lander runs once per external step of a fleet, in a process of its own: what it
imports is paid on every step of every job. It lands an answer in the shared store and needs
no git and none of the worker's prepare, which would cost it several times the landing."""

from __future__ import annotations

import subprocess
import sys

WORKERS_ONLY = ("pygit2", "fontTools", "gitpub.prepare", "gitpub.git", "gitpub.deliver")


def test_the_lander_imports_nothing_of_the_worker() -> None:
    probe = "import sys, gitpub.store.lander; print('\\n'.join(sys.modules))"
    names = set(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert "gitpub.store.lander" in names and "gitpub.scan" in names  # it did import
    assert sorted(n for n in names if n.startswith(WORKERS_ONLY)) == []
