"""Bad input: exit 1, one line on stderr naming the problem, nothing left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testing.fixtures import Blog, article, git


def _state_files(blog: Blog) -> set[str]:
    state = blog.root / ".git" / "blogpub"
    if not state.exists():
        return set()
    return {
        str(p.relative_to(state))
        for p in state.rglob("*")
        if p.is_file() and p.parent.name != "locks" and not p.name.startswith("state.sqlite3")
    }


def _expect_failure(blog: Blog, args: list[str], needle: str, stdin: str | None = None) -> None:
    existed = (blog.root / ".git" / "blogpub").exists()
    before = _state_files(blog)
    res = blog.blogpub(*args, input=stdin)
    assert res.returncode == 1, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert needle in lines[0]
    assert "Traceback" not in res.stderr
    assert _state_files(blog) == before
    if not existed:  # refused before the store was opened: not even an empty database
        assert not (blog.root / ".git" / "blogpub").exists()
    if (blog.root / ".git" / "blogpub" / "state.sqlite3").exists():
        assert blog.status() == []


@pytest.fixture
def src(blog: Blog) -> Path:
    return blog.root.parent / "source.mdx"


def test_missing_source_file(blog: Blog, src: Path) -> None:
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], "no such source file")


def test_empty_source(blog: Blog, src: Path) -> None:
    src.write_text("  \n\n")
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], "source is empty")


def test_source_not_utf8(blog: Blog, src: Path) -> None:
    src.write_bytes("标题".encode("gbk"))
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], "not UTF-8")


def test_source_with_nul(blog: Blog, src: Path) -> None:
    src.write_bytes(b"---\ntitle: x\n---\nhello\x00world\n")
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], "NUL")


def test_source_over_default_limit(blog: Blog, src: Path) -> None:
    src.write_bytes(b"a" * (2 * 1024 * 1024 + 1))
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], "over the limit")


def test_source_over_limit_on_stdin(blog: Blog) -> None:
    _expect_failure(
        blog,
        ["submit", "--key", "k", "--source", "-"],
        "over the limit",
        stdin="a" * (2 * 1024 * 1024 + 10),
    )


@pytest.mark.parametrize(
    "target",
    ["../x.mdx", "/tmp/x.mdx", "content/posts/../../x.mdx", "README.md", "content/posts/x.txt"],
)
def test_target_outside_content(blog: Blog, src: Path, target: str) -> None:
    src.write_text(article("T", "body"))
    _expect_failure(
        blog,
        ["submit", "--key", "k", "--source", str(src), "--target", target],
        f"--target {target}",
    )


def test_target_through_symlink_leaving_repo(blog: Blog, src: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, blog.root / "content" / "posts" / "escape")
    src.write_text(article("T", "body"))
    _expect_failure(
        blog,
        ["submit", "--key", "k", "--source", str(src), "--target", "content/posts/escape/x.mdx"],
        "symlink",
    )


def test_malformed_config(blog: Blog, src: Path) -> None:
    src.write_text(article("T", "body"))
    (blog.root / ".blogpub.toml").write_text("[publish\nremote = 1\n")
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], ".blogpub.toml")


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[publish]\nremote = 3\n", "publish.remote must be a non-empty string, got int"),
        ('[publish]\ncontent = "posts"\n', "publish.content must be a list"),
        ('[publish]\nbranchh = "main"\n', "unknown key publish.branchh"),
        ('[retry]\nmax_attempts = "8"\n', "retry.max_attempts must be an integer"),
        ("[fonts]\nquality = 12\n", "fonts.quality must be an integer from 0 to 11"),
        ("[steps]\njudge = 5\n", "steps.judge must be"),
        ("[colours]\n", "unknown table [colours]"),
        (
            '[steps]\njudge = "builtin:passthrough"\n',
            "steps.judge = 'builtin:passthrough' is not a built-in judge step",
        ),
        ('[steps]\ndraft = "builtin:nope"\n', "is not a built-in draft step"),
    ],
)
def test_config_errors_name_file_key_and_type(
    blog: Blog, src: Path, toml: str, needle: str
) -> None:
    src.write_text(article("T", "body"))
    (blog.root / ".blogpub.toml").write_text(toml)
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], needle)


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[retry]\nlease_seconds = nan\n", "retry.lease_seconds must be a number from 0.1 to"),
        ("[retry]\nbase_delay = inf\n", "retry.base_delay must be a number from 0 to"),
        ("[retry]\nmax_delay = -inf\n", "retry.max_delay must be a number"),
        ("[retry]\nprobe_interval = 1e300\n", "retry.probe_interval must be a number"),
        ("[retry]\nmax_attempts = 100000000000\n", "retry.max_attempts must be an integer"),
        ("[steps]\nsimilarity_skip = 1.5\n", "steps.similarity_skip must be a number from 0 to 1"),
        ("[steps]\ntimeout = nan\n", "steps.timeout must be a number"),
        ("[gc]\nkeep_days = inf\n", "gc.keep_days must be a number"),
        ('[publish]\ncontent = ["."]\n', "publish.content must name a folder below"),
        ('[publish]\ncontent = ["./"]\n', "publish.content must name a folder below"),
        ('[publish]\ncontent = [".git/posts"]\n', "publish.content must not be inside .git"),
        ('[publish]\ncontent = ["posts/.GIT/x"]\n', "publish.content must not be inside .git"),
        ('[publish]\nbranch = "main..x"\n', "publish.branch 'main..x' is not a name git"),
        ('[publish]\nbranch = "feature/"\n', "publish.branch 'feature/' is not a name git"),
        ('[publish]\nbranch = "a b"\n', "publish.branch 'a b' is not a name git accepts"),
        ('[publish]\nbranch = "x.lock"\n', "publish.branch 'x.lock' is not a name git"),
        ('[publish]\nbranch = "-x"\n', "publish.branch '-x' is not a name git accepts"),
        ('[publish]\nremote = "or:igin"\n', "publish.remote 'or:igin' is not a name git"),
        ('[fonts]\nsource = "/usr/share/fonts/x.ttf"\n', "fonts.source '/usr/share/fonts/x.ttf'"),
        ('[fonts]\nsource = "../fonts/x.ttf"\n', "fonts.source '../fonts/x.ttf' is outside"),
        ('[fonts]\nsource = "~/x.otf"\n', "fonts.source '~/x.otf' is outside the repository"),
        ('[fonts]\noutputs = [".git/x.woff2"]\n', "fonts.outputs must not be inside .git"),
    ],
)
def test_unsafe_config_values_are_refused(tmp_path: Path, toml: str, needle: str) -> None:
    from gitpub import config
    from gitpub.core.errors import ConfigError

    (tmp_path / ".blogpub.toml").write_text(toml)
    with pytest.raises(ConfigError) as refused:
        config.load(tmp_path)
    assert refused.value.message.startswith(f"{tmp_path / '.blogpub.toml'}: ")
    assert needle in refused.value.message and "\n" not in refused.value.message


def test_nan_lease_is_refused_by_every_command(blog: Blog, src: Path) -> None:
    src.write_text(article("T", "body"))
    (blog.root / ".blogpub.toml").write_text("[retry]\nlease_seconds = nan\n")
    needle = ".blogpub.toml: retry.lease_seconds must be a number from 0.1 to 31622400, got nan"
    _expect_failure(blog, ["submit", "--key", "k", "--source", str(src)], needle)
    for args in (["run", "--until-idle"], ["relay"]):
        res = blog.blogpub(*args)
        assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
        assert needle in res.stderr


def test_font_source_inside_the_repository_by_absolute_path_is_accepted(blog: Blog) -> None:
    from gitpub import config

    inside = blog.root / "fonts" / "x.ttf"
    (blog.root / ".blogpub.toml").write_text(f'[fonts]\nsource = "{inside}"\n')
    assert config.load(blog.root).fonts is not None


def test_branch_names_are_judged_as_git_judges_them(tmp_path: Path) -> None:
    from gitpub.config import valid_ref_name

    names = [
        "main", "release/2026", "a..b", "x.lock", ".hidden", "a/.b", "a b", "a~1", "a^",
        "a:b", "a?", "a*", "a[", "a\\b", "a@{1}", "@", "a/", "/a", "a//b", "a.", "文章",
        "ok-name_1.2", "a/b.lock/c", "a\x01", "a\x7f", "@@", "a@b", "..", "tab\tx",
    ]  # fmt: skip
    for name in names:
        ref = f"refs/heads/{name}"
        accepted = subprocess.run(["git", "check-ref-format", ref], cwd=tmp_path).returncode == 0
        assert valid_ref_name(ref) is accepted, (name, accepted)


def test_repository_without_the_remote(blog: Blog, src: Path) -> None:
    src.write_text(article("T", "body"))
    git(blog.root, "remote", "remove", "origin")
    _expect_failure(
        blog, ["submit", "--key", "k", "--source", str(src)], "no remote named 'origin'"
    )


def test_not_a_repository(tmp_path: Path) -> None:
    import subprocess
    import sys

    empty = tmp_path / "plain"
    empty.mkdir()
    res = subprocess.run(
        [sys.executable, "-m", "gitpub", "-C", str(empty), "status"],
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)},
    )
    assert res.returncode == 1
    assert res.stderr.strip().endswith("not inside a git repository")


def test_usage_error_exits_2(blog: Blog) -> None:
    res = blog.blogpub("submit", "--source", "x")
    assert res.returncode == 2
    assert "--key" in res.stderr


def test_unknown_job(blog: Blog) -> None:
    res = blog.blogpub("show", "no-such-job")
    assert res.returncode == 1 and "no such job" in res.stderr


def test_reading_commands_create_no_state(blog: Blog) -> None:
    state = blog.root / ".git" / "blogpub"
    assert blog.ok("status", "--json").json() == {"jobs": [], "finished": {}, "unlisted": 0}
    assert blog.ok("status").stdout.strip() == "no jobs"
    assert blog.blogpub("show", "abcd1234").returncode == 1
    assert not state.exists()


@pytest.mark.parametrize("args", [["status", "--all"], ["status", "--json"], ["doctor"]])
def test_output_into_a_closed_pipe_ends_quietly_as_git_does(blog: Blog, args: list[str]) -> None:
    # `git blogpub status | head -1`: the reader is gone before gitpub writes. Like the
    # commands click runs (doctor), the fast ones end with status 1 and not a word.
    blog.submit("k", article("Piped", "Read by nobody."))
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run(
        [sys.executable, "-m", "gitpub", "-C", str(blog.root), *args],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    os.close(write)
    assert proc.stderr == ""
    assert proc.returncode == 1
