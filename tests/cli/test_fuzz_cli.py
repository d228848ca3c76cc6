"""The command line, fuzzed: options and arguments drawn from a grammar of every command an
agent or a person types (and of what they mistype), run in this process for most examples and
as `git blogpub` subprocesses, with argv as raw bytes, for a bounded few.

Each run must end as a user expects: never exit 3 nor a traceback; a refusal is one line on
stderr (a usage error: click's usage block with one `Error:` line) and writes nothing — no
job, no event, no job folder, no ref, no change in the checkout; no secret given anywhere in
the command line is printed back. The `GITPUB_*` variables gitpub reads are a door too."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st
from testing import fuzzing
from testing.fixtures import Blog, article

# ---------------------------------------------------------------------------- material


def material(blog: Blog) -> dict[str, str]:
    """Files an argument may name: a good article, one holding a token, one that is not
    UTF-8, an empty one, a folder, a device."""
    base = blog.root.parent / "fuzz-files"
    base.mkdir(exist_ok=True)
    files = {
        "good.mdx": article("Fuzzed", "A plain post."),
        "leak.mdx": article("Leak", f"token {fuzzing.GH_TOKEN}"),
        "empty.mdx": "",
        "crlf.md": "---\r\ntitle: Crlf\r\n---\r\n\r\nbody\r\n",
    }
    for name, text in files.items():
        (base / name).write_text(text, encoding="utf-8")
    (base / "latin1.mdx").write_bytes(article("Café", "crème").encode("latin-1"))
    (base / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    paths = {name: str(base / name) for name in [*files, "latin1.mdx", "image.png"]}
    paths.update({"folder": str(base), "null": os.devnull, "zero": "/dev/zero"})
    return paths


def values(files: dict[str, str]) -> st.SearchStrategy[str]:
    return st.one_of(fuzzing.words(), st.sampled_from(sorted(files.values())))


OPTIONS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("submit",): (
        "--key",
        "--source",
        "--target",
        "--asset",
        "--topic",
        "--allow",
        "--at",
        "--review",
        "--json",
    ),
    ("status",): ("--json", "--state", "--all", "--since", "--limit"),
    ("show",): ("--key", "--json"),
    ("scan",): ("--json",),
    ("dry-run",): ("--source", "--target", "--asset"),
    ("topic", "close"): ("--source", "--allow", "--json"),
    ("topic", "reopen"): (),
    ("retry",): (),
    ("resolve",): ("--continue", "--abandon", "--allow"),
    ("fonts",): ("--check",),
    ("trust",): ("--list",),
}
"""What the fuzzer may type: every command that acts on this blog's jobs, with its options
(the servers, the worker and the commands that rewrite the checkout or the hooks are fuzzed
through their own doors, or not at all)."""

FLAGS = {"--review", "--json", "--all", "--continue", "--abandon", "--check", "--list"}


@st.composite
def command_lines(draw: st.DrawFn, files: dict[str, str]) -> tuple[list[str], bytes]:
    """A command line and what its standard input holds."""
    command = draw(st.sampled_from(sorted(OPTIONS)))
    argv = list(command)
    known = OPTIONS[command]
    # A plausible start (the required options, valid values) that the rest then bends.
    if command in (("submit",), ("dry-run",), ("topic", "close")):
        argv += ["--source", draw(st.sampled_from([files["good.mdx"], files["crlf.md"], "-"]))]
    if command == ("submit",):
        argv += ["--key", draw(st.sampled_from(["k1", "k2", fuzzing.CREDENTIAL]))]
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 9))
        if kind < 6 and known:
            flag = draw(st.sampled_from(known))
            argv += [flag] if flag in FLAGS else [flag, draw(values(files))]
        elif kind < 8:
            argv.append(draw(values(files)))  # a positional argument, or junk
        else:
            argv.append(draw(st.sampled_from(["--bogus", "-x", "--key=", "--json=1", "-C"])))
    if draw(st.booleans()):
        argv = ["-C", draw(st.sampled_from([".", "/", os.devnull, "nowhere", "\udcff"])), *argv]
    stdin = draw(
        st.sampled_from(
            [
                b"",
                article("Stdin", "From a pipe.").encode(),
                article("Leaky", fuzzing.GH_TOKEN).encode(),
                "标题".encode("gbk"),
                b"\xff\xfe" + "x".encode("utf-16-le"),
            ]
        )
    )
    return [fuzzing.argv_text(a) for a in argv], stdin


# ---------------------------------------------------------------------------- running


def outcome_ok(argv: list[str], code: int, out: str, err: str) -> None:
    if argv[:1] == ["scan"] and code == 1 and not err:
        return  # findings: the report is on stdout, as a linter's
    fuzzing.check_refusal(code, out, err, argv)


def test_every_command_line_ends_as_a_user_expects(blog: Blog) -> None:
    files = material(blog)

    @given(line=command_lines(files))
    @fuzzing.budget(2.5)
    def one(line: tuple[list[str], bytes]) -> None:
        fuzzing.tried("cli")
        argv, stdin = line
        before = fuzzing.written(blog.root)
        code, out, err = fuzzing.in_process(blog.root, argv, stdin)
        outcome_ok(argv, code, out, err)
        if code != 0:
            assert fuzzing.written(blog.root) == before, (argv, err)

    one()


def test_raw_argv_bytes_through_a_real_process(blog: Blog) -> None:
    """argv as bytes (not UTF-8, control characters, a credential), as a shell passes them."""
    files = material(blog)
    raw = st.one_of(
        st.binary(min_size=0, max_size=12).map(lambda b: b.replace(b"\x00", b"")),
        st.sampled_from([b"\xff", b"caf\xe9", b"\xed\xa0\x80", b"\x1b]0;title\x07"]),
        st.just(fuzzing.CREDENTIAL.encode()),
    )
    flags = st.sampled_from([b"--key", b"--target", b"--topic", b"--at", b"--asset", b"--allow"])

    @given(pairs=st.lists(st.tuples(flags, raw), min_size=1, max_size=3))
    @fuzzing.budget(0.3)
    def one(pairs: list[tuple[bytes, bytes]]) -> None:
        fuzzing.tried("cli-process")
        argv = [b"submit", b"--source", files["good.mdx"].encode()]
        if not any(flag == b"--key" for flag, _ in pairs):
            argv += [b"--key", b"raw"]
        for flag, value in pairs:
            argv += [flag, value]
        before = fuzzing.written(blog.root)
        proc = subprocess.run(
            [sys.executable.encode(), b"-m", b"gitpub", b"-C", str(blog.root).encode(), *argv],
            capture_output=True,
            timeout=120,
            env=os.environ,
        )
        out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
        outcome_ok(["submit"], proc.returncode, out, err)
        if proc.returncode != 0:
            assert fuzzing.written(blog.root) == before, (argv, err)

    one()


ENV = {
    "GITPUB_CLOCK_SKEW": ("", "0", "1.5", "-3600", "nan", "inf", "1e12", "abc", "١٠", "1_0"),
    "GITPUB_NODE": ("", "node-2", "a\nBlog-Job-Id: forged", fuzzing.GH_TOKEN, "\u202e"),
    "GITPUB_STORE": ("", "sqlite:///x.db", "mysql://u:p@h/db", "postgresql"),
    "GITPUB_CRASH_AT": ("", "nowhere", "after_nothing"),
    "GITPUB_WRITER": ("", "1", "0"),
}
"""What the fuzzer sets: every variable gitpub reads (GITPUB_DEBUG aside: it turns a bug
into a traceback on purpose; GITPUB_CRASH_AT is given only names that are no crash point).
A store URL that reaches a database server is the shared-store suite's to try."""


def test_environment_variables_gitpub_reads(blog: Blog) -> None:
    files = material(blog)
    envs = st.fixed_dictionaries(
        {},
        optional={
            name: st.one_of(st.sampled_from(choices), fuzzing.words().map(fuzzing.argv_text))
            for name, choices in ENV.items()
        },
    )
    commands = st.sampled_from(
        [
            ["submit", "--key", "env", "--source", files["good.mdx"], "--json"],
            ["status", "--json"],
            ["show", "--key", "env"],
            ["run", "--until-idle"],
        ]
    )

    @given(env=envs, argv=commands)
    @fuzzing.budget(0.3)
    def one(env: dict[str, str], argv: list[str]) -> None:
        fuzzing.tried("env")
        env = {k: v.replace("\udcff", "").replace("\udc80", "") for k, v in env.items()}
        before = fuzzing.written(blog.root)
        res = blog.blogpub(*argv, env=env)
        fuzzing.check_refusal(res.returncode, res.stdout, res.stderr, (env, argv))
        if res.returncode != 0:
            assert fuzzing.written(blog.root) == before, (env, argv, res.stderr)

    one()


# ---------------------------------------------------------------------------- what it found
# Each shrunk example the fuzzer found while it was built, kept as a plain test.


def test_found_a_usage_error_never_repeats_a_token_or_a_credential(blog: Blog) -> None:
    """`fonts ghp_…` printed click's "Got unexpected extra argument (ghp_…)" as it was."""
    for argv in (["fonts", fuzzing.GH_TOKEN], ["show", "abcd", fuzzing.CREDENTIAL]):
        code, out, err = fuzzing.in_process(blog.root, argv, b"")
        assert code == 2, err
        assert "Error: Got unexpected extra argument" in err
        fuzzing.check_refusal(code, out, err, argv)


def test_found_refusals_on_a_fresh_clone_leave_no_store_behind(blog: Blog) -> None:
    """`fonts` without a [fonts] table, `resolve X --abandon`, `retry X` and `topic reopen X`
    on a clone that never stored a job each created an empty job database, then refused."""
    for argv, said in (
        (["fonts"], "no [fonts] table; nothing to build"),
        (["resolve", "abcd1234", "--abandon"], "job abcd1234: no such job"),
        (["retry", "abcd1234"], "job abcd1234: no such job"),
        (["topic", "reopen", "s1"], "topic s1: no such session (never closed)"),
    ):
        code, out, err = fuzzing.in_process(blog.root, argv, b"")
        assert code == 1 and said in err, (argv, err)
        assert not (blog.root / ".git" / "blogpub").exists(), argv
