"""The job store: the one room that speaks SQL. Jobs and their transitions, the event history,
the outbox, leases, the durable job folders, and how a lost database is recognized."""
