"""The local web page (`git blogpub ui`) and the Prometheus exposition (`git blogpub
metrics`, `/metrics`): they read through `gitpub.store` and act only through the functions
of `gitpub.ops.actions` the command line calls."""
