"""The hook templates: this top-level folder installs as the package gitpub.hooktemplates
(see pyproject.toml), so `git blogpub install` reads them with importlib.resources.

They are plain POSIX shell."""
