"""The options of the commands that start without click, written once.

`cli.py` builds their click commands from these tables, and `gitpub.cli.entry` parses a command
line with them before click is even imported (importing click costs a short command twice
what the rest of it does). Both read the same rows, so the two can never disagree on what a
command accepts; whatever the fast parser does not take as it is (help, a typo, a missing
value, an option whose value needs converting) goes to click, whose messages stay the only
ones. This module imports nothing: it is read on every start."""

from __future__ import annotations

from typing import NamedTuple

VALUE = "value"  # one string; a repeated option is click's to settle
MULTIPLE = "multiple"  # repeatable; a tuple of strings, in order
FLAG = "flag"  # present or not
TYPED = "typed"  # a value click converts (a choice, a number, a time): click parses these


class Option(NamedTuple):
    flag: str  # "--key"
    dest: str  # the keyword of the plain function in gitpub/cli/commands/
    kind: str  # VALUE, MULTIPLE, FLAG or TYPED
    help: str
    required: bool = False
    metavar: str | None = None
    default: str | None = None  # of a VALUE option


def default(option: Option) -> object:
    """The value a command receives when the option is not given."""
    if option.kind == MULTIPLE:
        return ()
    if option.kind == FLAG:
        return False
    return option.default


ROOT = (Option("-C", "path", VALUE, "Run as if started in PATH.", metavar="PATH", default="."),)
"""The options of `git blogpub` itself, before the command."""

SUBMIT = (
    Option(
        "--key", "key", VALUE, "Idempotency key: the same key is the same request.", required=True
    ),
    Option("--source", "source", VALUE, "The source text.", required=True, metavar="FILE|-"),
    Option("--target", "target", VALUE, "Article path inside a content folder.", metavar="PATH"),
    Option(
        "--asset",
        "assets",
        MULTIPLE,
        "A file to place beside the article (repeatable), in the same commit; a text file is "
        "scanned for secrets like the source.",
        metavar="FILE",
    ),
    Option("--topic", "topic", VALUE, "Topic text (stored sanitized)."),
    Option(
        "--allow",
        "allow",
        MULTIPLE,
        "Publish this finding as written (repeatable; `git blogpub scan` prints fingerprints).",
        metavar="FINGERPRINT",
    ),
    Option(
        "--at",
        "at",
        VALUE,
        "Publish at this time: ISO 8601 with an offset, or +N{s,m,h,d}; waits in SCHEDULED.",
        metavar="WHEN",
    ),
    Option(
        "--review",
        "review",
        FLAG,
        "Push to a review branch instead; published once a person merges it.",
    ),
    Option("--json", "as_json", FLAG, "Print one JSON object."),
)

STATUS = (
    Option("--json", "as_json", FLAG, "Print one JSON object."),
    Option("--state", "state", TYPED, "Only jobs in this state."),
    Option("--all", "everything", FLAG, "List every job, finished ones too."),
    Option("--since", "since", TYPED, "Only jobs changed since WHEN (2h, 3d, 2026-11-30)."),
    Option("--limit", "limit", TYPED, "At most N jobs, the newest."),
)

FONTS = (Option("--check", "check", FLAG, "Exit 1 when the subsets are stale; write nothing."),)

COMMANDS = {"submit": SUBMIT, "status": STATUS, "fonts": FONTS}
"""The commands the fast parser may take, by name."""
