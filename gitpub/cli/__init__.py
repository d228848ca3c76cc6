"""The command line: the click app (`app`), one module per subcommand (`commands`), the one
handler every command ends in (`entry`), and the man page.

The only room that knows about terminals."""
