"""gitpub: durable, exactly-once publication of articles into a git-backed blog."""

__version__ = "0.1.0"
