"""Final decisions on the remote's truth: SKIPPED ends a job for good, so it is never decided on
an old fetch. A person removed a post on another clone; the writer node, which has not fetched
since, is asked to publish the same bytes again: the post goes back on the remote."""

from __future__ import annotations

from testing.fixtures import Blog, article


def test_a_stale_fetch_never_ends_a_publish_in_skipped(blog: Blog) -> None:
    text = article("Back", "A post a person removed, published again.")
    first = blog.submit("first", text, "--target", "content/posts/back.md")
    blog.ok("run", "--until-idle")
    assert blog.job(first)["job"]["state"] == "PUBLISHED"

    person = blog.clone("person")
    person.git("rm", "--quiet", "content/posts/back.md")
    person.git("commit", "--quiet", "-m", "take the post down")
    person.git("push", "--quiet", "origin", "HEAD:main")
    # The writer node has not fetched: its remote-tracking branch still holds the post.

    again = blog.submit("again", text, "--target", "content/posts/back.md")
    blog.ok("run", "--until-idle")
    # Not SKIPPED as "no change": the post is gone from the remote. Not published either: a
    # person took it down, so it waits for a person (SPEC §4: takedowns stay down).
    job = blog.job(again)["job"]
    assert (job["state"], job["failure_code"]) == ("REVIEW", "taken_down"), blog.job(again)
    blog.ok("retry", again)
    blog.ok("run", "--until-idle")
    assert blog.job(again)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/back.md") == text.encode()


def test_the_same_bytes_on_the_remote_are_still_no_change(blog: Blog) -> None:
    text = article("Same", "Published once.")
    blog.submit("one", text, "--target", "content/posts/same.md")
    blog.ok("run", "--until-idle")
    commits = len(blog.remote_log())
    again = blog.submit("two", text, "--target", "content/posts/same.md")
    blog.ok("run", "--until-idle")
    assert blog.job(again)["job"]["state"] == "SKIPPED"
    assert len(blog.remote_log()) == commits
