"""The language a blog is written in, as its generator's configuration declares it.

Hugo: `languageCode`, else the `languageCode` of `defaultContentLanguage`'s entry under
`languages`, else `defaultContentLanguage` itself (keys in any case, as Hugo reads them).
Hexo and Jekyll: `language` or `lang` in `_config.yml` (Hexo's may be a list: the first).
Zola: `default_language`. VitePress and VuePress: `lang` in `.vitepress/config.*` or
`.vuepress/config.*`; Docusaurus and Astro: `i18n.defaultLocale` in their config (read from
the JavaScript source by its shape, never run). Used to pick the CJK face drawn for it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the floor reads TOML with tomli
    import tomli as tomllib

_HUGO = tuple(
    f"{folder}{base}.{ext}"
    for folder in ("", "config/_default/")
    for base in ("hugo", "config")
    for ext in ("toml", "yaml", "yml", "json")
)
_JS = ("js", "mjs", "ts", "mts", "cjs")
_SCRIPTED = (
    *(f".vitepress/config.{e}" for e in _JS),
    *(f"docs/.vitepress/config.{e}" for e in _JS),
    *(f".vuepress/config.{e}" for e in _JS),
    *(f"docs/.vuepress/config.{e}" for e in _JS),
    *(f"docusaurus.config.{e}" for e in _JS),
    *(f"astro.config.{e}" for e in _JS),
)
_DEFAULT_LOCALE = re.compile(r"""\bdefaultLocale\s*:\s*['"]([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*)""")
_LANG = re.compile(r"""\blang\s*:\s*['"]([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*)['"]""")


def blog_language(root: Path) -> tuple[str, str] | None:
    """(language tag, the file and key it was read from), or None when none says."""
    for probe in (_hugo, _yaml_config, _zola, _scripted):
        found = probe(root)
        if found is not None:
            return found
    return None


def _load(path: Path) -> Any:
    text = path.read_text("utf-8", "replace")
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".json":
        return json.loads(text)
    import yaml  # only a YAML-configured blog pays for it

    return yaml.safe_load(text)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = _load(path)
    except Exception:  # a config gitpub cannot read (any parser's error) says nothing
        return None
    return data if isinstance(data, dict) else None


def _lower(data: dict[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in data.items()}


def _hugo(root: Path) -> tuple[str, str] | None:
    for name in _HUGO:
        data = _read(root / name) if (root / name).is_file() else None
        if data is None:
            continue
        top = _lower(data)
        if isinstance(top.get("languagecode"), str):
            return top["languagecode"], f"{name} languageCode"
        default = top.get("defaultcontentlanguage")
        languages = top.get("languages")
        if isinstance(default, str) and isinstance(languages, dict):
            entry = _lower(languages).get(default.lower())
            code = _lower(entry).get("languagecode") if isinstance(entry, dict) else None
            if isinstance(code, str):
                return code, f"{name} languages.{default}.languageCode"
        if isinstance(default, str):
            return default, f"{name} defaultContentLanguage"
    return None


def _yaml_config(root: Path) -> tuple[str, str] | None:
    path = root / "_config.yml"
    data = _read(path) if path.is_file() else None
    if data is None:
        return None
    for key in ("language", "lang", "locale"):
        value = data.get(key)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str) and value.strip() and value != "default":
            return value.strip(), f"_config.yml {key}"
    return None


def _zola(root: Path) -> tuple[str, str] | None:
    path = root / "config.toml"
    data = _read(path) if path.is_file() else None
    if data is not None and isinstance(data.get("default_language"), str):
        return data["default_language"], "config.toml default_language"
    return None


def _scripted(root: Path) -> tuple[str, str] | None:
    for name in _SCRIPTED:
        path = root / name
        if not path.is_file():
            continue
        text = path.read_text("utf-8", "replace")
        for pattern, key in ((_DEFAULT_LOCALE, "i18n.defaultLocale"), (_LANG, "lang")):
            found = pattern.search(text)
            if found:
                return found[1], f"{name} {key}"
    return None
