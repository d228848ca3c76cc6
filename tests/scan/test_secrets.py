"""Secrets at the door and on the way: submit refuses, --allow publishes as written, the scan
command, and step outputs that leak (all with real git and real SQLite)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from testing import secret_corpus
from testing.fixtures import CONFIG, Blog, article, git

from gitpub import Publisher, SecretsFound

TOKEN = secret_corpus.one("np.github.1")  # ghp_… from Nosey Parker's examples
SLACK = secret_corpus.one("np.slack.2")


def _state(blog: Blog) -> Path:
    return blog.root / ".git" / "blogpub"


def _never_persisted(blog: Blog, secret: str) -> None:
    for path in _state(blog).rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in blog.ok("status").stdout


def _source(blog: Blog, text: str) -> Path:
    src = blog.root.parent / "source.mdx"
    src.write_text(text, encoding="utf-8")
    return src


def _refused(blog: Blog, text: str) -> str:
    """Submit `text`, expect the refusal, return the fingerprint it names."""
    res = blog.blogpub("submit", "--key", "k", "--source", str(_source(blog, text)))
    assert res.returncode == 1, res.stderr
    return _fingerprint(res.stderr)


def _fingerprint(stderr: str) -> str:
    found = re.search(r"\(fingerprint ([0-9a-f]{20})\)", stderr)
    assert found, stderr
    return found.group(1)


def test_submit_refuses_a_secret_and_records_nothing(blog: Blog) -> None:
    src = _source(blog, article("Leak", f"Intro.\n\nOur deploy token is {TOKEN} oops."))
    res = blog.blogpub("submit", "--key", "k", "--source", str(src))
    assert res.returncode == 1
    (line,) = res.stderr.splitlines()
    fp = _fingerprint(line)
    assert line == (
        f"git blogpub: {src} line 7: github-pat (fingerprint {fp}): "
        f"nothing was recorded; remove it or pass --allow {fp}"
    )
    assert TOKEN not in res.stderr + res.stdout
    assert not _state(blog).exists()  # no state dir, no database, no job folder


def test_submit_allow_publishes_the_text_as_written(blog: Blog) -> None:
    text = article("Not a secret", f"This revoked token is quoted on purpose: {TOKEN}.")
    fp = _refused(blog, text)
    job_id = blog.submit("k", text, "--allow", fp)
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    published = blog.remote_file(shown["job"]["target_path"]).decode()
    assert published == text  # byte for byte, the token included
    # The events name the fingerprint a person allowed, never the text it stands for.
    events = json.dumps(shown["events"])
    assert fp in events and TOKEN not in events
    submitted = next(e for e in shown["events"] if e["step"] == "submit")
    assert submitted["detail"]["allow"] == [fp]


def test_allow_covers_only_its_own_finding(blog: Blog) -> None:
    text = article("Two", f"Quoted on purpose: {TOKEN}.\n\nLeaked by mistake: {SLACK}.")
    fp = _refused(blog, text)
    res = blog.blogpub("submit", "--key", "k", "--source", str(_source(blog, text)), "--allow", fp)
    assert res.returncode == 1
    assert "line 7: slack-bot-token" in res.stderr and fp not in res.stderr
    assert not _state(blog).exists()


def test_config_allow_list_is_honoured(blog: Blog) -> None:
    text = article("Config", f"Quoted on purpose: {TOKEN}.")
    fp = _refused(blog, text)
    (blog.root / ".blogpub.toml").write_text(CONFIG + f'\n[scan]\nallow = ["{fp}"]\n')
    blog.git("commit", "--quiet", "-am", "allow a quoted token")
    blog.git("push", "--quiet", "origin", "main")
    job_id = blog.submit("k", text)
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    assert TOKEN in blog.remote_file(shown["job"]["target_path"]).decode()


def test_a_bad_allow_value_is_a_clear_error(blog: Blog) -> None:
    src = _source(blog, article("x", "clean"))
    res = blog.blogpub("submit", "--key", "k", "--source", str(src), "--allow", "nope")
    assert res.returncode == 1 and "--allow 'nope': not a fingerprint" in res.stderr
    (blog.root / ".blogpub.toml").write_text(CONFIG + '\n[scan]\nallow = ["nope"]\n')
    res = blog.blogpub("submit", "--key", "k", "--source", str(src))
    assert res.returncode == 1 and "scan.allow entry 'nope' is not a fingerprint" in res.stderr


def test_the_api_raises_a_typed_error_carrying_the_findings(blog: Blog) -> None:
    pub = Publisher(blog.root)
    with pytest.raises(SecretsFound) as caught:
        pub.submit(article("API", f"token {TOKEN}\n\nand {SLACK}"), key="a")
    kinds = [(f.kind, f.line) for f in caught.value.findings]
    assert kinds == [("github-pat", 5), ("slack-bot-token", 7)]
    assert TOKEN not in str(caught.value)
    assert not _state(blog).exists()
    allowed = [f.fingerprint for f in caught.value.findings]
    job = pub.submit(article("API", f"token {TOKEN}\n\nand {SLACK}"), key="a", allow=allowed)
    assert job.created


def test_a_redaction_marker_in_the_source_is_refused_whatever_the_scan_step(blog: Blog) -> None:
    # A blog that replaced the scan step with another gate still gets the door's guarantee.
    (blog.root / ".blogpub.toml").write_text(CONFIG + '\n[steps]\nscan = "builtin:mdx"\n')
    for text in (f"token {TOKEN}", "token [REDACTED:github-token]"):
        res = blog.blogpub("submit", "--key", "k", "--source", str(_source(blog, text)))
        assert res.returncode == 1 and "nothing was recorded" in res.stderr
    assert not _state(blog).exists()


@pytest.mark.parametrize("scan_step", ['"builtin:secrets"', '"builtin:mdx"'])
def test_a_draft_step_emitting_a_secret_goes_to_review_and_is_never_persisted(
    blog: Blog, scan_step: str
) -> None:
    draft = blog.root.parent / "draft.py"
    draft.write_text(
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        f"print(json.dumps({{'text': req['source'] + '\\nslack: {SLACK}\\n'}}))\n"
    )
    config = CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{draft}"]\nscan = {scan_step}\n'
    (blog.root / ".blogpub.toml").write_text(config)
    blog.trust()
    before = blog.remote_log()
    job_id = blog.submit("s", article("Draft", "A harmless source."))
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    review = next(e for e in shown["events"] if e["to_state"] == "REVIEW")
    assert "draft step output holds a slack-bot-token" in review["detail"]["reason"]
    assert "(line 7)" in review["detail"]["reason"]
    assert blog.remote_log() == before
    _never_persisted(blog, SLACK)


def test_resolve_continue_allow_publishes_the_restored_text(blog: Blog) -> None:
    draft = blog.root.parent / "draft.py"
    draft.write_text(
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        f"print(json.dumps({{'text': req['source'] + '\\nslack: {SLACK}\\n'}}))\n"
    )
    (blog.root / ".blogpub.toml").write_text(
        CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{draft}"]\n'
    )
    blog.trust()
    job_id = blog.submit("s", article("Draft", "A harmless source."))
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    review = next(e for e in shown["events"] if e["to_state"] == "REVIEW")
    fp = _fingerprint(review["detail"]["reason"])
    target = shown["job"]["target_path"]
    restored = article("Draft", "A harmless source.") + f"\nslack: {SLACK}\n"

    def restore() -> None:
        """The person puts the text back on the job branch (the draft kept it redacted)."""
        fix = blog.root.parent / "fix"
        blog.git("fetch", "--quiet", "origin")
        blog.git("branch", "--quiet", "-D", f"blogpub/job/{job_id}", check=False)
        blog.git(
            "worktree", "add", "--quiet", "-b", f"blogpub/job/{job_id}", str(fix), "origin/main"
        )
        (fix / target).write_text(restored)
        git(fix, "add", target)
        git(fix, "commit", "--quiet", "-m", "restore the quoted token")
        blog.git("worktree", "remove", str(fix))  # gitpub checks the branch out to commit it

    # Without --allow it is still a secret: REVIEW again, and still never persisted.
    restore()
    blog.ok("resolve", job_id, "--continue")
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "REVIEW"
    _never_persisted(blog, SLACK)
    restore()
    blog.ok("resolve", job_id, "--continue", "--allow", fp)
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED", shown["events"][-4:]
    assert blog.remote_file(target).decode() == restored
    cont = [e for e in shown["events"] if e["step"] == "operator:continue"]
    assert cont[-1]["detail"]["allow"] == [fp] and SLACK not in json.dumps(shown["events"])


def test_scan_command_exit_codes_and_json(blog: Blog, tmp_path: Path) -> None:
    leaky = tmp_path / "leaky.md"
    leaky.write_text(f"# Notes\n\nThe token: {TOKEN}\n")
    clean = tmp_path / "clean.md"
    clean.write_text("# Notes\n\nNothing to see; api_key = os.environ['API_KEY'].\n")
    res = blog.blogpub("scan", "--json", str(leaky), str(clean))
    assert res.returncode == 1
    (finding,) = res.json()["findings"]
    assert finding["path"] == str(leaky) and finding["line"] == 3
    assert finding["kind"] == "github-pat" and re.fullmatch(r"[0-9a-f]{20}", finding["fingerprint"])
    assert TOKEN not in res.stdout + res.stderr
    human = blog.blogpub("scan", str(leaky))
    assert human.returncode == 1
    assert human.stdout == f"{leaky} line 3: github-pat (fingerprint {finding['fingerprint']})\n"
    assert blog.blogpub("scan", str(clean)).returncode == 0
    # The file as an editor may save it: UTF-16 behind its mark reads as the same text.
    wide = tmp_path / "leaky-utf16.md"
    wide.write_bytes(leaky.read_text().encode("utf-16"))
    assert blog.blogpub("scan", str(wide)).stdout == human.stdout.replace(str(leaky), str(wide))
    piped = blog.blogpub("scan", "--json", "-", input=leaky.read_text())
    assert piped.returncode == 1 and piped.json()["findings"][0]["path"] == "<stdin>"
    assert blog.blogpub("scan").returncode == 2
    assert blog.blogpub("scan", str(tmp_path / "missing.md")).returncode == 2
    # A fingerprint allowed in the repository's config is not reported.
    (blog.root / ".blogpub.toml").write_text(
        CONFIG + f'\n[scan]\nallow = ["{finding["fingerprint"]}"]\n'
    )
    assert blog.blogpub("scan", str(leaky)).returncode == 0


def test_a_request_uuid_as_key_stays_readable(blog: Blog) -> None:
    # Output and events are sanitized value by value: our field names ("key",
    # "idempotency_key") are no context that makes a request id look like a secret.
    key = "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b"
    job_id = blog.submit(key, article("Keyed", "A plain article."), "--topic", "release notes")
    shown = blog.job(job_id)
    assert shown["job"]["idempotency_key"] == key
    submitted = next(e for e in shown["events"] if e["step"] == "submit")
    assert submitted["detail"]["key"] == key


@pytest.mark.parametrize("where", ["--topic", "--target", "--asset"])
def test_a_name_holding_a_token_is_refused_at_the_door(blog: Blog, where: str) -> None:
    # Names are text too: a token in a topic, a target or an asset name would be persisted
    # (and pushed, as a file name) raw, or published under a redacted name the client never
    # asked for; it is refused before anything is recorded.
    src = blog.root.parent / "named.md"
    src.write_text(article("Named", "A plain article."))
    image = blog.root.parent / "plain.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n")
    value = {
        "--topic": f"see {TOKEN}",
        "--target": f"content/posts/note-{TOKEN}.md",
        "--asset": f"{image}=img-{TOKEN}.png",
    }[where]
    res = blog.blogpub("submit", "--key", "named", "--source", str(src), where, value)
    assert res.returncode == 1 and len(res.stderr.splitlines()) == 1, res.stderr
    assert "looks like a secret" in res.stderr and TOKEN not in res.stderr
    assert not (blog.root / ".git" / "blogpub").exists()
