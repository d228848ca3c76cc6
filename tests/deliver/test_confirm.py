"""PUBLISHED is confirmed by content: trailers on a remote commit are only a claim."""

from __future__ import annotations

from testing.fixtures import Blog, article


def _committed_not_pushed(blog: Blog, key: str, text: str) -> dict[str, object]:
    """A job committed locally whose worker died before delivering it; its public fields."""
    job: dict[str, object] = blog.job(blog.committed_not_pushed(key, text))["job"]
    return job


def _trailers(job_id: object, manifest: object) -> str:
    return f"housekeeping\n\nBlog-Job-Id: {job_id}\nBlog-Manifest-Sha256: {manifest}\n"


def _events(blog: Blog, job_id: str, step: str) -> list[dict[str, object]]:
    return [e for e in blog.job(job_id)["events"] if e["step"] == step]


def test_forged_trailer_commit_does_not_publish_the_job(blog: Blog) -> None:
    text = article("Real", "The article the writer asked for.", slug="real")
    job = _committed_not_pushed(blog, "real", text)
    job_id = str(job["job_id"])
    forger = blog.clone("forger")
    # The values `show --json` prints, on a commit that carries none of the job's files.
    forged = forger.push_by_hand(
        "README.md", "a blog, edited\n", _trailers(job_id, job["artifact_sha256"])
    )

    blog.ok("run", "--until-idle")

    done = blog.job(job_id)["job"]
    assert done["state"] == "PUBLISHED"
    assert done["remote_commit"] != forged
    # The real article reached the remote, in the commit recorded as the job's.
    assert blog.remote_file("content/posts/real.mdx") == text.encode()
    body = blog.remote_git("log", "-1", "--format=%B", str(done["remote_commit"]))
    assert f"Blog-Manifest-Sha256: {job['artifact_sha256']}" in body
    assert blog.remote_git("rev-parse", f"{done['remote_commit']}:content/posts/real.mdx")
    assert blog.commits_with_job(job_id) == 2  # the forged one and the job's own
    (noted,) = _events(blog, job_id, "confirm:content-differs")
    assert noted["detail"]["commit"] == forged  # type: ignore[index]
    assert f"trailers on {forged}, content differs" in str(noted["detail"])


def test_job_id_with_another_manifest_does_not_confirm(blog: Blog) -> None:
    text = article("Mine", "Written for this job only.", slug="mine")
    job = _committed_not_pushed(blog, "mine", text)
    job_id = str(job["job_id"])
    other = blog.clone("other")
    forged = other.push_by_hand("notes.txt", "unrelated\n", _trailers(job_id, "0" * 64))

    blog.ok("run", "--until-idle")

    done = blog.job(job_id)["job"]
    assert done["state"] == "PUBLISHED"
    assert done["remote_commit"] not in (forged, None)
    assert blog.remote_file("content/posts/mine.mdx") == text.encode()
    # Not even a candidate: its manifest trailer is not the job's.
    assert _events(blog, job_id, "confirm:content-differs") == []


def test_forged_commit_writing_the_target_goes_through_cas(blog: Blog) -> None:
    text = article("Target", "The writer's own words.", slug="target")
    job = _committed_not_pushed(blog, "target", text)
    job_id = str(job["job_id"])
    forger = blog.clone("forger")
    forged = forger.push_by_hand(
        "content/posts/target.mdx",
        article("Target", "Someone else's words."),
        _trailers(job_id, job["artifact_sha256"]),
    )

    blog.ok("run", "--until-idle")

    done = blog.job(job_id)["job"]
    assert done["state"] == "CONFLICT"
    assert done["failure_code"] == "target_changed"
    assert done["remote_commit"] is None
    assert b"Someone else's words." in blog.remote_file("content/posts/target.mdx")
    (noted,) = _events(blog, job_id, "confirm:content-differs")
    assert noted["detail"]["commit"] == forged  # type: ignore[index]
    assert noted["detail"]["paths"] == ["content/posts/target.mdx"]  # type: ignore[index]
