"""The floor every room stands on: errors, ids, states, files, crash points, the clock.

Nothing here imports another room of gitpub."""
