"""Which gitpub this is: `--version`, `doctor`, the crash log and the manual page say it, and
`gitpub.__version__` is this (pyproject.toml carries the same number)."""

from __future__ import annotations

VERSION = "0.1.0"
