"""Article paths as site generators name them: `[publish] path` templates and slugs.

Placeholders: `{slug}` — the front-matter slug as written (checked to be one safe path
segment), else a lower-case slug of the title; `{title}` — the title made path-safe, keeping
its case and CJK characters, as Hexo names files; `{date:<strftime>}` — the front-matter date,
else the submit time in UTC. Without a template the path is `<content[0]>/{slug}<suffixes[0]>`.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import TYPE_CHECKING, NamedTuple

from gitpub.errors import InputError

if TYPE_CHECKING:  # the Markdown parser loads only where articles are read, not with config
    from gitpub.site.article import Article

_PLACEHOLDER = re.compile(r"\{(slug|title|date)(?::([^{}]*))?\}")
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
# Hexo's slugize: whitespace and ASCII punctuation become one separator; the rest is kept.
_SEPARATORS = re.compile(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"',<.>/?]+")


class PathError(InputError):
    """The article's front matter cannot name a path."""


class Named(NamedTuple):
    path: str
    explicit: bool  # the writer named it: the front matter's slug
    origin: str  # "front-matter slug", "title" or "template"


def slugify(text: str) -> str:
    """A lower-case, path-safe slug that keeps CJK characters (valid in URLs and file names)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE)
    return text.strip("-_")[:80]


def title_segment(title: str) -> str:
    """The title as one path segment: case and CJK kept, ASCII punctuation and spaces folded
    into `-` (what Hexo does to `:title`)."""
    text = unicodedata.normalize("NFC", title)
    return _SEPARATORS.sub("-", text).strip("-")[:120]


def safe_slug(slug: str) -> str:
    """The front-matter slug as written, or PathError when it is not one safe path segment."""
    if (
        not slug
        or _UNSAFE.search(slug)
        or slug in (".", "..")
        or slug.startswith(".")
        or slug != slug.strip()
        or len(slug.encode("utf-8")) > 200
    ):
        raise PathError(f"front-matter slug {slug!r} is not a safe file name")
    return slug


def derive(
    template: str | None,
    content: str,
    suffix: str,
    article: Article,
    submitted: dt.datetime,
) -> Named:
    """The path the front matter and the template give the article (not yet checked against
    the content folders)."""
    pattern = template or f"{content}/{{slug}}{suffix}"
    slug = safe_slug(article.slug) if article.slug else None
    needs_title = "{title" in pattern or ("{slug" in pattern and slug is None)
    title = article.title
    if needs_title and not title:
        raise PathError(
            "the article has no title (front matter or first # heading) to name its path; "
            "pass --target or give it a slug"
        )

    def fill(m: re.Match[str]) -> str:
        name, fmt = m.group(1), m.group(2)
        if name == "slug":
            value = slug or slugify(title or "")
        elif name == "title":
            value = title_segment(title or "")
        else:
            when = article.date or submitted.astimezone(dt.timezone.utc)
            value = when.strftime(fmt or "%Y-%m-%d")
        if not value or _UNSAFE.search(value.replace("/", "")):
            raise PathError(f"[publish] path: {{{name}}} gives no usable file name ({value!r})")
        return value

    path = _PLACEHOLDER.sub(fill, pattern)
    if slug is not None and "{slug" in pattern:
        return Named(path, True, "front-matter slug")
    return Named(path, False, "template" if template else "title")


def check_template(template: str) -> str | None:
    """Why a `[publish] path` template is unusable, or None."""
    rest = _PLACEHOLDER.sub("", template)
    if "{" in rest or "}" in rest:
        return "placeholders are {slug}, {title} and {date:<strftime>}"
    if not re.search(r"\{(slug|title)\}", template):
        return "needs {slug} or {title}, or every article would get the same path"
    if template.startswith("/") or ".." in template.split("/"):
        return "must be a path inside the repository"
    return None
