"""An agent hands its blog post to gitpub instead of firing and forgetting it.

Before — the publication lives only in this process's memory; a restart, a crash or a closed
event loop loses it without a trace:

    asyncio.ensure_future(publish_blog(report_text))   # returns at once; may never finish

After — the publication is on disk before the agent moves on; the same request id always
maps to the same job, so a retried request cannot publish twice:

    job = await blog.asubmit(report_text, key=request_id)

Delivery is the worker's business: `git blogpub run` as a service (contrib/systemd/), or
`blog.kick()` to start one in the background when there is no service.

Run this file against a blog checkout to try it: `python contrib/agent_example.py PATH`.
When that blog's `.blogpub.toml` names external step commands, allow them once on this
machine first (`git blogpub trust`); until then the job waits in REVIEW and says why.
"""

from __future__ import annotations

import asyncio
import sys
import uuid

from gitpub import Publisher


async def answer_query(blog: Publisher, question: str) -> str:
    """What an agent's request handler looks like with gitpub: answer, hand over, return."""
    request_id = f"query:{uuid.uuid5(uuid.NAMESPACE_URL, question)}"
    report = f"---\ntitle: {question}\n---\n\nWhat we found out about {question.lower()}.\n"
    job = await blog.asubmit(report, key=request_id)  # durable from here on
    blog.kick()  # drop this line when `git blogpub run` runs as a service
    return f"answered; publication {job.job_id[:8]} is {job.state}"


def main() -> None:
    blog = Publisher(sys.argv[1] if len(sys.argv) > 1 else ".")
    print(asyncio.run(answer_query(blog, "Why durable publication")))


if __name__ == "__main__":
    main()
