"""`git blogpub mcp` as an agent uses it: the MCP SDK's own client over stdio, a real clone
and a real bare remote. What is checked is what the agent's user would check: which job,
which state, what is on the remote."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from mcp import MCPError
from testing.fixtures import Blog, article
from testing.mcphelp import connect, distinct

TOOLS = {"submit", "status", "show", "dry_run", "wait"}
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # the shape of a GitHub token


def jobs_on_disk(blog: Blog) -> list[str]:
    folder = blog.root / ".git" / "blogpub" / "jobs"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_tools_are_listed_with_descriptions_and_schemas(blog: Blog) -> None:
    async def agent() -> None:
        async with connect(blog) as a:
            assert a.name == "gitpub" and "submit" in a.instructions
            listed = {t.name: t for t in (await a.session.list_tools()).tools}
            assert set(listed) == TOOLS
            for tool in listed.values():
                assert tool.description and len(tool.description) > 100, tool.name
                for schema in (tool.input_schema, tool.output_schema):
                    assert schema is not None and schema["type"] == "object"
                    Draft202012Validator.check_schema(schema)
            required = {n: set(t.input_schema.get("required", ())) for n, t in listed.items()}
            assert required == {
                "submit": {"key", "text"},
                "status": set(),
                "show": set(),
                "dry_run": {"text"},
                "wait": {"job_id", "timeout_s"},
            }
            show = listed["show"].input_schema
            assert set(show["properties"]) == {"job_id", "key"}
            assert show["minProperties"] == show["maxProperties"] == 1
            # The schema is enforced before anything runs.
            missing = await a.refused("submit", text=article("No key", "Where is my key?"))
            assert "'key' is a required property" in missing
            both = await a.refused("show", job_id="abcd1234", key="k")
            assert "exactly one of job_id or key" in both
            with pytest.raises(MCPError, match="no tool 'publish'"):
                await a.call("publish", key="k", text="t")
            assert (await a.ok("status"))["jobs"] == []

    asyncio.run(agent())
    assert jobs_on_disk(blog) == []


def test_submit_twice_with_one_key_is_one_job_and_reads_as_the_cli(blog: Blog) -> None:
    text = article("Twice", "An agent retried after a lost answer.")

    async def agent() -> tuple[dict, dict, dict, dict, str]:
        async with connect(blog) as a:
            first = await a.ok("submit", key="turn-7", text=text)
            again = await a.ok("submit", key="turn-7", text=text)
            reused = await a.refused("submit", key="turn-7", text=text + "\nMore.\n")
            status = await a.ok("status")
            shown = await a.ok("show", key="turn-7")
            return first, again, status, shown, reused

    first, again, status, shown, reused = asyncio.run(agent())
    assert first == {"job_id": first["job_id"], "created": True, "state": "RECEIVED"}
    assert again == {**first, "created": False}
    # One job, and the tools read it exactly as `status --json` and `show --json` print it.
    assert status == blog.ok("status", "--json").json()
    assert [j["job_id"] for j in status["jobs"]] == [first["job_id"]]
    assert shown == blog.ok("show", first["job_id"], "--json").json()
    assert shown["job"]["idempotency_key"] == "turn-7"
    assert jobs_on_disk(blog) == [first["job_id"]]
    # The same key with other text: the CLI's own line, naming the job.
    cli = blog.blogpub("submit", "--key", "turn-7", "--source", "-", input=text + "\nMore.\n")
    assert cli.returncode == 1
    assert cli.stderr.strip() == f"git blogpub: {reused}"
    assert first["job_id"] in reused


def test_wait_returns_the_job_published_with_exactly_one_remote_commit(blog: Blog) -> None:
    text = distinct("Live from an agent", 1)
    before = blog.remote_log()

    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, total, message))

    async def agent() -> tuple[dict, float]:
        async with connect(blog, "--worker") as a:  # the default interval, as shipped
            job_id = (await a.ok("submit", key="live", text=text))["job_id"]
            start = time.monotonic()
            res = await a.session.call_tool(
                "wait", {"job_id": job_id, "timeout_s": 60}, progress_callback=progress
            )
            assert not res.is_error and isinstance(res.structured_content, dict)
            return res.structured_content, time.monotonic() - start

    done, took = asyncio.run(agent())
    job = done["job"]
    assert done["final"] is True and job["state"] == "PUBLISHED", done
    assert took < 60
    # An agent that asked for progress heard the states the job passed through, in order.
    assert [m for _, _, m in heard][-1] == f"{job['job_id']} PUBLISHED"
    assert all(total == 60 for _, total, _ in heard)
    assert [p for p, _, _ in heard] == sorted(p for p, _, _ in heard)
    assert len({m for _, _, m in heard}) == len(heard)  # each state said once
    assert blog.commits_with_job(job["job_id"]) == 1
    after = blog.remote_log()
    assert len(after) == len(before) + 1 and after[1:] == before
    assert job["remote_commit"] == after[0]
    assert blog.remote_file(job["target_path"]) == text.encode("utf-8")


def test_wait_answers_at_its_timeout_with_the_state_the_job_has(blog: Blog) -> None:
    async def agent() -> tuple[dict, float, str]:
        async with connect(blog) as a:  # no worker: nothing delivers
            job_id = (await a.ok("submit", key="slow", text=distinct("Slow", 2)))["job_id"]
            start = time.monotonic()
            finished: list[str] = []

            async def timed(name: str, tool: str, **args: object) -> dict:
                answer = await a.ok(tool, **args)
                finished.append(name)
                return answer

            # A pending wait holds up nothing: a status asked meanwhile answers first.
            done, _ = await asyncio.gather(
                timed("wait", "wait", job_id=job_id[:8], timeout_s=2),
                timed("status", "status"),
            )
            took = time.monotonic() - start
            assert finished == ["status", "wait"]
            return done, took, await a.refused("wait", job_id="0000ffff", timeout_s=1)

    done, took, unknown = asyncio.run(agent())
    assert done["final"] is False and done["job"]["state"] == "RECEIVED"
    assert done["waited_s"] >= 2 and took < 10
    assert unknown == "job 0000ffff: no such job"
    assert len(blog.remote_log()) == 1  # the scaffold alone


def test_a_refused_submit_is_a_tool_error_and_records_nothing(blog: Blog) -> None:
    leaky = article("Leaky", f"Deploy with the token {SECRET} and you are done.")
    fingerprint = blog.blogpub("scan", "--json", "-", input=leaky).json()["findings"][0][
        "fingerprint"
    ]

    async def agent() -> tuple[str, str, dict]:
        async with connect(blog) as a:
            secret = await a.refused("submit", key="leak", text=leaky)
            target = await a.refused(
                "submit", key="leak", text=article("Out", "Elsewhere."), target="../x.mdx"
            )
            status = await a.ok("status")
            return secret, target, status

    secret, target, status = asyncio.run(agent())
    assert f"fingerprint {fingerprint}" in secret and "nothing was recorded" in secret
    assert SECRET not in secret
    cli = blog.blogpub(
        "submit", "--key", "leak", "--source", "-", "--target", "../x.mdx", input="Elsewhere."
    )
    assert target == "--target ../x.mdx: must not leave the content folders"
    assert cli.stderr.strip() == f"git blogpub: {target}"
    assert status["jobs"] == [] and jobs_on_disk(blog) == []

    # Nothing was recorded under the key either: it is free for the corrected text.
    async def corrected() -> dict:
        async with connect(blog) as a:
            return await a.ok("submit", key="leak", text=article("Leaky", "No token now."))

    assert asyncio.run(corrected())["created"] is True


def _refs_and_worktrees(blog: Blog) -> tuple[str, str]:
    return blog.git("for-each-ref"), blog.git("worktree", "list", "--porcelain")


def test_dry_run_shows_what_would_be_committed_and_records_nothing(blog: Blog) -> None:
    text = distinct("Only a preview", 3)
    before = _refs_and_worktrees(blog)

    async def agent() -> dict:
        async with connect(blog) as a:
            return await a.ok("dry_run", text=text, target="content/posts/preview.mdx")

    seen = asyncio.run(agent())
    assert seen["outcome"] == "READY_TO_COMMIT" and seen["target"] == "content/posts/preview.mdx"
    assert seen["files"] == [
        {
            "path": "content/posts/preview.mdx",
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "size": len(text.encode("utf-8")),
        }
    ]
    assert "+title: Only a preview" in seen["diff"]
    # The same preview the command line gives.
    src = blog.root.parent / "preview.mdx"
    src.write_text(text, encoding="utf-8")
    cli = blog.ok("dry-run", "--source", str(src), "--target", "content/posts/preview.mdx")
    assert f"manifest: {seen['manifest_sha256']}" in cli.stdout.splitlines()
    # Nothing recorded: no store, no job folder, no ref, no worktree; the remote as it was.
    assert not (blog.root / ".git" / "blogpub" / "state.sqlite3").exists()
    assert jobs_on_disk(blog) == []
    assert _refs_and_worktrees(blog) == before
    assert len(blog.remote_log()) == 1


def test_assets_travel_with_the_article_as_base64_or_text(blog: Blog) -> None:
    picture = bytes(range(256)) * 3  # binary: not UTF-8, NUL bytes
    note = "caption: a plain text asset\n"

    async def agent() -> tuple[dict, str, str, str]:
        async with connect(blog, "--worker", "--interval", "0.2") as a:
            bad = await a.refused(
                "submit",
                key="bad",
                text=distinct("Bad asset", 4),
                assets=[{"path": "x.png", "content_base64": "not base64!"}],
            )
            outside = await a.refused(
                "submit",
                key="outside",
                text=distinct("Outside", 9),
                assets=[{"path": "../x.png", "text": "x"}],
            )
            leak = await a.refused(
                "submit",
                key="leak",
                text=distinct("Leaky asset", 5),
                assets=[{"path": "notes.txt", "text": f"token {SECRET}\n"}],
            )
            job_id = (
                await a.ok(
                    "submit",
                    key="pictured",
                    text=distinct("With pictures", 6),
                    target="content/posts/pictured.mdx",
                    assets=[
                        {
                            "path": "images/chart.png",
                            "content_base64": base64.b64encode(picture).decode(),
                        },
                        {"path": "caption.txt", "text": note},
                    ],
                )
            )["job_id"]
            return await a.ok("wait", job_id=job_id, timeout_s=60), bad, leak, outside

    done, bad, leak, outside = asyncio.run(agent())
    assert outside == "--asset '../x.png': '..' is no plain name"
    assert bad == "asset 'x.png': content_base64 is not base64"
    assert "asset 'notes.txt'" in leak and "nothing was recorded" in leak and SECRET not in leak
    assert done["job"]["state"] == "PUBLISHED", done
    assert blog.remote_file("content/posts/images/chart.png") == picture
    assert blog.remote_file("content/posts/caption.txt") == note.encode()
    assert blog.commits_with_job(done["job"]["job_id"]) == 1
    assert [j["idempotency_key"] for j in blog.status()] == ["pictured"]


def test_a_clone_without_its_remote_is_refused_before_serving(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "lone")], check=True)
    proc = subprocess.run(
        [sys.executable, "-m", "gitpub", "-C", str(tmp_path / "lone"), "mcp"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("git blogpub: ") and "no remote named 'origin'" in line


def test_the_api_and_the_tools_are_one_door(blog: Blog) -> None:
    """A request handed over through the Python API and retried through MCP (or the other
    way round) is one job: one intake, one key space, the assets given the same way."""
    from gitpub import Publisher

    text = distinct("Either door", 7)
    logo = b"\x89PNG\r\n\x1a\n" + bytes(64)
    via_api = asyncio.run(Publisher(blog.root).asubmit(text, key="door", assets={"logo.png": logo}))

    async def agent() -> tuple[dict, str]:
        async with connect(blog) as a:
            again = await a.ok(
                "submit",
                key="door",
                text=text,
                assets=[{"path": "logo.png", "content_base64": base64.b64encode(logo).decode()}],
            )
            other = await a.refused("submit", key="door", text=distinct("Either door", 8))
            return again, other

    again, other = asyncio.run(agent())
    assert again == {"job_id": via_api.job_id, "created": False, "state": "RECEIVED"}
    assert other == f"key door was used for a different source (job {via_api.job_id})"
    folder = blog.root / ".git" / "blogpub" / "jobs" / via_api.job_id / "assets"
    assert (folder / "logo.png").read_bytes() == logo


def test_wait_tells_an_agent_what_to_say_when_nothing_was_published(blog: Blog) -> None:
    """SKIPPED (the bytes are already there) and REVIEW (a gate failed) are final too; the
    answer's first line says which, and `show` carries the reason to pass on."""
    hello = (blog.root / "content" / "posts" / "hello.mdx").read_text("utf-8")
    broken = article("Broken", "<Note>\n\nnever closed\n")

    async def agent() -> list[tuple[dict, str]]:
        async with connect(blog, "--worker", "--interval", "0.2") as a:
            out = []
            for key, text, target in (
                ("same", hello, "content/posts/hello.mdx"),
                ("broken", broken, None),
            ):
                args = {"key": key, "text": text, **({"target": target} if target else {})}
                job_id = (await a.ok("submit", **args))["job_id"]
                res = await a.call("wait", job_id=job_id, timeout_s=60)
                assert not res.is_error and isinstance(res.structured_content, dict)
                out.append((res.structured_content, res.content[0].text))
            shown = await a.ok("show", key="broken")
            out.append((shown, ""))
            return out

    (same, same_line), (bad, bad_line), (shown, _) = asyncio.run(agent())
    assert same["final"] and same["job"]["state"] == "SKIPPED"
    assert same_line.endswith("SKIPPED: nothing to publish (`show` says why)")
    assert bad["final"] and bad["job"]["state"] == "REVIEW"
    assert "REVIEW" in bad_line and "a person must act" in bad_line
    reasons = [e["detail"].get("reason", "") for e in shown["events"]]
    assert any("tag <Note> is never closed" in r for r in reasons), reasons
    assert len(blog.remote_log()) == 1  # nothing reached the remote
