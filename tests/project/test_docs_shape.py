"""The docs keep their shape: a README short enough to read, a changelog in Keep a Changelog
form, links that lead somewhere, and an architecture page that names the rooms the layer test
enforces, in its order."""

from __future__ import annotations

import re

import test_layers
from testing.paths import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def test_readme_and_architecture_stay_short() -> None:
    assert len((ROOT / "README.md").read_text("utf-8").splitlines()) <= 250
    assert len((ROOT / "docs" / "architecture.md").read_text("utf-8").splitlines()) <= 150


def _sections(changelog: str) -> list[tuple[str, str]]:
    parts = re.split(r"^## ", changelog, flags=re.M)[1:]
    return [(p.splitlines()[0], p) for p in parts]


def test_changelog_has_one_unreleased_and_dated_releases_with_each_heading_once() -> None:
    sections = _sections((ROOT / "CHANGELOG.md").read_text("utf-8"))
    titles = [title for title, _ in sections]
    assert titles[0] == "[Unreleased]" and titles.count("[Unreleased]") == 1
    for title in titles[1:]:
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", title), title
    assert len(set(titles)) == len(titles)
    for title, body in sections:
        headings = re.findall(r"^### (.*)$", body, re.M)
        assert len(headings) == len(set(headings)), f"{title}: {headings}"
        assert set(headings) <= set(KINDS), f"{title}: {headings}"


def test_changelog_entries_are_one_or_two_lines() -> None:
    text = (ROOT / "CHANGELOG.md").read_text("utf-8")
    long = []
    for entry in re.split(r"\n(?=- )", text):
        if entry.startswith("- "):
            lines = entry.split("\n\n", 1)[0].splitlines()
            body = [ln for ln in lines if not ln.startswith(("#", "<!--"))]
            if len(body) > 2:
                long.append(body[0])
    assert long == []


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_relative_link_and_anchor_in_the_docs_resolves() -> None:
    broken = []
    for page in [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS]:
        text = page.read_text("utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and dest.suffix == ".md":
                heads = re.findall(r"^#+ (.*)$", dest.read_text("utf-8"), re.M)
                if anchor not in {_slug(h) for h in heads}:
                    broken.append(f"{page.name}: {target}")
    assert broken == []


def _room(cell: str) -> str:
    name = cell.strip("`/")
    return name[: -len(".py")] if name.endswith(".py") else name


def test_architecture_lists_every_room_lowest_layer_first() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    rows = re.findall(r"^\| *\d+ *\| *(`[^`]+`) *\|", text, re.M)
    rooms = [_room(cell) for cell in rows]
    present = {
        test_layers.room_of(test_layers.module_name(p)) for p in test_layers.PACKAGE.rglob("*.py")
    }
    assert set(rooms) == present
    levels = [test_layers.LEVEL[room] for room in rooms]
    assert levels == sorted(levels)
