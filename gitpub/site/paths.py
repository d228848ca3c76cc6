"""Article paths: slugs and, from `[publish] path`, templates."""

from __future__ import annotations

import re
import unicodedata


def slugify(text: str) -> str:
    """A path-safe slug that keeps CJK characters (valid in URLs and file names)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE)
    return text.strip("-_")[:80]
