"""Article paths as site generators name them: `[publish] path` templates and slugs.

Placeholders: `{slug}` — the front-matter slug as written (checked to be one safe path
segment), else a slug of the title that keeps its case and CJK characters; `{title}` — the
title made path-safe, keeping its case and CJK characters, as Hexo names files;
`{date:<strftime>}` — the front-matter date, else the submit time in UTC. Without a template
the path is `<content[0]>/{slug}<suffixes[0]>`.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from gitpub.core.errors import InputError

if TYPE_CHECKING:  # the Markdown parser loads only where articles are read, not with config
    from gitpub.site.article import Article

_PLACEHOLDER = re.compile(r"\{(slug|title|date)(?::([^{}]*))?\}")
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
# Hexo's slugize: whitespace and ASCII punctuation become one separator; the rest is kept.
_SEPARATORS = re.compile(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"',<.>/?]+")
# ext4 and most file systems allow 255 bytes per name; leave room for a suffix or a date.
_MAX_SEGMENT_BYTES = 200
# Names Windows keeps for devices, whatever the case and the suffix: a clone holding
# `con.md` cannot be checked out there.
_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{p}{n}" for p in ("COM", "LPT") for n in range(1, 10)]
)


class PathError(InputError):
    """The article's front matter cannot name a path."""


class Named(NamedTuple):
    path: str
    explicit: bool  # the writer named it: the front matter's slug
    origin: str  # "front-matter slug", "title" or "template"
    warning: str | None = None  # a front-matter date `{date}` could not read


def slugify(text: str) -> str:
    """A path-safe slug of a title that keeps its case and its CJK (any script's letters,
    digits and marks): every run of anything else — spaces, punctuation, `/`, `.`, control
    characters — becomes one `-`, and `-`/`_` are trimmed from both ends (a leading `_` is a
    special file to Jekyll and Hugo)."""
    text = unicodedata.normalize("NFKC", text)
    kept = "".join(ch if ch == "_" or unicodedata.category(ch)[0] in "LNM" else " " for ch in text)
    return _fit(re.sub(r" +", "-", kept).strip("-_"), 80, "-_")


def title_segment(title: str) -> str:
    """The title as one path segment: case and CJK kept, ASCII punctuation and spaces folded
    into `-` (what Hexo does to `:title`)."""
    text = unicodedata.normalize("NFC", title)
    return _fit(_SEPARATORS.sub("-", text).strip("-"), 120, "-")


def _fit(segment: str, chars: int, trim: str) -> str:
    """At most `chars` characters and _MAX_SEGMENT_BYTES of UTF-8, cut between characters (a
    CJK character takes three bytes, so a cap on characters alone lets a Chinese title
    overflow the file system's 255-byte names), with no separator left dangling at the cut."""
    data = segment[:chars].encode("utf-8")[:_MAX_SEGMENT_BYTES]
    return data.decode("utf-8", "ignore").rstrip(trim)


def reserved_device(segment: str) -> bool:
    """Whether Windows reserves the name (`CON`, `nul.md`, `Com1.txt`, …)."""
    return segment.split(".", 1)[0].upper() in _DEVICES


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
        from_title = name == "title" or (name == "slug" and slug is None)
        if name == "date":
            when = article.date or submitted.astimezone(dt.timezone.utc)
            value = when.strftime(fmt or "%Y-%m-%d")
        elif name == "title":
            value = title_segment(title or "")
        else:
            value = slug or slugify(title or "")
        if not value or _UNSAFE.search(value.replace("/", "")):
            what = f"the title {title!r}" if from_title else f"[publish] path: {{{name}}}"
            raise PathError(
                f"{what} gives no usable file name ({value!r}); pass --target or give it a slug"
            )
        # A derived name only: a slug the writer chose is theirs, as their generator takes it.
        if from_title and reserved_device(value):
            raise PathError(
                f"the title gives {value!r}, a name Windows reserves for a device; "
                "pass --target or give it a slug"
            )
        return value

    path = _PLACEHOLDER.sub(fill, pattern)
    raw = article.front.unreadable_date if "{date" in pattern else None
    warning = (
        f"the front-matter date {raw!r} is no date gitpub can read (2016-10-09, "
        "2016/10/09 19:18[:24], ISO 8601 with an offset): {date} took the submit time"
        if raw is not None
        else None
    )
    if slug is not None and "{slug" in pattern:
        return Named(path, True, "front-matter slug", warning)
    return Named(path, False, "template" if template else "title", warning)


def mdx_named(path: str, text: str, suffixes: Iterable[str]) -> str:
    """A derived path renamed `.mdx` when the article is written in MDX and the blog takes
    `.mdx`: under a Markdown name the site would render it as text and the JSX check would not
    look at it."""
    from gitpub.site.validate import uses_mdx  # the Markdown parser: only where paths derive

    suffix = PurePosixPath(path).suffix
    if not suffix or suffix == ".mdx" or ".mdx" not in suffixes or not uses_mdx(text):
        return path
    return path[: -len(suffix)] + ".mdx"


_STRFTIME = {"Y": r"\d{4}", "m": r"\d{2}", "d": r"\d{2}", "H": r"\d{2}", "M": r"\d{2}"}
_STRFTIME.update({"S": r"\d{2}", "-m": r"\d{1,2}", "-d": r"\d{1,2}", "y": r"\d{2}"})


def dated_alike(template: str | None, article: Article, existing: Iterable[str]) -> str | None:
    """The one existing path the template gives this article on some date, when the article
    has no date of its own.

    Jekyll and Docusaurus read a post's date from its file name when the front matter has
    none: `_posts/2015-03-25-native.md` is dated by its name. Derived again from the template,
    such a post would take the submit day and become a second copy; its existing path keeps
    its date. None when the article has a date, the template none, or not exactly one path
    matches."""
    if not template or "{date" not in template or article.date is not None:
        return None
    parts: list[str] = []
    at = 0
    for m in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[at : m.start()]))
        name, fmt = m.group(1), m.group(2)
        if name == "date":
            parts.append(_date_pattern(fmt or "%Y-%m-%d"))
        else:
            try:
                value = _value(name, article)
            except PathError:
                return None
            parts.append(re.escape(value))
        at = m.end()
    parts.append(re.escape(template[at:]))
    # Up to case: `docusaurus-2019-recap` is the post titled "Docusaurus 2019 Recap".
    pattern = re.compile("".join(parts), re.IGNORECASE)
    found = [p for p in existing if pattern.fullmatch(p)]
    return found[0] if len(found) == 1 else None


def _date_pattern(fmt: str) -> str:
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            key = fmt[i + 1 : i + 3] if fmt[i + 1] == "-" else fmt[i + 1]
            out.append(_STRFTIME.get(key, r"[^/]+?"))
            i += 1 + len(key)
        else:
            out.append(re.escape(fmt[i]))
            i += 1
    return "".join(out)


def _value(name: str, article: Article) -> str:
    """What `{slug}` or `{title}` stands for in this article's path (as `derive` fills it)."""
    slug = safe_slug(article.slug) if article.slug else None
    if name == "slug" and slug is not None:
        return slug
    title = article.title
    if not title:
        raise PathError("no title")
    return title_segment(title) if name == "title" else slugify(title)


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
