"""The web page in a real browser: Debian's headless Chromium, driven by its chromedriver
through Selenium, loads the list of a blog with a job in every state, follows a filter, opens
a job and reads its timeline, and sees the list refresh itself.

Where Chromium is not installed these skip, and say so; under CI=true they fail instead (as
the PostgreSQL tests do), because .ci/run installs it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testing.fixtures import Blog, article, wait_for
from testing.uiworld import World

from gitpub.ui.app import serve_page
from gitpub.ui.server import Handle

SHOTS = os.environ.get("GITPUB_UI_SCREENSHOTS")  # a folder: keep PNGs of the pages there
ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)
MISSING = "no chromium and chromedriver (apt-get install chromium chromium-driver)"


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {MISSING}", pytrace=False)
        pytest.skip(MISSING)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.binary_location = chromium
    os.environ["SE_OFFLINE"] = "true"  # Selenium never looks for drivers on the network
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    session.set_page_load_timeout(60)
    yield session
    session.quit()


@pytest.fixture
def page(world: World) -> Iterator[Handle]:
    handle = serve_page(world.blog.root)
    yield handle
    handle.close()


def _shot(browser: Any, name: str) -> None:
    if SHOTS:
        browser.save_screenshot(str(Path(SHOTS) / name))


def test_a_person_filters_the_list_opens_a_job_and_reads_its_timeline(
    world: World, page: Handle, browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    browser.get(page.url + "?tab=all")
    states = {
        row.get_attribute("data-state")
        for row in browser.find_elements(By.CSS_SELECTOR, "#jobs tbody tr")
    }
    assert states >= {
        "PUBLISHED",
        "SKIPPED",
        "REVIEW",
        "CONFLICT",
        "FAILED",
        "SCHEDULED",
        "IN_REVIEW",
        "RETRY_WAIT",
        "RECEIVED",
    }
    assert browser.find_element(By.ID, "live").text.startswith("live, every")  # its script ran
    _shot(browser, "ui-jobs.png")

    field = browser.find_element(By.NAME, "target")
    field.send_keys("content/posts/hello.mdx")
    browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
    wait_for(lambda: "target=content" in browser.current_url, "the filter in the URL")
    rows = browser.find_elements(By.CSS_SELECTOR, "#jobs tbody tr")
    assert [r.get_attribute("data-state") for r in rows] == ["CONFLICT"]

    rows[0].find_element(By.TAG_NAME, "a").click()
    job_id = world.ids["conflict"]
    wait_for(lambda: browser.current_url.endswith(f"/job/{job_id}"), "the job page")
    events = world.blog.job(job_id)["events"]
    timeline = browser.find_elements(By.CSS_SELECTOR, "#timeline tr.event")
    assert [(int(t.get_attribute("data-seq")), t.get_attribute("data-step")) for t in timeline] == [
        (e["seq"], e["step"]) for e in events
    ]
    last = timeline[-1].text  # the newest phase is open: a person reads it as it is shown
    assert "conflict" in last and "PUSHING → CONFLICT" in last
    assert "changed on the remote since the snapshot" in last
    if SHOTS:
        browser.set_window_size(1280, 1500)
        _shot(browser, "ui-job.png")


def test_the_list_refreshes_itself_while_it_is_shown(blog: Blog, browser: Any) -> None:
    handle = serve_page(blog.root)
    try:
        browser.get(handle.url + "?tab=all")
        assert "no jobs match" in browser.page_source
        job_id = blog.submit("late", article("Late", "Submitted while the page was open."))
        wait_for(lambda: job_id in browser.page_source, "the new job on the open page", 30)
        assert (
            browser.execute_script("return performance.getEntriesByType('navigation').length") == 1
        )
    finally:
        handle.close()
