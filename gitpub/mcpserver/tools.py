"""The tools an agent sees: names, descriptions it can act on, and JSON schemas.

Plain data: the server lists these as they are, validates every call's arguments against
`INPUT[name]` before anything runs, and the SDK's client checks every structured result
against `OUTPUT[name]`. Input schemas keep to `type`/`properties`/`required` and plain
keywords at the top level (no top-level `oneOf`): some agent hosts turn tool schemas into
function declarations that refuse combinators there."""

from __future__ import annotations

from gitpub.core.jsonvalue import JSONObject
from gitpub.core.states import TERMINAL, State

FINAL = tuple(sorted(s.value for s in TERMINAL))
"""States `wait` returns at: the job stays there until a person acts."""

_STRING: JSONObject = {"type": "string"}
_MAYBE: JSONObject = {"type": ["string", "null"]}

_ASSET: JSONObject = {
    "description": (
        "A file placed beside the article in the same commit, at `path` relative to the "
        "article's folder (subfolders allowed: `chart.png`, `images/chart.png`). Give its "
        "bytes as `content_base64`, or its text as `text` (written as UTF-8). A text asset "
        "is scanned for secrets like the article."
    ),
    "oneOf": [
        {
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "content_base64": {"type": "string", "contentEncoding": "base64"},
            },
            "required": ["path", "content_base64"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"path": {"type": "string", "minLength": 1}, "text": _STRING},
            "required": ["path", "text"],
            "additionalProperties": False,
        },
    ],
}

_TARGET: JSONObject = {
    "type": "string",
    "minLength": 1,
    "description": (
        "Repository-relative article path inside a content folder of the blog, e.g. "
        "`content/posts/my-post.md`. Omit it to let the blog's draft step or path template "
        "choose."
    ),
}

INPUT: dict[str, JSONObject] = {
    "submit": {
        "type": "object",
        "properties": {
            "key": {
                "type": "string",
                "minLength": 1,
                "description": (
                    "Idempotency key: one key names one request. Retrying with the same key "
                    "and text returns the same job (created=false); the same key with other "
                    "text is refused. Use a stable id of the request, e.g. the conversation "
                    "turn."
                ),
            },
            "text": {
                "type": "string",
                "minLength": 1,
                "description": "The article source (Markdown or MDX, front matter allowed).",
            },
            "target": _TARGET,
            "assets": {"type": "array", "items": _ASSET},
            "allow": {
                "type": "array",
                "items": {"type": "string"},
                "description": (
                    "Fingerprints of secret-scan findings a person judged harmless, as a "
                    "refusal names them; only pass one your user confirmed."
                ),
            },
        },
        "required": ["key", "text"],
        "additionalProperties": False,
    },
    "status": {
        "type": "object",
        "properties": {
            "state": {
                "type": "string",
                "enum": [s.value for s in State],
                "description": "Only jobs in this state (then the newest `limit` of them).",
            },
            "limit": {"type": "integer", "minimum": 1, "description": "At most this many jobs."},
        },
        "additionalProperties": False,
    },
    "show": {
        "type": "object",
        "properties": {
            "job_id": {
                "type": "string",
                "minLength": 4,
                "description": "The job id `submit` returned (or a unique prefix of 4+).",
            },
            "key": {
                "type": "string",
                "minLength": 1,
                "description": "The idempotency key the job was submitted with.",
            },
        },
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
        "description": "Give exactly one of job_id or key.",
    },
    "dry_run": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "description": "The article source."},
            "target": _TARGET,
            "assets": {"type": "array", "items": _ASSET},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    "wait": {
        "type": "object",
        "properties": {
            "job_id": {
                "type": "string",
                "minLength": 4,
                "description": "The job id `submit` returned.",
            },
            "timeout_s": {
                "type": "number",
                "minimum": 0,
                "maximum": 600,
                "description": (
                    "Seconds to wait at most; the job's state at that moment is returned "
                    "if it has not finished. Call again to keep waiting."
                ),
            },
        },
        "required": ["job_id", "timeout_s"],
        "additionalProperties": False,
    },
}

_JOB: JSONObject = {
    "type": "object",
    "description": "A job as `git blogpub show --json` reports it.",
    "properties": {
        "job_id": _STRING,
        "state": {"type": "string", "enum": [s.value for s in State]},
        "failure_code": _MAYBE,
        "target_path": _MAYBE,
        "remote_commit": _MAYBE,
        "created_at": _STRING,
        "updated_at": _STRING,
    },
    "required": ["job_id", "state", "target_path", "remote_commit"],
}

_EVENT: JSONObject = {
    "type": "object",
    "properties": {
        "seq": {"type": "integer"},
        "from_state": _MAYBE,
        "to_state": _MAYBE,
        "step": _STRING,
        "detail": {"type": "object"},
        "at": _STRING,
    },
    "required": ["seq", "from_state", "to_state", "step", "detail", "at"],
}

OUTPUT: dict[str, JSONObject] = {
    "submit": {
        "type": "object",
        "properties": {
            "job_id": _STRING,
            "created": {"type": "boolean"},
            "state": {"type": "string", "enum": [s.value for s in State]},
        },
        "required": ["job_id", "created", "state"],
    },
    "status": {
        "type": "object",
        "properties": {
            "jobs": {"type": "array", "items": _JOB},
            "finished": {"type": "object", "additionalProperties": {"type": "integer"}},
            "unlisted": {"type": "integer"},
        },
        "required": ["jobs", "finished", "unlisted"],
    },
    "show": {
        "type": "object",
        "properties": {"job": _JOB, "events": {"type": "array", "items": _EVENT}},
        "required": ["job", "events"],
    },
    "dry_run": {
        "type": "object",
        "properties": {
            "outcome": {"type": "string", "enum": ["READY_TO_COMMIT", "REVIEW", "SKIPPED"]},
            "meaning": _STRING,
            "reason": _MAYBE,
            "base_commit": _MAYBE,
            "target": _MAYBE,
            "decision": _MAYBE,
            "manifest_sha256": _MAYBE,
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": _STRING, "sha256": _STRING, "size": {"type": "integer"}},
                    "required": ["path", "sha256", "size"],
                },
            },
            "assets": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": _STRING, "path": _STRING, "there": _STRING},
                    "required": ["name", "path", "there"],
                },
            },
            "diff": {"type": "array", "items": _STRING},
        },
        "required": ["outcome", "meaning", "target", "files", "assets", "diff"],
    },
    "wait": {
        "type": "object",
        "properties": {
            "job": _JOB,
            "final": {
                "type": "boolean",
                "description": f"Whether the job reached a final state ({', '.join(FINAL)}).",
            },
            "waited_s": {"type": "number"},
        },
        "required": ["job", "final", "waited_s"],
    },
}

DESCRIPTION: dict[str, str] = {
    "submit": (
        "Hand an article to the blog's publication queue; durable when this returns. Returns "
        "{job_id, created, state}: the job starts RECEIVED and the delivery worker prepares, "
        "commits and pushes it. Call `wait` with the job_id to learn when it is live. Retrying "
        "with the same key is safe (same job, created=false). Refused, with nothing recorded: "
        "text holding a secret (the error names its fingerprint; never pass `allow` without "
        "your user's word), a key already used for other text, a target outside the content "
        "folders."
    ),
    "status": (
        "List the blog's publication jobs as `git blogpub status --json` does: every job that "
        "needs a person or is in flight, and the newest finished ones, with counts of all "
        "finished jobs by state. Filter by `state`, cap with `limit`."
    ),
    "show": (
        "One job and its full event history, as `git blogpub show --json`: find it by "
        "`job_id` or by the `key` it was submitted with. Use it to explain a REVIEW, "
        "CONFLICT or FAILED job to your user (the events carry the reason)."
    ),
    "dry_run": (
        "Preview what a submit of this text would commit, without recording anything: the "
        "outcome (READY_TO_COMMIT, REVIEW with the reason, or SKIPPED), the target path, the "
        "files with their SHA-256 and size, and a unified diff against the published blog."
    ),
    "wait": (
        "Wait until a job reaches a final state (" + ", ".join(FINAL) + ") or `timeout_s` "
        "passes, and return the job. PUBLISHED means the article is on the remote branch: "
        "tell your user its `target_path` and `remote_commit`. REVIEW, CONFLICT and FAILED "
        "need a person (`show` says why). final=false means it is still on its way: wait "
        "again. Delivery needs a worker: `git blogpub mcp --worker` or `git blogpub run`."
    ),
}

NAMES = tuple(INPUT)
