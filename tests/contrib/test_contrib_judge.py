"""contrib/judge_openai.py against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from testing.fixtures import Blog, article
from testing.paths import ROOT

JUDGE = ROOT / "contrib" / "judge_openai.py"
KEY = "test-key-7f3a9c41d2"
MODEL = "tiny-judge"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeChat:
    """An OpenAI-compatible /chat/completions that answers whatever the test sets."""

    url: str = ""
    received: list[Received] = field(default_factory=list)
    status: int = 200
    raw: bytes | None = None  # the whole response body, when not a chat completion
    content: str = '{"decision": "NEW"}'
    location: str | None = None

    def answer(self, decision: dict[str, Any] | str) -> None:
        self.raw, self.status, self.location = None, 200, None
        self.content = decision if isinstance(decision, str) else json.dumps(decision)

    def body(self) -> bytes:
        if self.raw is not None:
            return self.raw
        return json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": MODEL,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.content},
                        "finish_reason": "stop",
                    }
                ],
            }
        ).encode()


@pytest.fixture
def fake_chat() -> Iterator[FakeChat]:
    fake = FakeChat()

    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # a stuck client cannot hold the server thread forever

        def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
            length = int(self.headers.get("Content-Length", "0"))
            data = self.rfile.read(length)
            try:
                body: Any = json.loads(data)
            except ValueError:
                body = data
            fake.received.append(Received(self.path, dict(self.headers.items()), body))
            payload = fake.body()
            self.send_response(fake.status)
            if fake.location:
                self.send_header("Location", fake.location)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def judge_env(fake: FakeChat, **extra: str) -> dict[str, str]:
    return {
        "GITPUB_JUDGE_URL": fake.url,
        "GITPUB_JUDGE_MODEL": MODEL,
        "GITPUB_JUDGE_API_KEY": KEY,
        "no_proxy": "127.0.0.1",  # a proxy set in the environment must not see this traffic
        "NO_PROXY": "127.0.0.1",
        **extra,
    }


def run_judge(fake: FakeChat, request: Any, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(JUDGE)],
        input=request if isinstance(request, str) else json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **judge_env(fake, **extra)},
    )


CANDIDATE = {"path": "content/posts/cats.mdx", "text": article("Cats", "Cats sleep a lot.")}
EXISTING = [
    {"path": "content/posts/dogs.mdx", "text": article("Dogs", "Dogs bark at the postman.")},
    {"path": "content/posts/old-cats.mdx", "text": article("Cats", "Cats sleep all day.")},
]


def prepare_request(existing: list[dict[str, str]] = EXISTING) -> dict[str, Any]:
    return {"mode": "prepare", "candidate": CANDIDATE, "existing": existing}


def test_prepare_round_trip_sends_model_and_articles_and_prints_decision(
    fake_chat: FakeChat,
) -> None:
    fake_chat.answer({"decision": "NEW", "reason": "nothing about   cats sleeping yet"})
    proc = run_judge(fake_chat, prepare_request())

    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "decision": "NEW",
        "reason": "nothing about cats sleeping yet",
    }
    (req,) = fake_chat.received
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.body["model"] == MODEL
    assert req.body["response_format"] == {"type": "json_object"}
    system, user = req.body["messages"]
    assert system["role"] == "system" and "NEW" in system["content"]
    assert user["role"] == "user"
    sent = json.loads(user["content"])
    assert sent["candidate"] == CANDIDATE
    assert [a["path"] for a in sent["existing"]] == [a["path"] for a in EXISTING]
    # The key travels in the header and nowhere else.
    assert KEY not in proc.stdout + proc.stderr
    assert KEY not in json.dumps(req.body)


def test_update_names_an_offered_article(fake_chat: FakeChat) -> None:
    fake_chat.answer({"decision": "UPDATE", "target": "content/posts/old-cats.mdx"})
    proc = run_judge(fake_chat, prepare_request())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"decision": "UPDATE", "target": "content/posts/old-cats.mdx"}


def test_skip_with_the_duplicate_path_keeps_it_in_the_reason(fake_chat: FakeChat) -> None:
    fake_chat.answer(
        {"decision": "SKIP", "target": "content/posts/old-cats.mdx", "reason": "same point"}
    )
    proc = run_judge(fake_chat, prepare_request())
    assert json.loads(proc.stdout) == {
        "decision": "SKIP",
        "reason": "duplicate of content/posts/old-cats.mdx: same point",
    }


def test_recheck_round_trip(fake_chat: FakeChat) -> None:
    fake_chat.answer({"decision": "KEEP", "reason": "different animal"})
    delta = [EXISTING[0]]
    proc = run_judge(fake_chat, {"mode": "recheck", "candidate": CANDIDATE, "delta": delta})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"decision": "KEEP", "reason": "different animal"}
    (req,) = fake_chat.received
    system, user = req.body["messages"]
    assert "KEEP" in system["content"]
    assert json.loads(user["content"])["newly_published"] == delta


def test_only_the_most_similar_articles_are_offered(fake_chat: FakeChat) -> None:
    fake_chat.answer({"decision": "NEW"})
    others = [
        {"path": f"content/posts/n{i}.mdx", "text": article(f"N{i}", f"Numbers {i} " * 20)}
        for i in range(6)
    ]
    proc = run_judge(
        fake_chat, prepare_request([*others, EXISTING[1]]), GITPUB_JUDGE_MAX_ARTICLES="1"
    )
    assert proc.returncode == 0, proc.stderr
    sent = json.loads(fake_chat.received[0].body["messages"][1]["content"])
    assert [a["path"] for a in sent["existing"]] == ["content/posts/old-cats.mdx"]


@pytest.mark.parametrize(
    "content",
    [
        "Sure! The article is NEW.",  # prose, not JSON
        '["NEW"]',  # JSON, not an object
        '{"decision": "MAYBE"}',  # outside the decision set
        '{"decision": "new"}',  # case matters
        '{"decision": "UPDATE"}',  # UPDATE without a target
        '{"decision": "UPDATE", "target": "content/posts/invented.mdx"}',  # never offered
        '{"decision": "NEW", "target": "content/posts/dogs.mdx"}',  # NEW has no target
        '{"decision": "NEW", "confidence": 0.9}',  # a field outside the contract
        '{"decision": "NEW", "reason": 5}',
    ],
)
def test_answer_outside_the_contract_exits_nonzero_with_one_line(
    fake_chat: FakeChat, content: str
) -> None:
    fake_chat.answer(content)
    proc = run_judge(fake_chat, prepare_request())
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith("judge_openai: ")


def test_recheck_may_not_answer_a_prepare_decision(fake_chat: FakeChat) -> None:
    fake_chat.answer({"decision": "NEW"})
    proc = run_judge(fake_chat, {"mode": "recheck", "candidate": CANDIDATE, "delta": EXISTING})
    assert proc.returncode == 1 and proc.stdout == ""
    assert "not one of SKIP/KEEP" in proc.stderr


@pytest.mark.parametrize(
    ("status", "raw", "needle"),
    [
        (200, b"<html>garbage</html>", "not an OpenAI-style chat completion"),
        (200, b'{"choices": []}', "not an OpenAI-style chat completion"),
        (500, b'{"error": "boom"}', "HTTP 500"),
        (401, b'{"error": "bad key"}', "HTTP 401"),
    ],
)
def test_garbage_or_error_from_the_server_exits_nonzero(
    fake_chat: FakeChat, status: int, raw: bytes, needle: str
) -> None:
    fake_chat.status, fake_chat.raw = status, raw
    proc = run_judge(fake_chat, prepare_request())
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert needle in proc.stderr
    assert KEY not in proc.stderr


def test_a_redirect_is_not_followed_with_the_key(fake_chat: FakeChat) -> None:
    fake_chat.status, fake_chat.raw = 302, b""
    fake_chat.location = fake_chat.url + "/elsewhere"
    proc = run_judge(fake_chat, prepare_request())
    assert proc.returncode == 1 and "HTTP 302" in proc.stderr
    assert len(fake_chat.received) == 1  # nothing was sent to the redirect target


def test_missing_endpoint_configuration(fake_chat: FakeChat) -> None:
    proc = run_judge(fake_chat, prepare_request(), GITPUB_JUDGE_URL="")
    assert proc.returncode == 1
    assert "GITPUB_JUDGE_URL" in proc.stderr
    assert fake_chat.received == []


def test_bad_request_on_stdin(fake_chat: FakeChat) -> None:
    proc = run_judge(fake_chat, "not json at all")
    assert proc.returncode == 1 and "not JSON" in proc.stderr
    assert fake_chat.received == []


# ------------------------------------------------------------------ through gitpub itself


def use_judge(blog: Blog) -> None:
    config = (blog.root / ".blogpub.toml").read_text()
    config += f"\n[steps]\njudge = [{json.dumps(sys.executable)}, {json.dumps(str(JUDGE))}]\n"
    (blog.root / ".blogpub.toml").write_text(config)
    blog.git("commit", "--quiet", "-am", "judge duplicates with a model")
    blog.git("push", "--quiet", "origin", "main")
    blog.trust()


def test_gitpub_publishes_or_skips_as_the_model_decides(blog: Blog, fake_chat: FakeChat) -> None:
    use_judge(blog)
    env = judge_env(fake_chat)
    published_before = blog.remote_log()

    fake_chat.answer({"decision": "SKIP", "reason": "the hello post says this already"})
    skipped = blog.submit("k-skip", article("Hello again", "Greetings, once more, by a bot."))
    blog.ok("run", "--until-idle", env=env)
    job = blog.job(skipped)["job"]
    assert job["state"] == "SKIPPED"
    assert blog.remote_log() == published_before
    assert any(
        "the hello post says this already" in json.dumps(e["detail"])
        for e in blog.job(skipped)["events"]
    )
    # The model saw the candidate and the blog's existing article.
    sent = json.loads(fake_chat.received[-1].body["messages"][1]["content"])
    assert sent["candidate"]["text"].startswith("---\ntitle: Hello again")
    assert [a["path"] for a in sent["existing"]] == ["content/posts/hello.mdx"]

    fake_chat.answer({"decision": "NEW", "reason": "a new subject"})
    kept = blog.submit("k-new", article("Bread", "How to bake bread at home.", slug="bread"))
    blog.ok("run", "--until-idle", env=env)
    assert blog.job(kept)["job"]["state"] == "PUBLISHED"
    assert blog.remote_file("content/posts/bread.mdx").startswith(b"---\ntitle: Bread")
    assert blog.commits_with_job(kept) == 1


def test_gitpub_sends_the_job_to_review_when_the_model_talks_nonsense(
    blog: Blog, fake_chat: FakeChat
) -> None:
    use_judge(blog)
    before = blog.remote_log()
    fake_chat.answer("I think this one is probably fine?")
    job_id = blog.submit("k", article("Soup", "A soup for cold days."))
    blog.ok("run", "--until-idle", env=judge_env(fake_chat))
    job = blog.job(job_id)["job"]
    assert job["state"] == "REVIEW"
    assert blog.remote_log() == before
    # `git blogpub show` tells the operator why, in the judge's own one line.
    reasons = [e["detail"].get("reason", "") for e in blog.job(job_id)["events"]]
    assert any("judge_openai: model answer is not a JSON object" in r for r in reasons)
    assert len(fake_chat.received) == 1
