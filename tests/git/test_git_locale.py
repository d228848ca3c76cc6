"""gitpub reads git's words (failure codes, the wedge detector, the `error:` line it shows), so
git must speak them in one language whatever the user's locale. A person's German git says
"Schwerwiegend:" where gitpub looks for "fatal:"."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitpub.core.errors import GitCommandError
from gitpub.git.process import run_git


def german(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGUAGE", "de")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)


def test_the_machine_speaks_german_to_a_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    german(monkeypatch)
    said = subprocess.run(
        ["git", "rev-parse", "--verify", "nope"], cwd=tmp_path, capture_output=True
    )
    if not said.stderr.startswith(b"Schwerwiegend"):
        pytest.skip("git has no German messages on this machine")


def test_git_run_by_gitpub_says_fatal_in_any_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    german(monkeypatch)
    with pytest.raises(GitCommandError) as failed:
        run_git(["rev-parse", "--verify", "nope"], tmp_path)
    assert failed.value.stderr.startswith("fatal: ")
    assert "fatal: not a git repository" in failed.value.message
