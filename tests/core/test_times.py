"""Times a writer hands over (`submit --at`, `status --since`) and the test clock
(`GITPUB_CLOCK_SKEW`): a moment is stored as text that sorts in time order, so it must keep
to four-digit years; digits are ASCII; a value that does not parse is a usage error (exit 2)
and a clock that reads nonsense stops the command with one line (exit 1). Nothing is written
by a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing.fixtures import Blog, article


def _source(blog: Blog) -> str:
    src = blog.root.parent / "when.mdx"
    src.write_text(article("When", "A post for some time."))
    return str(src)


def _nothing_recorded(blog: Blog) -> None:
    assert not (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()
    assert not (blog.root / ".git" / "blogpub" / "jobs").exists()


@pytest.mark.parametrize(
    ("when", "said"),
    [
        ("0999-06-01T00:00:00Z", "outside the years 1000 to 9999"),
        ("9999-12-31T23:59:59-05:00", "outside the years 1000 to 9999"),  # 10000 in UTC
        ("+99999999d", "outside the years 1000 to 9999"),
        ("+" + "9" * 400 + "s", "outside the years 1000 to 9999"),
        ("+١٠m", "give ISO 8601 with an offset"),  # Arabic-Indic digits
        ("٢٠٢٦-12-24T08:00:00Z", "give ISO 8601 with an offset"),
        ("tomorrow", "give ISO 8601 with an offset"),
        ("2099-12-24T08:00", "the time needs an offset"),
    ],
)
def test_a_time_that_does_not_parse_is_a_usage_error(blog: Blog, when: str, said: str) -> None:
    res = blog.blogpub("submit", "--key", "k", "--source", _source(blog), "--at", when)
    assert res.returncode == 2, res
    # A usage error, said as every bad option value is: the usage, then one `Error:` line.
    (line,) = [x for x in res.stderr.splitlines() if x.startswith("Error: ")]
    assert "'--at'" in line and said in line, line
    assert len(line) < 300  # a long value is cut short, never repeated whole
    _nothing_recorded(blog)


def test_a_year_before_1000_is_refused_not_stored_with_three_digits(blog: Blog) -> None:
    """`0999-06-01` was stored as `999-06-01…` (glibc's `%Y` does not pad), sorted after
    `2026-…`, and its job waited in SCHEDULED forever."""
    res = blog.blogpub(
        "submit", "--key", "k", "--source", _source(blog), "--at", "0999-06-01T00:00:00Z"
    )
    assert res.returncode == 2, res
    assert res.stderr.endswith(
        "Error: Invalid value for '--at': '0999-06-01T00:00:00Z': gives a moment outside the "
        "years 1000 to 9999\n"
    )
    _nothing_recorded(blog)


def test_the_first_four_digit_year_is_stored_as_four_digits_and_comes_due(blog: Blog) -> None:
    """A moment long past is due at once: it sorts before now, as its four digits say (`999-…`
    sorted after `2026-…`, and such a job waited in SCHEDULED forever)."""
    job_id = blog.submit("old", article("Old", "From long ago."), "--at", "1000-01-01T00:00:00Z")
    job = blog.job(job_id)["job"]
    assert job["state"] == "RECEIVED"
    assert job["scheduled_at"].startswith("1000-01-01T00:00:00")
    blog.ok("run", "--until-idle")
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"


def test_since_takes_ascii_digits_and_four_digit_years(blog: Blog) -> None:
    for since in ("١٠m", "0999-01-01", "99999999999w"):
        res = blog.blogpub("status", "--since", since)
        assert res.returncode == 2, res
        assert "--since" in res.stderr and "Traceback" not in res.stderr
    assert blog.blogpub("status", "--since", "10m").returncode == 0


@pytest.mark.parametrize("skew", ["abc", "nan", "inf", "-inf", "1e12", "1_0", "١٠", "0x10"])
def test_a_clock_skew_that_is_no_number_of_seconds_stops_with_one_line(
    blog: Blog, skew: str
) -> None:
    env = {"GITPUB_CLOCK_SKEW": skew}
    for args in (["submit", "--key", "k", "--source", _source(blog)], ["run", "--until-idle"]):
        res = blog.blogpub(*args, env=env)
        assert res.returncode == 1, res
        (line,) = res.stderr.splitlines()
        assert line.startswith("git blogpub: GITPUB_CLOCK_SKEW must be a number of seconds")
    _nothing_recorded(blog)


def test_a_clock_skew_within_two_days_moves_the_clock(blog: Blog, tmp_path: Path) -> None:
    job_id = blog.submit("soon", article("Soon", "In a day."), "--at", "+1d")
    assert blog.job(job_id)["job"]["state"] == "SCHEDULED"
    blog.ok("run", "--until-idle", env={"GITPUB_CLOCK_SKEW": " 86401 "})
    assert blog.job(job_id)["job"]["state"] == "PUBLISHED"
