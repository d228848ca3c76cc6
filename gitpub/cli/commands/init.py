"""`git blogpub init`: detect the site generator and write a commented `.blogpub.toml`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from gitpub import config
from gitpub.cli.commands.output import say
from gitpub.core.errors import InputError
from gitpub.core.files import write_atomic
from gitpub.git.repo import Repo
from gitpub.site.detect import Site, detect


def _branch(repo: Repo) -> str:
    """The checked-out branch, the one the site is built from (else main)."""
    try:
        return str(repo.pg.head.shorthand) if not repo.pg.head_is_detached else "main"
    except Exception:  # an unborn branch has no head yet
        return "main"


def render(site: Site, branch: str = "main") -> str:
    """The config text for `site`, with a comment on every choice."""
    q = json.dumps  # TOML basic strings are JSON strings for these values
    found = site.generator or "no known site generator"
    lines = [
        f"# gitpub configuration, written by `git blogpub init` for {found}.",
        *(f"#   {reason}" for reason in site.reasons),
        "# Every key is explained in the README; review this file, then commit it.",
        "",
        "[publish]",
        'remote = "origin"',
        f"branch = {q(branch)}    # the branch the site is built from",
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
        outputs = q(f"{site.fonts_dir}/blog.woff2")
        lines += [
            "",
            "# A CJK font was found in the repository. Uncomment to publish a subset of it",
            "# holding just the characters the articles use (see Fonts in the README).",
            "# [fonts]",
            f"# source = {q(site.font)}",
            f"# outputs = [{outputs}]",
        ]
    return "\n".join(lines) + "\n"


def main(path: Path, *, force: bool) -> None:
    repo = Repo.discover(path)
    target = repo.root / config.CONFIG_NAME
    if target.is_file() and target.read_text("utf-8", "replace").strip() and not force:
        raise InputError(f"{config.CONFIG_NAME} already exists; pass --force to replace it")
    site = detect(repo.root)
    text = render(site, branch=_branch(repo))
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
