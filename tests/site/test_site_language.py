"""The blog's language, read where each generator keeps it, in the spellings real configs use."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitpub.site.language import blog_language

CASES = [
    ("hugo.toml", 'languageCode = "zh-CN"\ntitle = "x"\n', "zh-CN", "hugo.toml languageCode"),
    ("config.toml", 'LanguageCode = "ja-jp"\n', "ja-jp", "config.toml languageCode"),
    (
        "config/_default/hugo.toml",
        'defaultContentLanguage = "zh"\n[languages.zh]\nlanguageCode = "zh-Hant"\n',
        "zh-Hant",
        "config/_default/hugo.toml languages.zh.languageCode",
    ),
    ("hugo.yaml", "defaultContentLanguage: zh-cn\n", "zh-cn", "hugo.yaml defaultContentLanguage"),
    ("_config.yml", "title: x\nlanguage:\n  - zh-CN\n  - en\n", "zh-CN", "_config.yml language"),
    ("_config.yml", "title: x\nlang: ko-KR\n", "ko-KR", "_config.yml lang"),
    (".vitepress/config.mts", "export default {\n  lang: 'zh-CN',\n}\n", "zh-CN", "lang"),
    (
        "docusaurus.config.js",
        "module.exports = { i18n: { defaultLocale: 'zh-Hans', locales: ['zh-Hans'] } };\n",
        "zh-Hans",
        "i18n.defaultLocale",
    ),
    (
        "astro.config.mjs",
        'export default defineConfig({ i18n: { defaultLocale: "ja", locales: ["ja"] } });\n',
        "ja",
        "i18n.defaultLocale",
    ),
]


@pytest.mark.parametrize(("name", "text", "language", "where"), CASES)
def test_each_generator_says_its_language(
    tmp_path: Path, name: str, text: str, language: str, where: str
) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    found = blog_language(tmp_path)
    assert found is not None and found[0] == language
    assert found[1].endswith(where)


def test_no_language_said_and_an_unreadable_config_say_nothing(tmp_path: Path) -> None:
    assert blog_language(tmp_path) is None
    (tmp_path / "hugo.toml").write_text("this is = = not toml\n")
    (tmp_path / "_config.yml").write_text("title: [unclosed\n")
    assert blog_language(tmp_path) is None
