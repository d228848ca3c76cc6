"""The external-step protocol's own promises, on a real command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gitpub.prepare import protocol
from gitpub.store.jobs import LeaseLost

STEP = """\
import json, pathlib, sys
pathlib.Path(sys.argv[1]).write_text("ran")
print(json.dumps({"text": json.load(sys.stdin)["source"]}))
"""


def test_a_step_never_starts_once_its_worker_lost_the_job(tmp_path: Path) -> None:
    """A worker stopped between its last checkpoint and starting an external step may have
    lost the job meanwhile to another that runs this very step: the heartbeat right before
    the start says so, and the command (a model call a person pays for) never runs."""
    ran = tmp_path / "ran"
    script = tmp_path / "step.py"
    script.write_text(STEP)

    def lost() -> None:
        raise LeaseLost("job j: lease taken by another worker")

    with pytest.raises(LeaseLost):
        protocol.run_external(
            "draft",
            [sys.executable, str(script), str(ran)],
            {"source": "text"},
            cwd=tmp_path,
            timeout=30,
            heartbeat=lost,
            spool=tmp_path / "draft.run",
        )
    assert not ran.exists()

    answer = protocol.run_external(
        "draft",
        [sys.executable, str(script), str(ran)],
        {"source": "text"},
        cwd=tmp_path,
        timeout=30,
        heartbeat=lambda: None,
        spool=tmp_path / "again.run",
    )
    assert answer["text"] == "text" and ran.read_text() == "ran"
