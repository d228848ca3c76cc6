"""The one rebase driver, on real git: a stop is handed to the callback, a settled step goes
on, a refused one leaves the branch as it was (or stopped, for a person); and the one answer
to "is an operation under way?" for each operation git can leave half-done."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing.fixtures import git

from gitpub.core.errors import GitCommandError
from gitpub.git import rebase
from gitpub.git.repo import in_progress


def commit(root: Path, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        (root / rel).write_text(text)
        git(root, "add", rel)
    git(root, "commit", "--quiet", "-m", message)
    return git(root, "rev-parse", "HEAD")


def diverged(tmp_path: Path, side: dict[str, str]) -> tuple[Path, str, str]:
    """A repository where `main` changed f.txt after `side` branched off and changed `side`'s
    files; `side` checked out. Returns (root, main's tip, side's tip)."""
    root = tmp_path / "repo"
    git(tmp_path, "init", "--quiet", str(root))
    commit(root, {"f.txt": "base\n", "g.txt": "g\n"}, "base")
    git(root, "checkout", "--quiet", "-b", "side")
    mine = commit(root, side, "side's change")
    git(root, "checkout", "--quiet", "main")
    tip = commit(root, {"f.txt": "main\n"}, "main's change")
    git(root, "checkout", "--quiet", "side")
    return root, tip, mine


def refuse(unmerged: list[str]) -> list[str]:
    return unmerged or ["nothing"]


def show(root: Path, rev: str, path: str) -> str:
    return git(root, "show", f"{rev}:{path}")


def test_a_clean_rebase_replays_the_branch_and_never_calls_back(tmp_path: Path) -> None:
    root, tip, _ = diverged(tmp_path, {"g.txt": "side\n"})
    done = rebase.run(root, ["main"], refuse)
    assert done == rebase.Rebased(None, [], None)
    assert git(root, "rev-parse", "side~1") == tip
    assert show(root, "side", "f.txt") == "main" and show(root, "side", "g.txt") == "side"
    assert git(root, "log", "-1", "--format=%s", "side") == "side's change"
    assert in_progress(root) is None


def test_a_stop_the_callback_settles_goes_on(tmp_path: Path) -> None:
    root, tip, _ = diverged(tmp_path, {"f.txt": "side\n", "g.txt": "side\n"})
    seen: list[list[str]] = []

    def settle(unmerged: list[str]) -> list[str]:
        seen.append(unmerged)
        (root / "f.txt").write_text("main and side\n")
        rebase.stage(root, ["f.txt"])
        return []

    done = rebase.run(root, ["main"], settle)
    assert seen == [["f.txt"]]
    assert done == rebase.Rebased(None, ["f.txt"], tip)
    assert git(root, "rev-parse", "side~1") == tip
    assert show(root, "side", "f.txt") == "main and side"
    assert git(root, "log", "-1", "--format=%s", "side") == "side's change"  # message kept
    assert in_progress(root) is None
    assert git(root, "status", "--porcelain") == ""


def test_a_settled_step_with_nothing_left_to_replay_is_skipped(tmp_path: Path) -> None:
    root, tip, _ = diverged(tmp_path, {"f.txt": "side\n"})

    def take_upstreams(unmerged: list[str]) -> list[str]:
        (root / "f.txt").write_text("main\n")
        rebase.stage(root, unmerged)
        return []

    done = rebase.run(root, ["main"], take_upstreams)
    assert done.conflict is None
    assert git(root, "rev-parse", "side") == tip  # the emptied commit is dropped, not kept
    assert in_progress(root) is None


def test_a_refused_stop_aborts_and_leaves_the_branch_untouched(tmp_path: Path) -> None:
    root, _, mine = diverged(tmp_path, {"f.txt": "side\n"})
    done = rebase.run(root, ["main"], refuse)
    assert done.conflict == ["f.txt"]
    assert in_progress(root) is None
    assert git(root, "rev-parse", "side") == mine
    assert git(root, "symbolic-ref", "HEAD") == "refs/heads/side"
    assert (root / "f.txt").read_text() == "side\n"
    assert git(root, "status", "--porcelain") == ""


def test_a_callback_that_fails_aborts_and_leaves_the_branch_untouched(tmp_path: Path) -> None:
    root, _, mine = diverged(tmp_path, {"f.txt": "side\n"})

    def broken(unmerged: list[str]) -> list[str]:
        raise ValueError("the rebuild failed")

    with pytest.raises(ValueError, match="the rebuild failed"):
        rebase.run(root, ["main"], broken)
    assert in_progress(root) is None
    assert git(root, "rev-parse", "side") == mine
    assert git(root, "status", "--porcelain") == ""


def test_a_persons_refused_stop_stays_stopped_and_goes_on_once_resolved(
    tmp_path: Path,
) -> None:
    root, tip, mine = diverged(tmp_path, {"f.txt": "side\n"})
    done = rebase.run(root, ["main"], refuse, person=True)
    assert done == rebase.Rebased(["f.txt"], [], tip)
    assert in_progress(root) == "rebase"  # as git leaves it: the person resolves it
    assert "UU f.txt" in git(root, "status", "--porcelain")

    (root / "f.txt").write_text("resolved\n")
    git(root, "add", "f.txt")
    seen: list[list[str]] = []

    def go_on(unmerged: list[str]) -> list[str]:
        seen.append(unmerged)
        return []

    done = rebase.resume(root, go_on, person=True)
    assert seen == [[]]  # a stop the person settled: nothing unmerged is left
    assert done == rebase.Rebased(None, [], tip)
    assert in_progress(root) is None
    assert git(root, "rev-parse", "side~1") == tip
    assert show(root, "side", "f.txt") == "resolved"
    assert git(root, "rev-parse", "side") != mine


def test_a_git_failure_that_is_no_conflict_is_raised_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    root, _, mine = diverged(tmp_path, {"g.txt": "side\n"})
    with pytest.raises(GitCommandError, match="no-such-branch"):
        rebase.run(root, ["no-such-branch"], refuse)
    assert in_progress(root) is None
    assert git(root, "rev-parse", "side") == mine


def test_replayed_says_whether_head_holds_commits_beyond_a_base(tmp_path: Path) -> None:
    root, tip, _ = diverged(tmp_path, {"g.txt": "side\n"})
    rebase.run(root, ["main"], refuse)
    assert rebase.replayed(root, tip)
    git(root, "checkout", "--quiet", "main")
    assert not rebase.replayed(root, tip)


# ----------------------------------------------------------------- operations in progress


def test_nothing_is_in_progress_in_a_clean_checkout(tmp_path: Path) -> None:
    root, _, _ = diverged(tmp_path, {"f.txt": "side\n"})
    assert in_progress(root) is None
    assert rebase.onto(root) is None


def test_a_stopped_rebase_is_in_progress_and_says_onto_what(tmp_path: Path) -> None:
    root, tip, _ = diverged(tmp_path, {"f.txt": "side\n"})
    git(root, "rebase", "main", check=False)
    assert in_progress(root) == "rebase"
    assert in_progress(root, "rebase") == "rebase"
    assert in_progress(root, "merge", "cherry-pick") is None
    assert rebase.onto(root) == tip
    rebase.abort(root)
    assert in_progress(root) is None


def test_a_stopped_merge_is_in_progress(tmp_path: Path) -> None:
    root, _, _ = diverged(tmp_path, {"f.txt": "side\n"})
    git(root, "merge", "--quiet", "main", check=False)
    assert in_progress(root) == "merge"
    assert in_progress(root, "rebase") is None
    git(root, "merge", "--abort")
    assert in_progress(root) is None


def test_a_stopped_cherry_pick_is_in_progress(tmp_path: Path) -> None:
    root, _, _ = diverged(tmp_path, {"f.txt": "side\n"})
    git(root, "cherry-pick", "main", check=False)
    assert in_progress(root) == "cherry-pick"
    assert in_progress(root, "rebase", "merge") is None
    git(root, "cherry-pick", "--abort")
    assert in_progress(root) is None


def test_a_stopped_revert_and_a_bisect_are_in_progress(tmp_path: Path) -> None:
    root, _, _ = diverged(tmp_path, {"f.txt": "side\n"})
    git(root, "checkout", "--quiet", "main")
    commit(root, {"f.txt": "main, later\n"}, "a later change")
    git(root, "revert", "--no-edit", "main~1", check=False)
    assert in_progress(root) == "revert"
    git(root, "revert", "--abort")
    git(root, "bisect", "start")
    assert in_progress(root) == "bisect"
    git(root, "bisect", "reset")
    assert in_progress(root) is None


def test_a_linked_worktree_answers_for_itself(tmp_path: Path) -> None:
    root, _, _ = diverged(tmp_path, {"f.txt": "side\n"})
    other = tmp_path / "other"
    git(root, "worktree", "add", "--quiet", "--detach", str(other), "side")
    git(other, "rebase", "main", check=False)
    assert in_progress(other) == "rebase"
    assert in_progress(root) is None  # the main checkout is not the one stopped
