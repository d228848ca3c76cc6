"""The hook templates, shipped inside the package as `gitpub.hooktemplates` (see pyproject.toml).

`git blogpub install` reads them with importlib.resources; they are plain POSIX shell."""
