"""The secret ruleset: recall on public scanners' true positives, false positives on real
Markdown, and the rules every check shares (placeholders, lines, fingerprints)."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
from testing.secret_corpus import markdown, one, prose, secrets, tokens

from gitpub import scan
from gitpub.scan import rules
from gitpub.scan.re2 import translate
from gitpub.scan.sanitize import sanitize, sanitize_obj


def test_the_corpus_is_big_enough_to_mean_something() -> None:
    rows = secrets()
    assert len(rows) >= 300
    assert len({r["rule"] for r in rows}) >= 100
    assert len(markdown()) >= 2000


def test_at_least_95_percent_of_the_corpus_is_caught_in_its_original_line() -> None:
    # Formats that name themselves; the password examples are demo values (see tokens()).
    rows = tokens()
    assert len(rows) >= 250
    missed = [r["rule"] for r in rows if not scan.scan(r["example"])]
    assert len(missed) <= math.floor(0.05 * len(rows)), missed


def test_at_least_95_percent_of_the_corpus_is_caught_as_a_bare_string_in_prose() -> None:
    rows = tokens()
    missed = [r["rule"] for r in rows if not scan.scan(prose(r["bare"]))]
    assert len(missed) <= math.floor(0.05 * len(rows)), missed


def test_real_markdown_raises_findings_in_at_most_0_05_percent_of_files() -> None:
    files = markdown()
    flagged = [name for name, text in files if scan.scan(text, path=name)]
    assert len(flagged) <= math.floor(0.0005 * len(files)), flagged


def test_sanitizing_leaves_no_caught_secret_behind() -> None:
    for row in secrets():
        text = prose(row["bare"])
        if not scan.scan(text):
            continue
        clean = sanitize(text)
        assert scan.REDACTION_MARK in clean
        assert scan.scan(clean) == [], row["rule"]


@pytest.mark.parametrize(
    "text",
    [
        'api_key = os.environ["API_KEY"]',
        "token: process.env.GITHUB_TOKEN_VALUE",
        "password: ${DB_PASSWORD}",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        'Password: cfg.Section("mysql").Key("password").String()',
        "Set the password:\n\n`createuser --pwprompt deploy_user_2024`",
        "secret_key = <your-secret-key-here>",
        # demo passwords a tutorial shows: dictionary words, leetspeak, user name again
        "redis://:s3cr3tPa55w0rd@localhost:6379/0",
        "Authorization: Basic dXNlcjpzM2NyM3RQYTU1dzByZA==",
        "machine api.example.com login bob password hunter2",
    ],
)
def test_placeholders_and_documented_examples_are_no_findings(text: str) -> None:
    assert scan.scan(text) == []
    assert sanitize(text) == text


def test_a_generic_rule_never_pairs_a_keyword_with_a_value_lines_below() -> None:
    value = "Zx8qLw2mPv9tRk4nBc7y"
    assert scan.scan(f"api_key = {value}")  # on one line it is a secret
    assert scan.scan(f"the api_key:\n\n{value}") == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("redis://:Vq8mLz2TkR4w@localhost:6379/0", "Vq8mLz2TkR4w"),
        ("Authorization: Basic Ym9iOlZxOG1MejJUa1I0dw==", "Ym9iOlZxOG1MejJUa1I0dw=="),
        ("machine api.example.com login bob password Vq8mLz2TkR4w", "Vq8mLz2TkR4w"),
        ("数据库密码：Xk9#mP2qLw8z，请妥善保管", "Xk9#mP2qLw8z"),
        ("口令=Qm7!vR2x#Lp9 用于测试环境", "Qm7!vR2x#Lp9"),
    ],
)
def test_credentials_written_in_prose_are_caught(text: str, secret: str) -> None:
    assert len(scan.scan(text)) == 1
    assert secret not in sanitize(text)


def test_a_finding_names_kind_line_and_fingerprint_never_the_secret() -> None:
    token = one("np.github.1")
    text = f"line one\nthe token {token} here\n"
    (finding,) = scan.scan(text)
    assert finding.line == 2
    assert token not in repr(finding)
    assert re.fullmatch(r"[0-9a-f]{20}", finding.fingerprint)
    # Stable across processes and runs: a fingerprint in .blogpub.toml keeps meaning the same.
    code = f"from gitpub import scan; print(scan.scan({text!r})[0].fingerprint)"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert other.stdout.strip() == finding.fingerprint
    # Of kind and secret: the same token elsewhere has the same fingerprint, another one not.
    assert scan.scan(prose(token))[0].fingerprint == finding.fingerprint
    assert scan.scan(prose(one("np.github.1", 1)))[0].fingerprint != finding.fingerprint


def test_an_allowed_fingerprint_is_kept_as_written_and_only_that_one() -> None:
    keep, other = one("np.github.1"), one("np.slack.2", 1)
    text = f"{keep}\n{other}\n"
    allowed = scan.scan(keep)[0].fingerprint
    assert [f.kind for f in scan.scan(text, allow=[allowed])] == [scan.scan(other)[0].kind]
    clean = sanitize(text, [allowed])
    assert keep in clean and other not in clean


def test_keys_of_persisted_objects_are_sanitized_too() -> None:
    token = one("np.github.1")
    clean = sanitize_obj({token: [token, {"x": token}]})
    assert token not in repr(clean)


def test_the_sanitizer_remembers_only_clean_texts_and_a_bounded_number_of_them() -> None:
    # A text found clean is not scanned again; one holding a secret always is, every time.
    token = one("np.github.1")
    line = f"step failed: token {token}"
    for _ in range(3):
        assert token not in sanitize(line)
        assert token not in sanitize_obj({"reason": line})["reason"]
    assert all(token not in text for text in scan._clean.texts)
    for i in range(scan._Clean.MAX_TEXTS + 10):
        sanitize(f"clean field {i}")
    assert 0 < len(scan._clean.texts) <= scan._Clean.MAX_TEXTS
    assert token not in sanitize(line)


def test_a_short_text_wakes_every_keyword_it_holds() -> None:
    # The pairs a short text is looked up by stand in for a search of every keyword in it:
    # at the start, at the end, overlapping, in CJK, and a text of one character or none.
    shipped = rules.builtin()  # a fresh one: a long text scanned before switches to the pattern
    ruleset = rules.Ruleset(shipped.raw, shipped.allowlists, shipped.judges)
    texts = ["", "k", "key_sha256", "password=hunter2 token ghp_", "密码：口令", "xsk", "00"]
    texts += [" ".join(ruleset.keywords[i::7]) for i in range(7)]
    for text in texts:
        lowered = text.lower()[:1999]
        assert ruleset.present(lowered) == {k for k in ruleset.keywords if k in lowered}


def test_a_redaction_marker_is_itself_a_finding_for_the_gates() -> None:
    (marker,) = scan.markers("Our deploy token is [REDACTED:github-pat] oops.")
    assert marker.kind == "redacted github-pat" and marker.line == 1


@pytest.mark.parametrize(
    ("re2", "python"),
    [
        (r"\b(p8e-(?i)[a-z0-9]{32})", r"\b(p8e-(?i:[a-z0-9]{32}))"),
        (r"dp\.pt\.(?i)[a-z0-9]{43}", r"dp\.pt\.(?i:[a-z0-9]{43})"),
        (r"(?:a(?i)b|c)d", r"(?:a(?i:b)|c)d"),
        (r"pat[[:alnum:]]{14}", r"pat[a-zA-Z0-9]{14}"),
        (r"x\z", r"x\Z"),
        (r"[^]]+(?i)k", r"[^]]+(?i:k)"),
    ],
)
def test_re2_patterns_translate_to_python(re2: str, python: str) -> None:
    assert translate(re2) == python
    re.compile(python)


def test_every_shipped_rule_compiles() -> None:
    ruleset = rules.builtin()
    assert len(ruleset.rules) > 300
    for rule in ruleset.rules:
        assert rule.regex is not None
        for allowlist in rule.allowlists:
            for regex in allowlist.regexes:
                regex.get()


def test_the_scanner_loads_neither_pygit2_nor_fonttools() -> None:
    code = (
        "import sys; from gitpub import scan; from gitpub.scan import sanitize; "
        "scan.scan('key = abc'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygit2', 'fontTools')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_secret_deep_inside_a_very_long_line_is_still_found() -> None:
    # Long lines are scanned in overlapping windows (Python's engine backtracks); a secret
    # on a window boundary must not fall between two of them.
    from gitpub.scan.detect import OVERLAP, WINDOW

    token = one("np.github.1")
    for at in (WINDOW - OVERLAP - 10, WINDOW - 20, 3 * WINDOW + 7):
        line = "x " * (at // 2) + token + " y" * 4000
        (finding,) = scan.scan(f"intro\n{line}\n")
        assert finding.line == 2 and token not in sanitize(line)


def test_every_format_an_earlier_release_let_through_is_a_finding_of_its_own() -> None:
    # The formats a published article once carried intact past the old hand-written list,
    # one per line: each must be caught, on its own line.
    bare = [
        one("np.stripe.1"),
        one("np.twilio.1"),
        one("np.sendgrid.1"),
        one("np.npm.1"),
        one("np.pypi.1"),
        one("np.slack.3"),
        one("np.slack.5"),
        one("np.azure.1"),
        one("np.telegram.1"),
        one("np.huggingface.1"),
        one("np.digitalocean.1"),
        one("np.gitlab.2"),
        one("np.aws.2", 2),
        one("np.pem.1"),
        "redis://:Vq8mLz2TkR4w@cache.internal:6379/0",
        "Authorization: Basic Ym9iOlZxOG1MejJUa1I0dw==",
        "machine api.example.com login bob password Vq8mLz2TkR4w",
        "数据库密码：Xk9#mP2qLw8z",
        "?sv=2021-06-08&sr=b&sig=Xk9mP2qLw8zR4tN6vB1cY3dF5gH7jK0lZ%2Bq8w%3D",
        "bot.run('MTA4NzY1NDMyMTA5ODc2NTQzMg.GhIjKl.a1b2c3d4e5f6g7h8i9j0kLmNoPqRsTuVwXy')",
    ]
    lines = [b.replace("\n", " ") if "PRIVATE KEY" not in b else b for b in bare]
    text = "\n\n".join(lines)
    found = {f.line for f in scan.scan(text)}
    starts = [text.count("\n", 0, text.index(line)) + 1 for line in lines]
    assert [s for s in starts if s not in found] == []
