"""`git blogpub init`: detect the site generator and write a commented `.blogpub.toml`."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gitpub import config
from gitpub.cli.commands.output import say
from gitpub.config import faces
from gitpub.core.errors import InputError
from gitpub.core.files import write_atomic
from gitpub.fonts import engine
from gitpub.git import remotes
from gitpub.git.repo import Repo
from gitpub.site.detect import Site, detect
from gitpub.site.language import blog_language


def _remote(repo: Repo) -> str:
    """origin when there is one, else the only remote; origin when there are none yet."""
    names = repo.git("remote", check=False).split()
    return "origin" if "origin" in names or len(names) != 1 else names[0]


def _branch(repo: Repo, remote: str) -> str:
    """The branch the remote publishes (its default branch), else the checked-out one, else
    main: a clone of a `master` blog must not be configured for `main`."""
    asked = remotes.heads(repo, remote) if repo.has_remote(remote) else None
    heads = asked if asked is not None else remotes.last_fetched(repo, remote)
    if heads.default:
        return heads.default
    try:
        return str(repo.pg.head.shorthand) if not repo.pg.head_is_detached else "main"
    except Exception:  # an unborn branch has no head yet
        return "main"


def _face(root: Path, site: Site) -> list[str]:
    """The `face` line of a collection: the face drawn for the blog's language, its family
    named; [] for a single font."""
    if site.font is None or not site.font.lower().endswith((".ttc", ".otc")):
        return []
    declared = blog_language(root)
    chosen = faces.choose(root / site.font, declared[0] if declared else None)
    if declared and chosen:
        return [f"# face = {chosen[0]}    # {chosen[1]}, for {declared[0]} ({declared[1]})"]
    names = faces.families(root / site.font)
    first = f", {names[0]}" if names else ""
    why = f"no face drawn for {declared[0]}" if declared else "the blog declares no language"
    return [f"# face = 0    # the collection's first face{first} ({why})"]


def render(
    site: Site, branch: str = "main", remote: str = "origin", face: Sequence[str] = ()
) -> str:
    """The config text for `site`, with a comment on every choice."""
    q = json.dumps  # TOML basic strings are JSON strings for these values
    found = site.generator or "no known site generator"
    lines = [
        f"# gitpub configuration, written by `git blogpub init` for {found}.",
        *(f"#   {reason}" for reason in site.reasons),
        "# Every key is explained in the README; review this file, then commit it.",
        "",
        "[publish]",
        f"remote = {q(remote)}    # the shared remote jobs are delivered to",
        f"branch = {q(branch)}    # the branch the site is built from (the remote's default)",
        f"content = [{q(site.content)}]    # folders holding articles",
        "suffixes = [" + ", ".join(q(s) for s in site.suffixes) + "]"
        "    # article endings; the first names new articles",
    ]
    if site.path:
        lines.append(f"path = {q(site.path)}    # where a new article goes")
    else:
        lines.append(
            f"# path = {q(site.content + '/{slug}' + site.suffixes[0])}"
            "    # the default: front-matter slug, else a slug of the title"
        )
    lines += ["", "[steps]", 'validate = "builtin:mdx"          # by file type; [] turns it off']
    if site.font:
        folder = q(f"{site.fonts_dir}/blog")
        outputs = q(f"{site.fonts_dir}/blog.woff2")
        lines += [
            "",
            "# A CJK font was found in the repository. Uncomment to publish it in unicode-range",
            "# chunks: blog.css in the folder declares one @font-face per slice, and each slice",
            "# the articles use gets a small .woff2 of just their characters, so a new character",
            "# rewrites one small chunk (see docs/fonts.md). Link blog.css from the site's pages.",
            "# [fonts]",
            f"# source = {q(site.font)}",
            *face,
            f"# chunked = {folder}",
            '# family = "Blog Sans"',
            "# Or a single subset file holding every character, instead of chunked:",
            f"# # outputs = [{outputs}]",
        ]
    return "\n".join(lines) + "\n"


def main(path: Path, *, force: bool) -> None:
    repo = Repo.discover(path)
    target = repo.root / config.CONFIG_NAME
    if target.is_file() and target.read_text("utf-8", "replace").strip() and not force:
        raise InputError(f"{config.CONFIG_NAME} already exists; pass --force to replace it")
    with engine.captured_log([]):  # fontTools' remarks on the fonts it opens are not ours
        site = detect(repo.root)
    remote = _remote(repo)
    text = render(site, _branch(repo, remote), remote, _face(repo.root, site))
    with tempfile.TemporaryDirectory() as tmp:
        # What init writes must load; checked before the file is written.
        (Path(tmp) / config.CONFIG_NAME).write_text(text, encoding="utf-8")
        config.load(Path(tmp))
    write_atomic(target, text.encode("utf-8"))
    if site.generator:
        say(f"found {site.generator}: " + "; ".join(site.reasons))
    else:
        say(
            "not a recognised blog (Zola, Hugo, Jekyll, Hexo, Astro, Docusaurus): "
            "wrote a generic config"
        )
    say(f"articles: {site.content} ({', '.join(site.suffixes)})")
    say(f"path: {site.path or site.content + '/{slug}' + site.suffixes[0]}")
    if site.font:
        say(f"CJK font: {site.font} (a [fonts] table is in the file, commented out)")
    say(f"wrote {config.CONFIG_NAME}; review it and commit it")
