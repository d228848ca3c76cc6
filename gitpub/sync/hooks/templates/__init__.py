"""The hook templates, shipped inside the package as its data (see pyproject.toml).

`git blogpub install` reads them with importlib.resources; they are plain POSIX shell."""
