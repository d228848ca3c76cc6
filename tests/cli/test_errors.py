"""The three families of errors end three ways: a user's failure in one line with exit 1, a bug
with exit 3 and its traceback in the log (never a secret), a signal never as a user error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitpub.cli import entry
from gitpub.core.errors import GitpubError, IllegalTransition, InputError, LockOrderError
from gitpub.store.jobs import LeaseLost

TOKEN = "ghp_" + "Z3x9" * 9  # a token-shaped value, built here so no file holds it whole


def run(call: object, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as ended:
        entry.guarded(call)  # type: ignore[arg-type]
    return int(ended.value.code or 0), capsys.readouterr().err


def test_a_user_error_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    def fail() -> None:
        raise InputError("draft.md: not UTF-8")

    code, err = run(fail, capsys)
    assert (code, err) == (1, "git blogpub: draft.md: not UTF-8\n")


@pytest.mark.parametrize("bug", [IllegalTransition, LockOrderError, KeyError])
def test_a_bug_exits_3_with_its_traceback_in_the_log(
    bug: type[Exception], capsys: pytest.CaptureFixture[str]
) -> None:
    def fail() -> None:
        raise bug(f"broken with {TOKEN}")

    code, err = run(fail, capsys)
    log = Path(os.environ["XDG_CACHE_HOME"]) / "gitpub" / "gitpub.log"
    assert code == 3
    assert len(err.splitlines()) == 1 and "internal error" in err and str(log) in err
    text = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and bug.__name__ in text
    assert TOKEN not in text and TOKEN not in err


def test_debug_shows_the_traceback_instead(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITPUB_DEBUG", "1")

    def fail() -> None:
        raise IllegalTransition("illegal transition PUBLISHED -> RECEIVED")

    with pytest.raises(IllegalTransition):
        entry.guarded(fail)


def test_bugs_and_signals_are_not_user_errors() -> None:
    # A state-machine bug caught as an ordinary failure would print as one and exit 1.
    for cls in (IllegalTransition, LockOrderError, LeaseLost):
        assert not issubclass(cls, GitpubError)
