"""Real-browser checks of the built website, offline.

The site is served on 127.0.0.1 and opened in Debian's headless Chromium through Playwright.
Every request that leaves the local server is blocked and recorded, so the pages are checked
exactly as a reader without network would see them: every formula typeset by the bundled
MathJax and as wide as the page column at most, every figure loaded, no script errors, every
internal link resolving, solutions hidden until clicked.

Run through ``make browser`` (after a build), which sets ``SITE_DIR`` to the built HTML and
``SCREENSHOT_DIR`` to where a full-page screenshot of every page is saved for review.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

# Chromium's path and the flags it needs to start quietly without network, shared with the PDF edition.
from bookkit.pdf import CHROMIUM, CHROMIUM_ARGS, serve

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def _toc_documents() -> list[str]:
    """Every document of ``_toc.yml``, in reading order, as a path without suffix."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    documents = [toc["root"]]
    for part in toc.get("parts", []):
        documents += [chapter["file"] for chapter in part["chapters"]]
    return documents


def _notebook_documents() -> list[str]:
    return [doc for doc in _toc_documents() if (ROOT / f"{doc}.ipynb").is_file()]


@pytest.fixture(scope="session")
def site_dir() -> Path:
    value = os.environ.get("SITE_DIR")
    if not value:
        pytest.fail("SITE_DIR is not set: run the browser check through `make browser` after a build")
    site = Path(value)
    if not (site / "index.html").is_file():
        pytest.fail(f"no built site at {site} (no index.html): build the book first")
    return site


@pytest.fixture(scope="session")
def server(site_dir: Path) -> Iterator[str]:
    with serve(site_dir) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} not found: `make browser` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class PageVisit:
    """A page opened offline, with what happened while loading it."""

    page: object
    blocked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def visit(browser: object, server: str) -> Iterator[object]:
    contexts = []

    def open_page(document: str) -> PageVisit:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        result = PageVisit(page)

        def route(route: object) -> None:
            if route.request.url.startswith(server):
                route.continue_()
            else:
                result.blocked.append(route.request.url)
                route.abort()

        context.route("**/*", route)
        page.on("pageerror", lambda error: result.errors.append(str(error)))
        page.on("console", lambda message: message.type == "error" and result.errors.append(message.text))
        page.on(
            "requestfailed",
            lambda request: request.url.startswith(server) and result.failed.append(request.url),
        )
        page.on(
            "response",
            lambda response: response.status >= 400 and result.failed.append(f"{response.status} {response.url}"),
        )
        page.goto(f"{server}/{document}.html", wait_until="load")
        # Sphinx loads MathJax only on pages with math. It typesets asynchronously;
        # startup.promise resolves when the page is done.
        if page.locator("script[src*='mathjax']").count():
            page.wait_for_function("() => window.MathJax?.startup?.promise", timeout=20000)
            page.evaluate("() => MathJax.startup.promise")
        return result

    yield open_page
    for context in contexts:
        context.close()


def _screenshot(page: object, document: str) -> None:
    folder = os.environ.get("SCREENSHOT_DIR")
    if folder:
        path = Path(folder) / f"{document.replace('/', '__')}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=True)


@pytest.mark.parametrize("document", _toc_documents())
def test_page_renders_offline(visit: object, document: str) -> None:
    """Every page loads with no network, no failed request, no script error, all math typeset."""
    result = visit(document)
    page = result.page
    math = page.evaluate(
        """() => {
            const nodes = [...document.querySelectorAll('.math')];
            return {
                total: nodes.length,
                typeset: nodes.filter(n => n.querySelector('mjx-container')).length,
                errors: [...document.querySelectorAll('mjx-merror')].map(n => n.textContent),
                raw: nodes.filter(n => !n.querySelector('mjx-container')).map(n => n.textContent.slice(0, 80)),
                // Display equations wider than their column (the text, a proof or an exercise box).
                wide: [...document.querySelectorAll('div.math')].filter(d => {
                    const m = d.querySelector('mjx-container > mjx-math');
                    return m && m.getBoundingClientRect().width > d.getBoundingClientRect().width + 2;
                }).map(d => d.textContent.slice(0, 80)),
            };
        }"""
    )
    _screenshot(page, document)
    assert not result.blocked, f"{document} tried to reach the network: {result.blocked}"
    assert not result.failed, f"{document} has failed requests: {result.failed}"
    assert not result.errors, f"{document} has script errors: {result.errors}"
    assert math["typeset"] == math["total"], f"{document}: formulas not typeset by MathJax: {math['raw']}"
    assert not math["errors"], f"{document}: MathJax errors: {math['errors']}"
    assert not math["wide"], f"{document}: display equations wider than the page column: {math['wide']}"


def test_mathjax_is_served_locally(visit: object, server: str) -> None:
    """The MathJax script is the bundled copy, and it really typeset the formulas on a math page."""
    page = visit("book/notation").page
    sources = page.evaluate("() => [...document.scripts].map(s => s.src).filter(s => s.includes('mathjax'))")
    assert sources and all(source.startswith(server) for source in sources), sources
    assert page.evaluate("() => document.querySelectorAll('mjx-container').length") > 0


@pytest.mark.parametrize("document", _notebook_documents())
def test_chapter_figures_load(visit: object, document: str) -> None:
    """Every figure of an executed chapter is present and decoded by the browser."""
    page = visit(document).page
    images = page.evaluate(
        """() => [...document.querySelectorAll('.cell_output img')].map(
            img => ({src: img.getAttribute('src'), width: img.naturalWidth}))"""
    )
    assert images, f"{document} has no figures in its cell outputs"
    broken = [image["src"] for image in images if image["width"] == 0]
    assert not broken, f"{document}: figures that did not load: {broken}"


@pytest.mark.parametrize("document", _notebook_documents())
def test_solutions_hidden_until_clicked(visit: object, document: str) -> None:
    """Exercises are visible; their solutions are collapsed, and open when their toggle is clicked."""
    page = visit(document).page
    assert page.locator(".exercise").count() >= 4, f"{document} has fewer than four exercises"
    solutions = page.locator(".solution")
    assert solutions.count() >= 4, f"{document} has fewer than four solutions"
    for index in range(solutions.count()):
        solution = solutions.nth(index)
        body = solution.locator(".admonition-title ~ *").first
        assert not body.is_visible(), f"solution {index} of {document} is shown before it is clicked"
        # The title holds a link back to the exercise; the toggle is the chevron button.
        solution.locator("button.toggle-button").click()
        body.wait_for(state="visible", timeout=5000)


@pytest.mark.parametrize("document", _notebook_documents())
def test_launch_buttons_point_at_the_repository(visit: object, document: str) -> None:
    """Colab and Binder buttons of every chapter open this notebook of the configured repository."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repository = config["repository"]["url"].removeprefix("https://github.com/")
    page = visit(document).page
    links = page.evaluate("() => [...document.querySelectorAll('a')].map(a => a.href)")
    notebook = f"{document}.ipynb"
    colab = f"https://colab.research.google.com/github/{repository}/blob/main/{notebook}"
    assert colab in links, f"no Colab link {colab} in {json.dumps([link for link in links if 'colab' in link])}"
    assert any(link.startswith(f"https://mybinder.org/v2/gh/{repository}/main") for link in links), (
        f"no Binder link for {repository} on {document}"
    )


def test_internal_links_resolve(browser: object, server: str) -> None:
    """Every link from one page of the book to another (and to an anchor in it) leads somewhere."""
    from urllib.parse import urldefrag

    context = browser.new_context()
    page = context.new_page()
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server) else route.abort())
    targets: dict[str, set[str]] = {}
    for document in _toc_documents():
        page.goto(f"{server}/{document}.html", wait_until="domcontentloaded")
        for href in page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)"):
            url, fragment = urldefrag(href)
            if url.startswith(server):
                targets.setdefault(url, set()).add(fragment)
    broken = []
    for url, fragments in sorted(targets.items()):
        response = context.request.get(url)
        if not response.ok:
            broken.append(f"{response.status} {url}")
            continue
        body = response.text()
        broken += [
            f"no anchor #{fragment} in {url}" for fragment in fragments if fragment and f'id="{fragment}"' not in body
        ]
    context.close()
    assert targets, "no internal links found"
    assert not broken, "broken internal links:\n" + "\n".join(broken)
