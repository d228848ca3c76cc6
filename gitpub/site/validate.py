"""Validation by file type: `.md` is CommonMark, `.mdx` is MDX.

A Markdown parser accepts every text, so a `.md` article is refused only for front matter its
generator cannot read. An `.mdx` article is also refused for JSX tags that do not balance —
what the MDX compiler refuses most often — and the code it must not look into is found the
way the compiler finds it: block structure and code spans from a CommonMark parser
(markdown-it), with MDX's own changes to CommonMark applied first (no indented code, so a
fence may be indented any depth inside list items and JSX; `import`/`export` blocks are
JavaScript). When in doubt the check lets an article through: it must never refuse a page the
real compiler (`contrib/mdx-validate`) accepts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from gitpub.site.frontmatter import parse


@dataclass(frozen=True)
class Problem:
    reason: str
    line: int  # 1-based, in the whole text


def check(path: str, text: str) -> Problem | None:
    """The first reason the article's generator could not use it, or None."""
    fm = parse(text)
    if fm.error:
        return Problem(f"front matter: {fm.error}", 1)
    if not path.lower().endswith(".mdx"):
        return None
    body = text.split("\n")[fm.body_start_line - 1 :]
    return _jsx_balance(body, fm.body_start_line - 1)


# ------------------------------------------------------------------------------- MDX

_MDX_ONLY = re.compile(
    r"^(import\s.*\sfrom\s|import\s+['\"]|export\s+(const|let|var|function|default)\b|<[A-Z])"
)


def uses_mdx(text: str) -> bool:
    """Whether the article is written in MDX: a line outside code that opens an ESM import or
    export, or a JSX component (`<Note`), which Markdown would print as text."""
    fm = parse(text)
    fence: str | None = None
    for line in text.split("\n")[fm.body_start_line - 1 :]:
        stripped = line.lstrip(" \t")
        m = _FENCE.match(stripped)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
        elif _MDX_ONLY.match(line):
            return True
    return False


_ESM = re.compile(r"^(import|export)[\s{*]")
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param"}
    | {"source", "track", "wbr"}
)


def _mdx_source(lines: list[str]) -> list[str]:
    """The body as CommonMark should see it to find what MDX finds: every line dedented (MDX
    has no indented code), and `import`/`export` blocks blanked (they are JavaScript, and may
    run over blank lines until the code is complete)."""
    out = [line.lstrip(" \t") for line in lines]
    fence: str | None = None
    i = 0
    while i < len(out):
        line = out[i]
        m = _FENCE.match(line)
        if fence is not None:
            run = m.group(1) if m else ""
            if run[:1] == fence[0] and len(run) >= len(fence) and not line[len(run) :].strip():
                fence = None
            i += 1
            continue
        if m and not (m.group(1)[0] == "`" and "`" in line[len(m.group(1)) :]):
            fence = m.group(1)
            i += 1
            continue
        if "<" in line:
            _join_tags(out, i)
        if _ESM.match(line) and (i == 0 or not out[i - 1].strip()):
            j = i
            while j < len(out) and not (not out[j].strip() and _complete("\n".join(out[i:j]))):
                j += 1
            for k in range(i, j):
                out[k] = ""
            i = j
            continue
        i += 1
    return out


def _join_tags(lines: list[str], i: int) -> None:
    """Each JSX tag that opens on line `i` and runs over lines, joined onto line `i` (the lines
    it leaves are blank). MDX reads the tag first, wherever on the line it opens
    (`</blockquote> <script` then `async` then `></script>`); CommonMark would read a `>`
    starting a line of it as a block quote and a blank line in it as a paragraph break. An
    attribute expression ends where its braces balance, however many lines that takes."""
    k = _next_tag_start(lines[i], 0)
    while k >= 0:
        end, spanned = _tag_extent(lines, i, k)
        if spanned:
            joined = "\n".join(lines[i : i + spanned + 1])
            lines[i] = joined[:end].replace("\n", " ") + joined[end:].split("\n", 1)[0]
            for j in range(i + 1, i + spanned + 1):
                lines[j] = ""
        k = _next_tag_start(lines[i], max(end, k + 1))


def _next_tag_start(line: str, start: int) -> int:
    """The next `<` at or after `start` outside a code span of the line, or -1."""
    k = line.find("<", start)
    while k >= 0 and line.count("`", 0, k) % 2:
        k = line.find("<", k + 1)
    return k


def _tag_extent(lines: list[str], i: int, k: int) -> tuple[int, int]:
    """Where the tag opening at column `k` of line `i` ends (an offset into the lines from
    `i` joined by newlines) and how many lines it runs past line `i`; (k, 0) when it is no
    tag. The window grows until the tag ends or the text does: a tag is not cut off at any
    fixed number of lines."""
    window = 50
    while True:
        rest = "\n".join(lines[i : i + window])
        try:
            parsed = _tag_at(rest, k, open_end=i + window < len(lines))
        except _RanOut:
            window *= 4
            continue
        if parsed is None:
            return k, 0
        end = parsed[3]
        return end, rest.count("\n", 0, end)


def _complete(code: str) -> bool:
    """Whether JavaScript has closed every bracket, string and template it opened."""
    depth, quote, k = 0, "", 0
    while k < len(code):
        ch = code[k]
        if quote:
            if ch == "\\":
                k += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        k += 1
    return depth <= 0 and not quote


def _jsx_balance(lines: list[str], offset: int) -> Problem | None:
    md = MarkdownIt("commonmark", {"html": False}).disable("code")
    stack: list[tuple[str, int]] = []
    for token in md.parse("\n".join(_mdx_source(lines))):
        if token.type != "inline" or token.map is None:
            continue  # fences and code blocks are never looked into
        first = offset + token.map[0] + 1
        for name, closing, selfclosing, pos in _tags(_mask_code_spans(token)):
            line = first + token.content.count("\n", 0, pos)
            if selfclosing or name.lower() in _VOID:
                continue
            if not closing:
                stack.append((name, line))
            elif not stack or stack[-1][0] != name:
                shown = f"</{name}>" if name else "</>"
                return Problem(f"closing tag {shown} does not match", line)
            else:
                stack.pop()
    if stack:
        name, line = stack[-1]
        return Problem(f"tag <{name}> is never closed", line)
    return None


def _mask_code_spans(token: Token) -> str:
    """The inline source with code spans, backslash escapes and HTML comments blanked, by
    CommonMark's rules: a run of n backticks opens a span that the next run of exactly n
    backticks closes; a run with no partner is literal."""
    src = token.content
    out = list(src)
    k = 0
    while k < len(src):
        ch = src[k]
        if ch == "\\" and k + 1 < len(src):
            out[k] = out[k + 1] = " "
            k += 2
            continue
        if src.startswith("<!--", k):
            end = src.find("-->", k + 4)
            stop = len(src) if end < 0 else end + 3
            out[k:stop] = " " * (stop - k)
            k = stop
            continue
        if ch == "`":
            run = len(src[k:]) - len(src[k:].lstrip("`"))
            closer = re.compile(rf"(?<!`)`{{{run}}}(?!`)")
            m = closer.search(src, k + run)
            if m is None:
                k += run
                continue
            out[k : m.end()] = " " * (m.end() - k)
            k = m.end()
            continue
        k += 1
    return "".join(out)


_NAME = re.compile(r"[A-Za-z_$][\w$.:-]*")


def _tags(src: str) -> list[tuple[str, bool, bool, int]]:
    """JSX tags in masked inline source: (name, closing, self-closing, offset). A `<` that
    does not start a well-formed tag (`a < b`, `<3`) is text, as it is to a reader."""
    found = []
    k = src.find("<")
    while k >= 0:
        parsed = _tag_at(src, k)
        if parsed is None:
            k = src.find("<", k + 1)
            continue
        name, closing, selfclosing, end = parsed
        found.append((name, closing, selfclosing, k))
        k = src.find("<", end)
    return found


class _RanOut(Exception):
    """The text ended inside a tag that might still close further on."""


def _tag_at(src: str, k: int, open_end: bool = False) -> tuple[str, bool, bool, int] | None:
    """The tag opening at `src[k]`, or None when none does there. With `open_end`, `src` is
    a window of a longer text: running out of it raises _RanOut instead of answering None."""

    def ran_out() -> None:
        if open_end:
            raise _RanOut

    i = k + 1
    closing = src.startswith("/", i)
    if closing:
        i += 1
    m = _NAME.match(src, i)
    name = m.group(0) if m else ""
    if m is None and not src.startswith(">", i):
        return None  # not a tag and not a fragment
    i = m.end() if m else i
    if m and i < len(src) and src[i] not in " \t\n/>{":
        return None
    while i < len(src):
        ch = src[i]
        if ch in " \t\n":
            i += 1
        elif src.startswith("/>", i):
            return (name, closing, True, i + 2) if not closing else None
        elif ch == ">":
            return name, closing, False, i + 1
        elif ch == "{":
            i = _skip_braces(src, i)
            if i < 0:
                ran_out()
                return None
        elif ch in "\"'":
            end = src.find(ch, i + 1)
            if end < 0:
                ran_out()
                return None
            i = end + 1
        elif closing:
            return None  # a closing tag has nothing but its name
        else:
            attr = _NAME.match(src, i)
            if attr is None and ch != "=":
                return None
            i = attr.end() if attr else i + 1
    ran_out()
    return None


def _skip_braces(src: str, i: int) -> int:
    """The offset just past the `}` that closes the expression opening at `src[i]`, or -1.

    JavaScript, read as far as brackets need: strings, comments and template literals may
    hold braces, `<`, `>` and blank lines; a template literal's `${…}` is code again."""
    stack: list[str] = []  # "{" for code, "`" for the text of a template literal
    n = len(src)
    while i < n:
        ch = src[i]
        if stack and stack[-1] == "`":
            if ch == "\\":
                i += 1
            elif ch == "`":
                stack.pop()
            elif src.startswith("${", i):
                stack.append("{")
                i += 1
        elif ch in "\"'":
            i = _string_end(src, i)
            if i < 0:
                return -1
            continue
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            if end < 0:
                return -1
            i = end + 2
            continue
        elif src.startswith("//", i):
            end = src.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch == "`":
            stack.append("`")
        elif ch == "{":
            stack.append("{")
        elif ch == "}":
            if not stack:
                return -1
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return -1


def _string_end(src: str, i: int) -> int:
    """The offset just past the string literal opening at `src[i]`, or -1."""
    quote, i = src[i], i + 1
    while i < len(src):
        if src[i] == "\\":
            i += 2
            continue
        if src[i] == quote:
            return i + 1
        i += 1
    return -1
