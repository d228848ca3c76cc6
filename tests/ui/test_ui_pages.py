"""The web page as a person reads it, over HTTP from the real server: every state listed and
filtered with the filters in the URL, a job's whole history in order, the fleet's lock holder,
and nothing secret on any page."""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Iterator

import pytest
from testing.fixtures import Blog, article
from testing.uiworld import SECRET, World, request

from gitpub.context import open_context
from gitpub.ui import pages
from gitpub.ui.app import serve_page
from gitpub.ui.server import Handle


@pytest.fixture
def page(world: World) -> Iterator[Handle]:
    handle = serve_page(world.blog.root)
    yield handle
    handle.close()


def _ids(body: str) -> list[str]:
    """The job ids the list shows, in order."""
    return re.findall(r'<a href="/job/([0-9a-f-]{36})">', body)


def _text(body: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_every_state_is_listed_under_its_tab_with_its_count(world: World, page: Handle) -> None:
    ids = world.ids
    expected = {
        "needs": {ids["review"], ids["conflict"], ids["failed"]},
        "flight": {ids["received"], ids["retry_wait"]},
        "scheduled": {ids["scheduled"]},
        "review": {ids["in_review"]},
        "done": {ids["published"], ids["withdrawn"], ids["skipped"]},
    }
    front = request(page.url)
    assert front.status == 200
    for tab, members in expected.items():
        answer = request(page.url + f"?tab={tab}")
        assert set(_ids(answer.body)) == members, tab
        count = re.search(rf'data-tab="{tab}">[^<]*<span class="n">(\d+)</span>', front.body)
        assert count and int(count[1]) == len(members), tab
    everything = request(page.url + "?tab=all")
    assert set(_ids(everything.body)) == set(ids.values())
    assert "withdrawn" in _text(request(page.url + "?tab=done").body)


def test_filters_live_in_the_url_and_narrow_the_list(world: World, page: Handle) -> None:
    ids = world.ids
    by = {
        "tab=all&state=conflict": {ids["conflict"]},
        "tab=all&key=leak": {ids["review"]},  # the key as submitted
        "tab=all&target=content/posts/hello.mdx": {ids["conflict"]},
        "tab=all&target=content/posts": {
            j["job_id"]
            for j in world.blog.read("status", "--all", "--json").json()["jobs"]
            if (j["target_path"] or "").startswith("content/posts/")
        },
        "tab=all&text=Reviewed": set(),  # titles are not searched, paths and keys are
        "tab=all&text=rev.mdx": {ids["in_review"]},
        "tab=all&text=target_changed": {ids["conflict"]},  # a failure code
        "tab=all&since=1d": set(ids.values()),
        "tab=all&since=2099-01-01": set(),
        "tab=all&node=somewhere-else": set(),
    }
    for query, members in by.items():
        answer = request(page.url + "?" + query)
        assert answer.status == 200
        assert set(_ids(answer.body)) == members, query
    # The form says what it filters by, so a shared link shows its filter.
    shared = request(page.url + "?tab=all&key=leak").body
    assert 'name="key" value="leak"' in shared
    bad = request(page.url + "?tab=all&since=yesterday-ish")
    assert bad.status == 200 and "since:" in _text(bad.body)


def test_pages_of_the_list_cover_every_job_once(
    world: World, page: Handle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PAGE", 3)
    seen: list[str] = []
    url: str | None = page.url + "?tab=all"
    while url is not None:
        body = request(url).body
        seen += _ids(body)
        more = re.search(r'<a href="([^"]+)" rel="next">', body)
        url = page.url.rstrip("/") + html.unescape(more[1]) if more else None
    assert sorted(seen) == sorted(world.ids.values()) and len(seen) == len(set(seen))


def test_a_job_page_shows_every_event_of_its_history_in_order(world: World, page: Handle) -> None:
    for name in ("conflict", "failed", "withdrawn", "in_review"):
        job_id = world.ids[name]
        events = world.blog.job(job_id)["events"]
        body = request(page.url + f"job/{job_id}").body
        shown = [
            (int(s), step) for s, step in re.findall(r'data-seq="(\d+)" data-step="([^"]+)"', body)
        ]
        assert shown == [(e["seq"], e["step"]) for e in events], name
        assert f"({len(events)} events)" in body


def test_retries_are_grouped_and_the_attempts_numbered(world: World, page: Handle) -> None:
    body = request(page.url + f"job/{world.ids['failed']}").body
    folded = re.search(r"<summary>(\d+) delivery attempts, each waited to retry", body)
    assert folded and int(folded[1]) >= 2
    assert "retry:exhausted" in body


def test_a_conflict_shows_its_diff_and_the_commands_that_act_on_it(
    world: World, page: Handle
) -> None:
    job_id = world.ids["conflict"]
    body = request(page.url + f"job/{job_id}").body
    diff = _text(re.search(r'<pre class="diff" id="diff">(.*?)</pre>', body, re.S)[1])  # type: ignore[index]
    assert "-A person's." in diff and "+The agent's version." in diff
    for command in (f"git blogpub retry {job_id}", f"git blogpub resolve {job_id} --abandon"):
        assert f"<code>{command}</code>" in body
    manifest = _text(re.search(r'<table id="manifest">(.*?)</table>', body, re.S)[1])  # type: ignore[index]
    assert "content/posts/hello.mdx" in manifest and re.search(r"\b[0-9a-f]{64}\b", manifest)
    assert 'rel="noreferrer"' not in body  # a remote on disk has no web address: no links
    assert 'method="post"' not in body  # no actions unless the server was started with them


def test_a_review_names_its_finding_and_never_shows_the_secret(world: World, page: Handle) -> None:
    job_id = world.ids["review"]
    body = request(page.url + f"job/{job_id}").body
    findings = _text(re.search(r'<table id="findings">(.*?)</table>', body, re.S)[1])  # type: ignore[index]
    assert "slack-bot-token" in findings and re.search(r"\b[0-9a-f]{20}\b", findings)
    assert re.search(r"\b\d+\b", findings)  # the line
    for url in ("", "?tab=all", f"job/{job_id}", "fleet", "metrics"):
        assert SECRET not in request(page.url + url).body, url


def test_the_fleet_names_the_delivery_lock_holder_and_the_leases(
    world: World, page: Handle
) -> None:
    import os

    from gitpub.store import leases

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with open_context(world.blog.root) as ctx, ctx.locks.hold("delivery"):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        held.wait(30)
        body = request(page.url + "fleet").body
    finally:
        release.set()
        holder.join()
    lock = _text(re.search(r'<dd id="lock">(.*?)</dd>', body, re.S)[1])  # type: ignore[index]
    assert f"pid {os.getpid()}" in lock
    assert "free" in _text(request(page.url + "fleet").body)

    with open_context(world.blog.root) as ctx:
        claimed = leases.claim(ctx.store, world.ids["received"], "worker-7.example:4242", 600)
        assert claimed is not None
        try:
            fleet = _text(request(page.url + "fleet").body)
            listed = request(page.url + "?tab=all&node=worker-7").body
        finally:
            leases.release(ctx.store, claimed)
    assert "worker-7.example:4242" in fleet and world.ids["received"][:8] in fleet
    assert _ids(listed) == [world.ids["received"]]
    assert "due for" in fleet  # the oldest due job's age


def test_an_unknown_job_is_a_404_page(page: Handle) -> None:
    answer = request(page.url + "job/ffffffff-0000")
    assert answer.status == 404 and "no such job" in answer.body


def test_pages_are_small_and_load_nothing_from_elsewhere(world: World, page: Handle) -> None:
    for url in ("", "?tab=all", f"job/{world.ids['conflict']}", "fleet"):
        answer = request(page.url + url)
        assert len(answer.body.encode()) < 64 * 1024, url
        assert not re.search(r'(src|href)="(https?:)?//', answer.body), url
        assert "default-src 'none'" in answer.headers["content-security-policy"]


def test_the_templates_sanitize_whatever_they_print() -> None:
    """The second line of defence: a text that reached a page unsanitized by any road (the
    store's texts were sanitized when written) is still redacted when printed."""
    from gitpub.ui.app import _environment

    shown = _environment().from_string("<p>{{ value }}</p>").render(value=f"token {SECRET}")
    assert SECRET not in shown and "[REDACTED:" in shown


@pytest.mark.both_stores
def test_the_page_reads_either_store(blog: Blog) -> None:
    import os

    published = blog.submit("one", article("One", "Published on either store."))
    blog.ok("run", "--until-idle")
    waiting = blog.submit("two", article("Two", "Waiting for a worker."))
    handle = serve_page(blog.root)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with open_context(blog.root) as ctx, ctx.locks.hold("delivery"):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    try:
        listed = request(handle.url + "?tab=all").body
        job = request(handle.url + f"job/{published}").body
        scraped = request(handle.url + "metrics").body
        holder.start()
        held.wait(30)
        fleet = request(handle.url + "fleet").body
    finally:
        release.set()
        if holder.is_alive():
            holder.join()
        handle.close()
    assert set(_ids(listed)) == {published, waiting}
    assert 'data-step="published"' in job and "content/posts/One.mdx" in job
    assert 'gitpub_jobs{state="PUBLISHED"} 1.0' in scraped
    lock = _text(re.search(r'<dd id="lock">(.*?)</dd>', fleet, re.S)[1])  # type: ignore[index]
    assert f"pid {os.getpid()}" in lock
    if os.environ.get("GITPUB_STORE"):  # the fleet's lock too, by host and pid
        assert f":{os.getpid()} (until" in lock
