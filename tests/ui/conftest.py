"""The web page's tests share one blog with a job in every state (testing.uiworld)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from testing.uiworld import World, session_world


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from session_world(tmp_path_factory)
