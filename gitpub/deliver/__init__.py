"""Delivery: from a committed job to a confirmed publication on the remote branch.

- `relay`: the entry point; picks the ready jobs and hands them to `batch`.
- `batch`: the network part under the delivery lock: fetch, stack, push, confirm.
- `replay`: a job commit found again or remade, and stacked onto the remote tip.
- `recheck`: the dedup-only judge on the new part of the remote's article delta.
- `commit`: the job commit itself (CAS, trailers, the job ref).
- `confirm`: PUBLISHED decided by trailers AND content on the remote-tracking branch.
- `fontmerge`: the font rule the rebase driver (`git.rebase`) calls at each stop: font-only
  conflicts resolved by regenerating the subsets.
- `faults`: what a failed git call means for the job (retry, conflict, review)."""
