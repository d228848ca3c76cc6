"""Which site generator a repository is, from the files each one insists on, and how its
author lays articles out.

Zola: a config.toml setting `base_url` (Hugo spells it `baseURL`) beside content/, whose
sections are folders holding an `_index.md`. Hugo: a hugo.toml/yaml/json or config.* file, at
the root or in config/_default/, beside content/. Jekyll: _config.yml beside _posts/. Hexo:
_config.yml, a package.json depending on hexo, and source/_posts/. Astro: astro.config.*
beside src/content/. Docusaurus: docusaurus.config.* beside blog/. The layout — year folders,
page bundles, the suffix — is read from the posts already there, never assumed. Each finding
carries the reasons, so `init` can say why it chose what it wrote."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

ARTICLE_SUFFIXES = (".md", ".mdx", ".markdown")
FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")
_SKIP_DIRS = {".git", "node_modules", "public", "_site", "resources", "dist", "build", ".astro"}
SECTION = "_index.md"  # Hugo's and Zola's list page of a folder: never an article
# What each generator renders: Hugo and Zola have no MDX, Jekyll and Hexo render Markdown.
_RENDERS = {
    "Hugo": (".md", ".markdown"),
    "Zola": (".md",),
    "Jekyll": (".md", ".markdown"),
    "Hexo": (".md", ".markdown"),
}
_YEAR = re.compile(r"(19|20)\d\d")
_MONTH = re.compile(r"(0[1-9]|1[0-2])")


@dataclass
class Site:
    generator: str | None  # "Zola", "Hugo", "Jekyll", "Hexo", "Astro", "Docusaurus", or None
    content: str = "content/posts"
    suffixes: tuple[str, ...] = (".mdx", ".md")
    path: str | None = None  # the [publish] path template, None for the default
    fonts_dir: str = "public/fonts"  # where the site serves static files from
    reasons: list[str] = field(default_factory=list)
    font: str | None = None  # a CJK font found in the repository


def detect(root: Path) -> Site:
    for probe in (_hexo, _jekyll, _zola, _hugo, _astro, _docusaurus):
        site = probe(root)
        if site is not None:
            site.font = find_cjk_font(root)
            return site
    site = Site(None, reasons=["no Zola, Hugo, Jekyll, Hexo, Astro or Docusaurus layout found"])
    site.font = find_cjk_font(root)
    return site


def _first(root: Path, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if (root / n).is_file()), None)


def _zola(root: Path) -> Site | None:
    cfg = _first(root, ("config.toml", "zola.toml"))
    if cfg is None or not (root / "content").is_dir():
        return None
    try:
        data = tomllib.loads((root / cfg).read_text("utf-8", "replace"))
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    if "base_url" not in data:
        return None
    site = Site("Zola", fonts_dir="static/fonts")
    site.reasons.append(f"{cfg} sets base_url (Zola's key; Hugo's is baseURL) and content/ exists")
    if (root / "templates").is_dir():
        site.reasons.append("templates/ exists")
    section, pages = _zola_articles(root)
    site.content = section
    site.reasons.append(
        f"{section}/ is the section ({SECTION}) with the most pages ({pages})"
        if pages
        else "no section holds pages yet; new articles go to content/"
    )
    _lay_out(site, root, _articles(root / section), "Zola")
    return site


def _zola_articles(root: Path) -> tuple[str, int]:
    """The section holding the most pages (its own files and page bundles, not those of its
    subsections): Zola renders every section, but one of them is the blog."""
    content = root / "content"
    sections = sorted(
        {p.parent for p in content.rglob(SECTION)} | {content},
        key=lambda p: (len(p.parts), p.as_posix()),
    )
    counts: Counter[Path] = Counter()
    for page in _articles(content):
        folder = page.parent.parent if page.stem == "index" else page.parent
        home = next((s for s in reversed(sections) if folder == s or s in folder.parents), content)
        counts[home] += 1
    if not counts:
        return "content", 0
    best = max(sections, key=lambda s: (counts[s], -len(s.parts)))
    return best.relative_to(root).as_posix(), counts[best]


def _hugo(root: Path) -> Site | None:
    names = tuple(
        f"{folder}{base}.{ext}"
        for folder in ("", "config/_default/")
        for base in ("hugo", "config")
        for ext in ("toml", "yaml", "yml", "json")
    )
    cfg = _first(root, names)
    if cfg is None or not (root / "content").is_dir():
        return None
    content = next(
        (c for c in ("content/posts", "content/post", "content/blog") if (root / c).is_dir()),
        None,
    ) or _busiest(root / "content", root)
    site = Site("Hugo", content=content, fonts_dir="static/fonts")
    site.reasons.append(f"{cfg} and content/ exist")
    _lay_out(site, root, _articles(root / content), "Hugo")
    return site


def _busiest(content: Path, root: Path) -> str:
    """The folder of content/ holding the most articles, else content/ itself."""
    counts = Counter(
        p.relative_to(content).parts[0] for p in _articles(content) if p.parent != content
    )
    if not counts:
        return content.relative_to(root).as_posix()
    return (content / counts.most_common(1)[0][0]).relative_to(root).as_posix()


def _lay_out(site: Site, root: Path, files: list[Path], generator: str) -> None:
    """Suffixes and path template as the existing articles of `site.content` have them: year
    (and month) folders, page bundles (`<slug>/index.md`), the most common suffix."""
    assert site.generator is not None
    site.suffixes = _suffix_order(files, (".md",), _RENDERS.get(generator))
    _note_unrendered(site, files, generator)
    folder = root / site.content
    posts = [p.relative_to(folder) for p in files]
    if not posts:
        return
    bundles = [p for p in posts if p.stem == "index" and len(p.parts) > 1]
    bundled = len(bundles) * 2 > len(posts)
    # Where a post lives: the folder holding it, or holding its bundle.
    homes = [PurePosixPath(*p.parts[: -2 if p in bundles else -1]) for p in posts]
    dated = ""
    years = [h for h in homes if h.parts and _YEAR.fullmatch(h.parts[0])]
    if len(years) * 5 >= len(posts) * 4:  # four in five: the odd page may sit outside
        months = [h for h in years if len(h.parts) > 1 and _MONTH.fullmatch(h.parts[1])]
        if len(months) * 5 >= len(years) * 4:
            dated = "{date:%Y}/{date:%m}/"
            site.reasons.append(f"{len(months)} of {len(posts)} articles sit in year/month folders")
        else:
            dated = "{date:%Y}/"
            site.reasons.append(f"{len(years)} of {len(posts)} articles sit in year folders")
    if bundled:
        site.reasons.append(
            f"{len(bundles)} of {len(posts)} articles are page bundles (<slug>/index.md)"
        )
    if dated or bundled:
        leaf = f"{{slug}}/index{site.suffixes[0]}" if bundled else f"{{slug}}{site.suffixes[0]}"
        site.path = f"{site.content}/{dated}{leaf}"
    else:
        _note_categories(site, homes)


def _note_categories(site: Site, homes: list[PurePosixPath]) -> None:
    """Posts kept in topic folders that no front-matter field names: a template cannot put a
    new post among them, so `init` says so rather than guess a folder."""
    nested = [h for h in homes if h.parts]
    if nested and len(nested) * 2 > len(homes):
        names = sorted(Counter(h.parts[0] for h in nested))
        shown = ", ".join(f"{n}/" for n in names[:4]) + (", …" if len(names) > 4 else "")
        site.reasons.append(
            f"{len(nested)} of {len(homes)} articles sit in topic folders ({shown}); "
            "pass --target to put a new one among them"
        )


def _note_unrendered(site: Site, files: list[Path], generator: str) -> None:
    renders = _RENDERS.get(generator)
    if renders is None:
        return
    stray = sorted({p.suffix for p in files if p.suffix not in renders})
    if stray:
        site.reasons.append(f"{generator} does not render {', '.join(stray)}: left out of suffixes")


def _jekyll(root: Path) -> Site | None:
    if not (root / "_config.yml").is_file() or not (root / "_posts").is_dir():
        return None
    site = Site("Jekyll", content="_posts", fonts_dir="assets/fonts")
    site.reasons.append("_config.yml and _posts/ exist")
    files = _articles(root / "_posts")
    site.suffixes = _suffix_order(files, (".md", ".markdown"), _RENDERS["Jekyll"])
    _note_unrendered(site, files, "Jekyll")
    site.path = f"_posts/{{date:%Y-%m-%d}}-{{slug}}{site.suffixes[0]}"
    return site


def _hexo(root: Path) -> Site | None:
    if not (root / "_config.yml").is_file() or not (root / "source" / "_posts").is_dir():
        return None
    try:
        package = json.loads((root / "package.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    deps = {**package.get("dependencies", {}), **package.get("devDependencies", {})}
    if "hexo" not in deps:
        return None
    site = Site("Hexo", content="source/_posts", fonts_dir="source/fonts")
    site.reasons.append("_config.yml, source/_posts/ and a package.json depending on hexo exist")
    files = _articles(root / "source" / "_posts")
    site.suffixes = _suffix_order(files, (".md",), _RENDERS["Hexo"])
    _note_unrendered(site, files, "Hexo")
    name = _hexo_post_name(root / "_config.yml")
    site.path = "source/_posts/" + _hexo_template(name)
    site.reasons.append(f"new_post_name is {name!r}")
    if "/" not in name:
        folder = root / "source" / "_posts"
        _note_categories(site, [PurePosixPath(*p.relative_to(folder).parts[:-1]) for p in files])
    return site


def _hexo_post_name(config: Path) -> str:
    text = config.read_text("utf-8", "replace")
    m = re.search(r"^new_post_name:\s*['\"]?([^'\"#\n]+?)['\"]?\s*(?:#.*)?$", text, re.M)
    return m.group(1).strip() if m else ":title.md"


def _hexo_template(name: str) -> str:
    """Hexo's `new_post_name` placeholders in gitpub's template syntax."""
    table = {
        ":title": "{title}",
        ":year": "{date:%Y}",
        ":month": "{date:%m}",
        ":day": "{date:%d}",
        ":i_month": "{date:%-m}",
        ":i_day": "{date:%-d}",
    }
    pattern = re.compile("|".join(sorted(map(re.escape, table), key=len, reverse=True)))
    out = pattern.sub(lambda m: table[m.group(0)], name)
    return out if "{title}" in out else "{title}.md"


def _astro(root: Path) -> Site | None:
    names = tuple(f"astro.config.{ext}" for ext in ("mjs", "js", "ts", "mts", "cjs"))
    cfg = _first(root, names)
    if cfg is None:
        return None
    declared = _astro_collections(root)
    if not declared and not (root / "src" / "content").is_dir():
        return None
    known = ("src/content/blog", "src/content/posts", "src/content/post")
    candidates = declared or [c for c in known if (root / c).is_dir()] or ["src/content"]
    content = max(candidates, key=lambda c: len(_articles(root / c)))
    site = Site("Astro", content=content, fonts_dir="public/fonts")
    if declared:
        site.reasons.append(f"{cfg} exists; the content config loads {content}/")
    else:
        site.reasons.append(f"{cfg} and src/content/ exist")
    _lay_out(site, root, _articles(root / content), "Astro")
    return site


_ASTRO_BASE = re.compile(r"""\bbase\s*:\s*['"]\.?/?([^'"]+?)/?['"]""")


def _astro_collections(root: Path) -> list[str]:
    """The folders Astro's content layer loads (`glob({ base: "./content/posts" })` in
    src/content.config.*), that exist."""
    for name in ("content.config", "content/config"):
        for ext in ("ts", "mts", "mjs", "js"):
            path = root / "src" / f"{name}.{ext}"
            if path.is_file():
                found = _ASTRO_BASE.findall(path.read_text("utf-8", "replace"))
                return [f for f in dict.fromkeys(found) if (root / f).is_dir()]
    return []


def _docusaurus(root: Path) -> Site | None:
    names = tuple(f"docusaurus.config.{ext}" for ext in ("js", "ts", "mjs", "cjs"))
    cfg = _first(root, names)
    if cfg is None or not (root / "blog").is_dir():
        return None
    site = Site("Docusaurus", content="blog", fonts_dir="static/fonts")
    site.reasons.append(f"{cfg} and blog/ exist")
    site.suffixes = _suffix_order(_articles(root / "blog"), (".md", ".mdx"))
    site.path = f"blog/{{date:%Y-%m-%d}}-{{slug}}{site.suffixes[0]}"
    return site


def _articles(folder: Path) -> list[Path]:
    """The articles under `folder`: Markdown files, but not section pages (`_index.md`)."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in ARTICLE_SUFFIXES and p.name != SECTION and p.is_file()
    )


def _suffix_order(
    files: list[Path], default: tuple[str, ...], renders: tuple[str, ...] | None = None
) -> tuple[str, ...]:
    """The suffixes in use that the generator renders, the most common first (it names new
    articles); else the default. One stray `.mdx` in a Hugo blog is not a reason to name new
    articles `.mdx`: Hugo would not render them."""
    counts = Counter(p.suffix for p in files if renders is None or p.suffix in renders)
    found = tuple(s for s, _ in counts.most_common())
    return found + tuple(s for s in default if s not in found) if found else default


def find_cjk_font(root: Path) -> str | None:
    """The first font file in the repository that covers common CJK characters."""
    for path in sorted(_fonts(root)):
        if _covers_cjk(path):
            return path.relative_to(root).as_posix()
    return None


def _fonts(root: Path) -> list[Path]:
    out = []
    for path in root.iterdir():
        if path.name in _SKIP_DIRS:
            continue
        if path.is_dir():
            out += [p for p in path.rglob("*") if p.suffix.lower() in FONT_SUFFIXES]
        elif path.suffix.lower() in FONT_SUFFIXES:
            out.append(path)
    return [p for p in out if p.is_file() and not (_SKIP_DIRS & set(p.relative_to(root).parts))]


def _covers_cjk(path: Path) -> bool:
    from fontTools.ttLib import TTCollection, TTFont  # heavy; only when a font file exists

    try:
        if path.suffix.lower() in (".ttc", ".otc"):
            fonts = TTCollection(str(path), lazy=True).fonts[:1]
        else:
            fonts = [TTFont(str(path), lazy=True)]
        cmap = fonts[0].getBestCmap() or {}
    except Exception:  # a damaged or unusual font is simply not a candidate
        return False
    return all(ord(c) in cmap for c in "中文字")
