"""What the Chinese site adds to the checks of ``test_site.py`` (``make browser-zh`` runs both on it).

- Its Chinese is drawn in Debian's Noto CJK fonts: Chromium reports, through the DevTools protocol,
  the platform font that drew each glyph of a node's text (``CSS.getPlatformFontsForNode``), so a
  page whose characters fell back to empty boxes, or to no font at all, fails.
- It is in Chinese: ``<html lang="zh-CN">``, the theme's own words, and the prose of every page (the
  API reference aside, which stays English) mostly Chinese characters.
- Its search finds Chinese words: the index holds the words jieba cut the text into (旋转, 位置, 编码,
  and the glossary's terms whole, 位置编码, 外推), not single characters or whole sentences, and the
  search page, queried as a reader does, lists pages for them.

Run with ``SITE_DIR`` naming the Chinese site (and ``SITE_ROOT`` the published layout holding it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from browser_fixtures import browser_fixture, server_fixture, site_dir_fixture  # noqa: F401 (pytest fixtures)
from test_site import _toc_documents

pytestmark = pytest.mark.browser

CJK = re.compile(r"[\u3400-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")
# A page of prose, a chapter of derivations and figures, the glossary.
FONT_PAGES = ("book/intro", "notebooks/05_rope_derivation", "book/glossary")
NOTO_CJK = re.compile(r"Noto (Sans|Serif) CJK")
# The prose of a page: what a translator translated (not code, outputs, formulas or the sidebars).
PROSE_JS = """() => {
    const nodes = [...document.querySelectorAll(
        'article.bd-article :is(p, li, h1, h2, h3, dt, dd, figcaption, caption, th, td)')]
        .filter(n => !n.closest('pre, code, .cell_input, .cell_output, mjx-container, .highlight, dl.py'));
    return nodes.map(n => n.textContent).join('\\n');
}"""
# Pages whose text is mostly made when the book is built, English on both sites (the README says so):
# the API reference (posenc's docstrings), the exercise index and the build report (tables the book's
# own directives make), the references (the bibliography's entries). Their titles are translated.
GENERATED_PAGES = ("book/api", "book/exercises", "book/build_report", "book/references")
# Words the book uses throughout, as jieba cuts them (with the glossary's terms kept whole).
SEARCH_WORDS = ("旋转", "位置", "编码", "位置编码", "外推", "注意力")


def _fonts_of(page: Any, selector: str) -> tuple[str, dict[str, int]]:
    """The text of the first node matching ``selector`` and the platform fonts that drew it (glyphs each)."""
    session = page.context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    root = session.send("DOM.getDocument")["root"]["nodeId"]
    node = session.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    assert node, f"nothing matches {selector!r}"
    fonts = session.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    session.detach()
    text = page.evaluate(
        "(selector) => [...document.querySelector(selector).childNodes]"
        ".filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join('')",
        selector,
    )
    return text, {font["familyName"]: font["glyphCount"] for font in fonts}


@pytest.mark.parametrize("document", FONT_PAGES)
def test_chinese_text_is_drawn_in_a_noto_cjk_face(browser: Any, server: str, document: str) -> None:
    """Every Chinese character of the page's title and first Chinese paragraph is drawn by a Noto CJK
    face that Chromium found on the system (Debian's fonts-noto-cjk), not by a fallback without glyphs."""
    page = browser.new_page()
    try:
        page.goto(f"{server}/{document}.html", wait_until="load")
        marked = page.evaluate(
            """() => {
                const has = n => /[\\u3400-\\u9fff]/.test([...n.childNodes]
                    .filter(c => c.nodeType === Node.TEXT_NODE).map(c => c.textContent).join(''));
                const title = document.querySelector('article.bd-article h1');
                const paragraph = [...document.querySelectorAll('article.bd-article p')].find(has);
                if (title) title.setAttribute('data-font-check', 'title');
                if (paragraph) paragraph.setAttribute('data-font-check', 'paragraph');
                return [!!title && has(title), !!paragraph];
            }"""
        )
        assert all(marked), f"{document}: no Chinese title or paragraph to check ({marked})"
        for part in ("title", "paragraph"):
            text, fonts = _fonts_of(page, f"[data-font-check={part}]")
            characters = len(CJK.findall(text))
            cjk_glyphs = sum(count for family, count in fonts.items() if NOTO_CJK.search(family))
            assert cjk_glyphs >= characters > 0, (
                f"{document}: the {part}'s {characters} Chinese characters were drawn with {fonts}, "
                "not a Noto CJK face (is fonts-noto-cjk installed?)"
            )
    finally:
        page.close()


def test_the_site_speaks_chinese(browser: Any, server: str, site_dir: Path) -> None:
    """The page's language, the theme's words and every page's prose are Chinese (API reference aside)."""
    page = browser.new_page()
    try:
        page.goto(f"{server}/book/intro.html", wait_until="load")
        assert page.evaluate("() => document.documentElement.lang") == "zh-CN"
        search = page.evaluate("() => document.querySelector('.search-button__default-text')?.textContent ?? ''")
        assert CJK.search(search), f"the theme's search button reads {search!r}"
        shares, titles = {}, {}
        for document in _toc_documents():
            page.goto(f"{server}/{document}.html", wait_until="domcontentloaded")
            titles[document] = page.evaluate("() => document.querySelector('article.bd-article h1')?.textContent")
            if document not in GENERATED_PAGES:
                prose = page.evaluate(PROSE_JS)
                cjk, latin = len(CJK.findall(prose)), len(LATIN.findall(prose))
                shares[document] = round(cjk / max(cjk + latin, 1), 2)
    finally:
        page.close()
    mostly_english = {document: share for document, share in shares.items() if share < 0.5}
    assert not mostly_english, f"pages whose prose is not mostly Chinese (share of CJK letters): {mostly_english}"
    english_titles = {doc: title for doc, title in titles.items() if doc != "book/api" and not CJK.search(title or "")}
    assert not english_titles, f"pages whose title is not Chinese: {english_titles}"


def _search_index(site_dir: Path) -> dict[str, Any]:
    text = (site_dir / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def test_the_search_index_holds_chinese_words(site_dir: Path) -> None:
    """jieba's words, not characters or sentences: the book's words are there, and found in several
    pages; Chinese terms are short (a sentence left uncut would be a term of dozens of characters)."""
    index = _search_index(site_dir)
    # Sphinx keeps the words of titles apart from those of the text; a search looks in both.
    terms: dict[str, set[int]] = {}
    for kind in ("terms", "titleterms"):
        for term, pages in index[kind].items():
            if CJK.search(term):
                terms.setdefault(term, set()).update(pages if isinstance(pages, list) else [pages])
    missing = [word for word in SEARCH_WORDS if word not in terms]
    assert not missing, f"Chinese words missing from the search index: {missing} (is jieba installed?)"
    scarce = {word: len(terms[word]) for word in SEARCH_WORDS if len(terms[word]) < 5}
    assert not scarce, f"words the book uses throughout, indexed for few pages: {scarce}"
    assert len(terms) >= 1000, f"only {len(terms)} Chinese terms in the index"
    single = [term for term in terms if len(term) == 1]
    longest = sorted(terms, key=len)[-5:]
    assert not single, f"single characters indexed as words: {single[:20]}"
    assert all(len(term) <= 12 for term in longest), f"sentences indexed as words: {longest}"


@pytest.mark.parametrize("word", ["旋转", "外推"])
def test_the_search_page_finds_pages_for_a_chinese_word(browser: Any, server: str, word: str) -> None:
    """The site's own search page, queried as a reader does, lists pages for a Chinese word."""
    page = browser.new_page()
    try:
        page.goto(f"{server}/search.html?q={word}", wait_until="load")
        page.wait_for_function(
            "() => document.querySelector('#search-results .search-summary')?.textContent.trim()", timeout=20000
        )
        found = page.locator("#search-results ul.search > li").count()
        summary = page.locator("#search-results .search-summary").text_content()
    finally:
        page.close()
    assert found >= 3, f"searching {word!r} listed {found} pages: {summary!r}"
