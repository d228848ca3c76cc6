"""The small things an operator meets on call: relay on a stopped job says what to do, reasons
name only what someone gave, font outputs follow the umask, fontTools speaks into the job's
events, a takeover after a crash is in the history, a reopen of an unknown topic fails."""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont, newTable
from testing.fixtures import CONFIG, Blog, article, make_blog
from testing.fontkit import _tiny, fonts_table, make_font_blog, tiny_font

WOFF2 = "public/fonts/blog.woff2"


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_relay_on_a_job_in_review_names_the_commands(blog: Blog) -> None:
    job_id = blog.submit("bad", article("Broken", "<Note>\n\nnever closed\n"))
    blog.ok("run", "--until-idle")
    res = blog.blogpub("relay", job_id)
    assert res.returncode == 1
    (line,) = res.stderr.strip().splitlines()
    assert f"job {job_id[:8]} is REVIEW: relay cannot deliver it" in line
    assert f"git blogpub retry {job_id[:8]}" in line and f"git blogpub show {job_id[:8]}" in line


def test_a_bad_draft_path_is_named_as_the_drafts_not_as_target(tmp_path: Path) -> None:
    draft = tmp_path / "draft.py"
    draft.write_text(
        "import json, sys\nreq = json.load(sys.stdin)\n"
        "print(json.dumps({'text': req['source'], 'path': 'elsewhere/post.md'}))\n"
    )
    blog = make_blog(tmp_path, CONFIG + f'\n[steps]\ndraft = ["{sys.executable}", "{draft}"]\n')
    blog.trust()
    job_id = blog.submit("k", article("Astray", "The draft puts it elsewhere."))
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    reason = shown["events"][-1]["detail"]["reason"]
    assert shown["job"]["state"] == "REVIEW"
    assert reason.startswith("draft path elsewhere/post.md: not inside a content folder")
    assert "--target" not in reason


def test_font_outputs_follow_the_umask(tmp_path: Path, umask: None) -> None:
    blog = make_font_blog(tmp_path, fonts_table("fonts/tiny.ttf"), tiny_font(tmp_path / "t.ttf"))
    (blog.root / "content/posts/more.mdx").write_text(article("更多", "我们学习科学。"), "utf-8")
    blog.ok("fonts")
    assert stat.S_IMODE((blog.root / WOFF2).stat().st_mode) == 0o644
    os.umask(0o027)
    (blog.root / "content/posts/more.mdx").write_text(article("更多", "电力水化。"), "utf-8")
    blog.ok("fonts")
    assert stat.S_IMODE((blog.root / WOFF2).stat().st_mode) == 0o640


def test_fonttools_warnings_land_in_the_jobs_events_not_on_stderr(tmp_path: Path) -> None:
    font = TTFont(io.BytesIO(_tiny(map(ord, "的一是在不了有和人这中大为上个国我"), "Tiny")))
    fftm = newTable("FFTM")  # a FontForge table the subsetter does not know: it warns
    fftm.version, fftm.FFTimeStamp, fftm.sourceCreated, fftm.sourceModified = 1, 0, 0, 0
    font["FFTM"] = fftm
    font.save(str(tmp_path / "fftm.ttf"))
    table = fonts_table("fonts/tiny.ttf", extra='engine = "fonttools"\n')
    blog = make_font_blog(tmp_path, table, tmp_path / "fftm.ttf")
    job_id = blog.submit("k", article("新的", "我在这中国。", slug="new"))
    res = blog.ok("run", "--until-idle")
    assert "NOT subset" not in res.stderr and res.stderr == ""
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    (fonts_event,) = [e for e in shown["events"] if e["step"] == "step:fonts"]
    assert any("FFTM NOT subset" in line for line in fonts_event["detail"]["log"])


@pytest.mark.both_stores
def test_a_takeover_after_a_crash_is_recorded(blog: Blog) -> None:
    job_id = blog.submit("k", article("Crashed", "The worker dies after the draft."))
    res = blog.blogpub("run", "--until-idle", env={"GITPUB_CRASH_AT": "after_draft"})
    assert res.returncode == 137
    blog.ok("run", "--until-idle")
    shown = blog.job(job_id)
    assert shown["job"]["state"] == "PUBLISHED"
    (takeover,) = [e for e in shown["events"] if e["step"] == "lease:takeover"]
    assert takeover["detail"]["why"] == "its process is gone"
    # The built-in draft's record waits for the outcome: the killed job was still RECEIVED
    # and resumes from its submit (an external draft is recorded at once: test_recovery).
    assert takeover["detail"]["state"] == "RECEIVED"
    assert takeover["detail"]["resumes_after"] == "submit"
    assert takeover["detail"]["previous_owner"].rsplit(":", 1)[1].isdigit()


def test_reopening_a_topic_never_closed_fails(blog: Blog) -> None:
    res = blog.blogpub("topic", "reopen", "no-such-session")
    assert res.returncode == 1
    assert "topic no-such-session: no such session (never closed)" in res.stderr
    src = blog.root.parent / "topic.md"
    src.write_text(article("Topic", "Closed once."))
    blog.ok("topic", "close", "real", "--source", str(src))
    assert blog.ok("topic", "reopen", "real").stdout.strip() == "topic real reopened"
