"""The command line: the click app (`app`), one module per subcommand (`commands`), the lean
path that runs `submit` and `status` without click (`entry`), and the man page.

The only room that knows about terminals. Importing it costs nothing: `entry` must stay lean."""
