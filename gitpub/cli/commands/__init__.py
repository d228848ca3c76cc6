"""One module per subcommand; each exposes a plain `main(...)` that never sees click."""
