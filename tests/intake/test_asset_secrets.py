"""Assets are held to the source's rule: a text asset holding a secret is refused at the door
with the source's message and `--allow` escape, binary assets pass, and the prepare-time
secret step and the built-in last word read every text asset the job writes."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from testing import secret_corpus
from testing.fixtures import CONFIG, Blog, make_blog

from gitpub import Publisher, SecretsFound

TOKEN = secret_corpus.one("np.github.1")  # ghp_… from Nosey Parker's examples
SLACK = secret_corpus.one("np.slack.2")
BUNDLES = CONFIG.replace(
    'content = ["content/posts"]',
    'content = ["content/posts"]\nsuffixes = [".md"]\npath = "content/posts/{slug}/index.md"',
)
POST = "---\ntitle: 附件\nslug: with-files\n---\n\nSee the attached files.\n"
FOLDER = "content/posts/with-files"


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / "assets" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path


def _submit(blog: Blog, *args: str) -> tuple[int, str, str]:
    src = blog.root.parent / "post.md"
    src.write_text(POST, encoding="utf-8")
    res = blog.blogpub("submit", "--key", "k", "--source", str(src), *args)
    return res.returncode, res.stdout, res.stderr


def _state(blog: Blog) -> Path:
    return blog.root / ".git" / "blogpub"


@pytest.mark.parametrize(
    ("name", "data", "line", "kind"),
    [
        ("notes.txt", f"Deploy notes.\nOur token is {TOKEN} oops.\n".encode(), 2, "github-pat"),
        (
            "diagram.svg",
            (
                '<svg xmlns="http://www.w3.org/2000/svg">\n'
                f"  <desc>bot {SLACK}</desc>\n  <rect width='1' height='1'/>\n</svg>\n"
            ).encode(),
            2,
            "slack-bot-token",
        ),
        (
            "config.json",
            json.dumps({"name": "demo", "token": TOKEN}, indent=2).encode(),
            3,
            "github-pat",
        ),
        # Saved by an editor in UTF-16 with its byte-order mark, or in Latin-1: still text.
        ("notes-utf16.txt", f"Notes.\r\nToken: {TOKEN}\r\n".encode("utf-16"), 2, "github-pat"),
        (
            "notes-latin1.txt",
            f"Café notes.\nOur token is {TOKEN}.\n".encode("latin-1"),
            2,
            "github-pat",
        ),
    ],
)
def test_a_text_asset_holding_a_secret_is_refused_like_a_source(
    tmp_path: Path, name: str, data: bytes, line: int, kind: str
) -> None:
    blog = make_blog(tmp_path, BUNDLES)
    asset = _file(tmp_path, name, data)
    code, out, err = _submit(blog, "--asset", str(asset))
    assert code == 1
    (message,) = err.splitlines()
    found = re.search(r"\(fingerprint ([0-9a-f]{20})\)", message)
    assert found, message
    fp = found.group(1)
    assert message == (
        f"git blogpub: --asset {asset} line {line}: {kind} (fingerprint {fp}): "
        f"nothing was recorded; remove it or pass --allow {fp}"
    )
    assert TOKEN not in out + err and SLACK not in out + err
    assert not _state(blog).exists()  # no state dir, no database, no job folder

    # dry-run stops at the same door with the same words.
    src = str(blog.root.parent / "post.md")
    res = blog.blogpub("dry-run", "--source", src, "--asset", str(asset))
    assert (res.returncode, res.stderr) == (1, err)

    # The person judged it no secret: --allow publishes the asset as written.
    code, out, err = _submit(blog, "--asset", str(asset), "--allow", fp)
    assert code == 0, err
    blog.ok("run", "--until-idle")
    assert blog.remote_file(f"{FOLDER}/{name}") == data
    assert blog.remote_file(f"{FOLDER}/index.md") == POST.encode()


def test_a_binary_asset_is_not_scanned(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, BUNDLES)
    # Not UTF-8 (a PNG's first byte is 0x89), even with a token's letters among its bytes.
    png = b"\x89PNG\r\n\x1a\n" + TOKEN.encode() + bytes(range(256))
    cover = _file(tmp_path, "cover.png", png)
    code, _, err = _submit(blog, "--asset", str(cover))
    assert code == 0, err
    blog.ok("run", "--until-idle")
    assert blog.remote_file(f"{FOLDER}/cover.png") == png


def test_the_api_refuses_a_text_asset_holding_a_secret(tmp_path: Path) -> None:
    blog = make_blog(tmp_path, BUNDLES)
    pub = Publisher(blog.root)
    notes = f"line one\n{TOKEN}\n".encode()
    with pytest.raises(SecretsFound) as caught:
        pub.submit(POST, key="a", assets={"notes.txt": notes})
    (finding,) = caught.value.findings
    assert (finding.kind, finding.line) == ("github-pat", 2)
    assert str(caught.value).startswith("asset 'notes.txt' for key 'a' line 2: github-pat")
    assert not _state(blog).exists()
    job = pub.submit(POST, key="a", assets={"notes.txt": notes}, allow=[finding.fingerprint])
    assert job.created


def test_prepare_scans_every_text_asset_with_the_step_and_the_builtin_rules(
    tmp_path: Path,
) -> None:
    """A secret may reach prepare past the door: the repository allowed its fingerprint when
    it was submitted and took the allowance back before the job ran. The configured scan step
    is asked about each text asset (and may refuse one), and whatever it answers, the built-in
    ruleset reads them too."""
    log = tmp_path / "scan-requests.jsonl"
    step = tmp_path / "scan_step.py"
    step.write_text(
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        f"with open({str(log)!r}, 'a') as fh:\n"
        "    fh.write(json.dumps([req['path'], req['text']]) + '\\n')\n"
        "bad = 'INTERNAL ONLY' in req['text']\n"
        "print(json.dumps({'ok': not bad, 'reason': 'internal note', 'line': 1}"
        " if bad else {'ok': True}))\n"
    )
    steps = f'\n[steps]\nscan = ["{sys.executable}", "{step}"]\n'
    notes = f"Deploy notes.\nOur token is {TOKEN} oops.\n"
    asset = _file(tmp_path, "notes.txt", notes.encode())
    blog = make_blog(tmp_path, BUNDLES + steps)
    fp = re.findall(r"fingerprint ([0-9a-f]{20})", _submit(blog, "--asset", str(asset))[2])[0]
    config = blog.root / ".blogpub.toml"
    config.write_text(BUNDLES + f'\n[scan]\nallow = ["{fp}"]\n' + steps)
    blog.trust()
    code, out, err = _submit(blog, "--asset", str(asset), "--json")
    assert code == 0, err
    job_id = json.loads(out)["job_id"]
    config.write_text(BUNDLES + steps)  # the allowance taken back before the job ran
    before = blog.remote_log()

    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "REVIEW"
    reason = next(e for e in shown["events"] if e["step"] == "prepare:done")["detail"]["reason"]
    assert reason == f"secrets: {FOLDER}/notes.txt: github-pat (fingerprint {fp}) (line 2)"
    asked = [json.loads(row) for row in log.read_text().splitlines()]
    assert asked == [[f"{FOLDER}/index.md", POST], [f"{FOLDER}/notes.txt", notes]]
    assert blog.remote_log() == before

    # The step's own refusal of an asset names the asset.
    internal = _file(tmp_path, "internal.txt", b"INTERNAL ONLY: the launch date.\n")
    res = blog.blogpub(
        "submit", "--key", "k2", "--source", str(blog.root.parent / "post.md"),
        "--asset", str(internal), "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    blog.ok("run", "--until-idle")
    shown = blog.job(res.json()["job_id"])
    assert shown["job"]["state"] == "REVIEW"
    reason = next(e for e in shown["events"] if e["step"] == "prepare:done")["detail"]["reason"]
    assert reason == f"scan: {FOLDER}/internal.txt: internal note (line 1)"
    assert blog.remote_log() == before
