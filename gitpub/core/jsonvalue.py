"""The one type of a JSON value, for what crosses a seam as JSON: a step's answer, an event's
detail, a job folder's files, an MCP tool's arguments and result."""

from __future__ import annotations

from typing import TypeAlias, Union

JSON: TypeAlias = Union[str, int, float, bool, None, list["JSON"], dict[str, "JSON"]]
"""What `json.loads` gives back (and `json.dumps` takes without a `default`)."""

JSONObject: TypeAlias = dict[str, JSON]
"""A JSON object: what every seam of gitpub that speaks JSON sends and receives."""


def as_object(value: JSON) -> JSONObject:
    """`value` when it is a JSON object, else an empty one (a field that should hold an object
    and holds something else counts as holding nothing)."""
    return value if isinstance(value, dict) else {}


def text_or_none(value: JSON) -> str | None:
    """`value` when it is a JSON string, else None."""
    return value if isinstance(value, str) else None


def as_list(value: JSON) -> list[JSON]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []
