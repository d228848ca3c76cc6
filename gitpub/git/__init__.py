"""The repository: git run under a fixed locale, in-memory objects and merges, trailers,
worktrees, locks and the repair of what a killed git leaves behind."""
