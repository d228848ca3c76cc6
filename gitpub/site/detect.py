"""Which site generator a repository is, from the files each one insists on.

Hugo: a hugo.toml/yaml/json or config.toml/yaml/json beside content/. Jekyll: _config.yml
beside _posts/. Hexo: _config.yml, a package.json depending on hexo, and source/_posts/.
Astro: astro.config.* beside src/content/. Docusaurus: docusaurus.config.* beside blog/.
Each finding carries the reasons, so `init` can say why it chose what it wrote."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ARTICLE_SUFFIXES = (".md", ".mdx", ".markdown")
FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")
_SKIP_DIRS = {".git", "node_modules", "public", "_site", "resources", "dist", "build", ".astro"}


@dataclass
class Site:
    generator: str | None  # "Hugo", "Jekyll", "Hexo", "Astro", "Docusaurus", or None
    content: str = "content/posts"
    suffixes: tuple[str, ...] = (".mdx", ".md")
    path: str | None = None  # the [publish] path template, None for the default
    fonts_dir: str = "public/fonts"  # where the site serves static files from
    reasons: list[str] = field(default_factory=list)
    font: str | None = None  # a CJK font found in the repository


def detect(root: Path) -> Site:
    for probe in (_hexo, _jekyll, _hugo, _astro, _docusaurus):
        site = probe(root)
        if site is not None:
            site.font = find_cjk_font(root)
            return site
    site = Site(None, reasons=["no Hugo, Jekyll, Hexo, Astro or Docusaurus layout found"])
    site.font = find_cjk_font(root)
    return site


def _first(root: Path, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if (root / n).is_file()), None)


def _hugo(root: Path) -> Site | None:
    names = tuple(
        f"{base}.{ext}" for base in ("hugo", "config") for ext in ("toml", "yaml", "yml", "json")
    )
    cfg = _first(root, names)
    if cfg is None or not (root / "content").is_dir():
        return None
    content = next(
        (c for c in ("content/posts", "content/post", "content/blog") if (root / c).is_dir()),
        "content",
    )
    site = Site("Hugo", content=content, fonts_dir="static/fonts")
    site.reasons.append(f"{cfg} and content/ exist")
    files = _articles(root / content)
    site.suffixes = _suffix_order(files, (".md",))
    bundles = sum(1 for f in files if f.name in ("index.md", "index.mdx"))
    if files and bundles * 2 > len(files):
        site.path = f"{content}/{{slug}}/index{site.suffixes[0]}"
        site.reasons.append(
            f"{bundles} of {len(files)} articles are page bundles (<slug>/index.md)"
        )
    return site


def _jekyll(root: Path) -> Site | None:
    if not (root / "_config.yml").is_file() or not (root / "_posts").is_dir():
        return None
    site = Site("Jekyll", content="_posts", fonts_dir="assets/fonts")
    site.reasons.append("_config.yml and _posts/ exist")
    site.suffixes = _suffix_order(_articles(root / "_posts"), (".md", ".markdown"))
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
    site.suffixes = _suffix_order(_articles(root / "source" / "_posts"), (".md",))
    name = _hexo_post_name(root / "_config.yml")
    site.path = "source/_posts/" + _hexo_template(name)
    site.reasons.append(f"new_post_name is {name!r}")
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
    if cfg is None or not (root / "src" / "content").is_dir():
        return None
    content = next(
        (
            c
            for c in ("src/content/blog", "src/content/posts", "src/content/post")
            if (root / c).is_dir()
        ),
        "src/content",
    )
    site = Site("Astro", content=content, fonts_dir="public/fonts")
    site.reasons.append(f"{cfg} and src/content/ exist")
    site.suffixes = _suffix_order(_articles(root / content), (".md", ".mdx"))
    return site


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
    return [p for p in folder.rglob("*") if p.is_file() and p.suffix in ARTICLE_SUFFIXES]


def _suffix_order(files: list[Path], default: tuple[str, ...]) -> tuple[str, ...]:
    """The suffixes in use, the most common first (it names new articles); else the default."""
    counts = Counter(p.suffix for p in files)
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
