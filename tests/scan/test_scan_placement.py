"""The scanner on material it was not built from: vendor token formats wherever a writer
pastes them (bare, in a sentence, glued to Chinese text, in code, in an assignment), real
passwords in the forms people paste them, demo values real tutorials show, and real blog
posts with code."""

from __future__ import annotations

import base64
import math
import random
import subprocess
import sys
import textwrap

import pytest
from testing.paths import ROOT
from testing.secret_corpus import has_code, posts
from testing.secret_formats import DEMOS, FORMATS, PLACEMENTS, cases, passwords

from gitpub import scan
from gitpub.scan import judge
from gitpub.scan.sanitize import sanitize, sanitize_name


def _missed(place: str) -> list[str]:
    return [c.format.name for c in cases() for put in PLACEMENTS[place] if not scan.scan(put(c))]


def test_the_independent_corpus_is_big_enough_to_mean_something() -> None:
    assert len(FORMATS) >= 100
    assert sum(f.ai for f in FORMATS) >= 25
    assert len({c.token for c in cases()}) == len(cases())  # no two generated alike


@pytest.mark.parametrize("place", ["bare", "sentence", "chinese", "code"])
def test_at_least_90_percent_of_self_identifying_tokens_are_found_in_prose(place: str) -> None:
    total = len(cases()) * len(PLACEMENTS[place])
    missed = _missed(place)
    assert len(missed) <= math.floor(0.10 * total), missed


def test_at_least_97_percent_of_self_identifying_tokens_are_found_in_assignments() -> None:
    total = len(cases()) * len(PLACEMENTS["assignment"])
    missed = _missed("assignment")
    assert len(missed) <= math.floor(0.03 * total), missed


def test_every_ai_provider_format_is_found_in_every_sentence() -> None:
    missed = sorted(
        {
            c.format.name
            for c in cases()
            if c.format.ai
            for put in PLACEMENTS["sentence"] + PLACEMENTS["chinese"]
            if not scan.scan(put(c))
        }
    )
    assert missed == []


def test_a_token_glued_to_full_width_punctuation_is_found_as_with_a_space() -> None:
    token = next(c.token for c in cases() if c.format.name == "stripe-secret")
    spaced, glued = f"令牌是 {token} ，请保管", f"令牌是{token}，请保管"
    assert [f.kind for f in scan.scan(spaced)] == [f.kind for f in scan.scan(glued)] != []
    # The redaction takes the token and nothing of the Chinese around it.
    assert sanitize(glued) == "令牌是[REDACTED:stripe-access-token]，请保管"


def test_real_looking_passwords_are_found_in_every_form_people_paste_them() -> None:
    missed = [form for form, text in passwords() if not scan.scan(text)]
    assert missed == []
    for _, text in passwords():
        clean = sanitize(text)
        assert scan.REDACTION_MARK in clean and scan.scan(clean) == []


@pytest.mark.parametrize("text", DEMOS)
def test_demo_values_real_tutorials_show_are_no_findings(text: str) -> None:
    assert scan.scan(text) == []
    assert sanitize(text) == text


def test_at_most_1_in_100_real_posts_with_code_is_flagged() -> None:
    with_code = [(name, text) for name, text in posts() if has_code(text)]
    assert len(with_code) >= 2000
    flagged = [name for name, text in with_code if scan.scan(text, path=name)]
    assert len(flagged) <= math.floor(0.01 * len(with_code)), flagged


def _pem(seed: str) -> str:
    rng = random.Random(seed)
    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(600))).decode()
    lines = "\n".join(textwrap.wrap(body, 64))
    return f"-----BEGIN PRIVATE KEY-----\n{lines}\n-----END PRIVATE KEY-----"


def test_a_pem_header_named_in_prose_is_no_finding_a_key_block_is() -> None:
    prose = (
        "A key file starts with the line -----BEGIN PRIVATE KEY----- and then a few dozen "
        "lines of base64 follow, until the closing -----END PRIVATE KEY----- line."
    )
    assert scan.scan(prose) == []
    key = _pem("a key")
    (finding,) = scan.scan(f"Our deploy key, by mistake:\n\n{key}\n")
    assert finding.line == 3
    assert key.splitlines()[1] not in sanitize(key)


def test_a_name_or_key_redacts_any_credential_it_binds_an_article_only_a_real_one() -> None:
    # As a key (`submit --key`), a credential word bound to a value is redacted whatever the
    # value; in an article the same line is a demo value and is let through.
    assert sanitize_name("password=aaaaaaaa1") == "password=[REDACTED:credential]"
    assert sanitize_name("deploy-token: q1") == "deploy-token: [REDACTED:credential]"
    assert sanitize("password=aaaaaaaa1") == "password=aaaaaaaa1"
    assert scan.scan("password=aaaaaaaa1", name=True)[0].kind == "credential"
    # Names without a credential, and references, stay readable.
    for name in ("blog-post-42", "author=jane", "token=${DEPLOY_TOKEN}", "weekly/2026-08"):
        assert sanitize_name(name) == name
    # What the scanner finds in a text it finds in a name, named the same.
    token = next(c.token for c in cases() if c.format.name == "github-classic")
    assert sanitize_name(f"job {token}") == sanitize(f"job {token}") != f"job {token}"


@pytest.mark.parametrize(
    "value",
    ["123456", "a12345678", "strapiPassword", "mypassword", "editor", "dev:dev", "user:pass",
     "{{password}}", "xxxxxxxxxxxx", "super_s3cr3t", "P@ssw0rd!", "abc123efg456",
     "YOUR_ACCESS_TOKEN", "SPRING2024", "Yup.string()", "chat2db/chat2db",
     "https://auth.myapp.io/magic", "/etc/mysql/app.cnf", "noreply@myapp.io",
     "pk_test_" + "Y2xlcmsuZXhhbXBsZS5jb20k", "dXNlcm5hbWU6cGFzc3dvcmQ="],
)  # fmt: skip
def test_placeholders_are_no_passwords(value: str) -> None:
    assert not judge.password(value)


@pytest.mark.parametrize(
    "value", ["Rk4Tn8vQ2zLm", "Xq7#mP2vL9kz", "k2j4h5g6f7d8s9a0", "vzihlaquknriqlht"]
)
def test_chosen_passwords_are_passwords(value: str) -> None:
    assert judge.password(value) and not judge.placeholder(value)


def test_the_placement_benchmark_runs_and_reports_every_row() -> None:
    script = ROOT / "benchmarks" / "bench_scan_placement.py"
    out = subprocess.run(
        [sys.executable, str(script), "--quick", "--gitpub-only"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    for row in ("bare", "sentence", "chinese, glued", "assignment", "real posts flagged", "MB/s"):
        assert any(line.startswith(row) for line in out.splitlines()), (row, out)
