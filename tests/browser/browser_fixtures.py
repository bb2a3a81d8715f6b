"""The browser suite's fixtures: the built site served on localhost, and headless Chromium.

Imported by the test modules (a conftest.py here would shadow tests/conftest.py, which the unit
tests import by name).
Each fixture is defined under its own name (``browser_fixture``) and registered by pytest under
the short one (``browser``), so importing it does not shadow the test functions' arguments.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Chromium's path and the flags it needs to start quietly without network, shared with the PDF edition.
from bookkit.pdf import CHROMIUM, CHROMIUM_ARGS, serve


@pytest.fixture(scope="session", name="site_dir")
def site_dir_fixture() -> Path:
    value = os.environ.get("SITE_DIR")
    if not value:
        pytest.fail("SITE_DIR is not set: run the browser check through `make browser` after a build")
    site = Path(value)
    if not (site / "index.html").is_file():
        pytest.fail(f"no built site at {site} (no index.html): build the book first")
    return site


@pytest.fixture(scope="session", name="server")
def server_fixture(site_dir: Path) -> Iterator[str]:
    """The site's base URL. ``SITE_ROOT``, when set, is the published layout holding the site (the
    English site, whose ``zh/`` folder is the Chinese one): it is served whole, and the base URL
    is the site's folder in it, so the links between the two sites lead where they will online."""
    root = Path(os.environ.get("SITE_ROOT") or site_dir).resolve()
    folder = site_dir.resolve().relative_to(root).as_posix()
    with serve(root) as url:
        yield url if folder == "." else f"{url}/{folder}"


# Every test module that imports the fixture gets its own session fixture; they share one
# Chromium (Playwright's sync API runs one instance per thread), closed when the last one ends.
_SHARED: dict[str, Any] = {"users": 0}


@pytest.fixture(scope="session", name="browser")
def browser_fixture() -> Iterator[Any]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} not found: `make browser` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    if not _SHARED["users"]:
        _SHARED["playwright"] = sync_playwright().start()
        _SHARED["chromium"] = _SHARED["playwright"].chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
    _SHARED["users"] += 1
    try:
        yield _SHARED["chromium"]
    finally:
        _SHARED["users"] -= 1
        if not _SHARED["users"]:
            _SHARED["chromium"].close()
            _SHARED["playwright"].stop()
