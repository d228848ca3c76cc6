"""The README's promise to a newcomer: two set-up commands, and CI runs the second."""

from __future__ import annotations

import re

from testing.paths import ROOT


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2, commands
    install_demo, install_test = commands
    assert "\n" not in install_demo and "\n" not in install_test
    assert install_demo.startswith("pip install .") and "git blogpub demo" in install_demo
    assert "pip install -e '.[test]'" in install_test and "pytest" in install_test


def test_ci_runs_the_readme_test_command() -> None:
    _, install_test = _setup_commands()
    ci = (ROOT / ".ci" / "run").read_text()
    install, _, test = install_test.partition(" && ")
    assert install.replace("pip", "python -m pip", 1).split("-e")[1] in ci
    assert test in ci
