"""An article's title, slug and date, read the way its site generator reads them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from markdown_it import MarkdownIt

from gitpub.site.frontmatter import FrontMatter, parse


@dataclass(frozen=True)
class Article:
    text: str
    front: FrontMatter

    @classmethod
    def read(cls, text: str) -> Article:
        return cls(text, parse(text))

    @property
    def body(self) -> str:
        return "\n".join(self.text.split("\n")[self.front.body_start_line - 1 :])

    @property
    def title(self) -> str | None:
        """The front matter's title, else the first level-one heading of the body."""
        return self.front.title or first_heading(self.body)

    @property
    def slug(self) -> str | None:
        return self.front.slug

    @property
    def date(self) -> dt.datetime | None:
        return self.front.date


def first_heading(body: str) -> str | None:
    """The text of the first `# Heading` (or setext heading), found as CommonMark finds it: a
    `#` line inside a code block is not a heading."""
    tokens = MarkdownIt("commonmark").parse(body)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1" and i + 1 < len(tokens):
            text = tokens[i + 1].content.strip()
            if text:
                return text
    return None
