"""The publication states and the one table of allowed transitions."""

from __future__ import annotations

import enum

from gitpub.core.errors import IllegalTransition


class State(str, enum.Enum):
    RECEIVED = "RECEIVED"
    SCHEDULED = "SCHEDULED"
    PREPARING = "PREPARING"
    SKIPPED = "SKIPPED"
    REVIEW = "REVIEW"
    READY_TO_COMMIT = "READY_TO_COMMIT"
    RECHECK_CANDIDATES = "RECHECK_CANDIDATES"
    LOCAL_COMMITTING = "LOCAL_COMMITTING"
    LOCAL_COMMITTED = "LOCAL_COMMITTED"
    PUSHING = "PUSHING"
    IN_REVIEW = "IN_REVIEW"
    RETRY_WAIT = "RETRY_WAIT"
    PUBLISHED = "PUBLISHED"
    CONFLICT = "CONFLICT"
    FAILED = "FAILED"
    RECOVERING = "RECOVERING"

    def __str__(self) -> str:
        return self.value


S = State

TERMINAL = frozenset({S.PUBLISHED, S.SKIPPED, S.REVIEW, S.CONFLICT, S.FAILED})
"""States a job stays in until an operator acts (or, for FAILED, a delivery probe succeeds)."""

NEEDS_PERSON = frozenset({S.REVIEW, S.CONFLICT, S.FAILED})

TRANSITIONS: dict[State, frozenset[State]] = {
    S.RECEIVED: frozenset({S.PREPARING}),
    # `submit --at` creates a job SCHEDULED; at its time it goes the way of every job.
    S.SCHEDULED: frozenset({S.RECEIVED}),
    S.PREPARING: frozenset({S.SKIPPED, S.REVIEW, S.READY_TO_COMMIT}),
    S.READY_TO_COMMIT: frozenset({S.LOCAL_COMMITTING, S.RECHECK_CANDIDATES}),
    S.LOCAL_COMMITTING: frozenset({S.LOCAL_COMMITTED, S.RECOVERING}),
    S.LOCAL_COMMITTED: frozenset({S.PUSHING, S.RECHECK_CANDIDATES}),
    # PUSHING -> REVIEW: the write-set guard refused the commit (gitpub.deliver.guard).
    # PUSHING -> IN_REVIEW: review mode pushed the commit to its own review branch.
    S.PUSHING: frozenset(
        {S.PUBLISHED, S.RETRY_WAIT, S.CONFLICT, S.REVIEW, S.RECHECK_CANDIDATES, S.IN_REVIEW}
    ),
    # A person merged it (PUBLISHED, by content) or deleted its branch unmerged (REVIEW), or
    # a newer job of the same target superseded it (REVIEW: a person sees it, may retry it).
    S.IN_REVIEW: frozenset({S.PUBLISHED, S.REVIEW}),
    S.RETRY_WAIT: frozenset({S.PUSHING, S.FAILED}),
    S.RECHECK_CANDIDATES: frozenset({S.SKIPPED, S.LOCAL_COMMITTED, S.CONFLICT, S.REVIEW}),
    S.RECOVERING: frozenset({S.LOCAL_COMMITTED, S.LOCAL_COMMITTING, S.REVIEW}),
    # FAILED leaves only through a successful delivery probe (for review mode: a push to its
    # review branch), or an operator (below).
    S.FAILED: frozenset({S.PUBLISHED, S.IN_REVIEW}),
    S.PUBLISHED: frozenset(),
    S.SKIPPED: frozenset(),
    S.REVIEW: frozenset(),
    S.CONFLICT: frozenset(),
}

OPERATOR_TRANSITIONS: dict[State, frozenset[State]] = {
    # retry = publish now, without waiting for its time; abandon = never.
    S.SCHEDULED: frozenset({S.RECEIVED, S.SKIPPED}),
    S.REVIEW: frozenset({S.RECEIVED, S.SKIPPED}),
    S.CONFLICT: frozenset({S.RECEIVED, S.SKIPPED}),
    S.FAILED: frozenset({S.RECEIVED, S.SKIPPED}),
    # A withdrawn publication (its content left the published branch: a takedown) is
    # published again only by a person's retry; gitpub.ops.actions checks it was withdrawn.
    S.PUBLISHED: frozenset({S.RECEIVED}),
}


def check_transition(src: State, dst: State, *, operator: bool = False) -> None:
    """Raise IllegalTransition unless src → dst is in the table."""
    allowed = TRANSITIONS[src]
    if operator:
        allowed = allowed | OPERATOR_TRANSITIONS.get(src, frozenset())
    if dst not in allowed:
        who = "operator " if operator else ""
        raise IllegalTransition(f"illegal {who}transition {src} → {dst}")
