"""The browser suite's checks, tried on small pages made to have (or not have) each problem.

A check that stopped finding anything would let the whole site pass; these pages prove each one
still finds what it is for, and leaves alone what is fine. They need Chromium but no built site.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest
from browser_fixtures import browser_fixture  # noqa: F401 (pytest fixtures)
from page_checks import FIGURES, OVERFLOW, TABLES, use_interactive_figure

from posenc.interactive import interactive_figure, plotly_js_path, slider_figure

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = "http://fixture.test"
# What Sphinx's basic.css does to inline code: each word on one line.
SPHINX_INLINE_CODE = "span.pre { white-space: nowrap; }"
LONG_NAME = "torch.nn.functional.scaled_dot_product_attention_with_a_name_longer_than_a_phone"


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    """``open_page(body, width=1280, css="")``: a page served from a fixture origin, offline."""
    contexts = []

    def open_(body: str, *, width: int = 1280, css: str = "") -> Any:
        context = browser.new_context(viewport={"width": width, "height": 800})
        contexts.append(context)
        html = "<!DOCTYPE html><html><head><meta name='viewport' content='width=device-width'>"
        if "Plotly.newPlot" in body:
            html += f"<script src='{FIXTURE}/plotly.js'></script>"
        html += f"<style>body {{margin: 8px}} {css}</style></head>"
        html += f"<body><article class='bd-article'>{body}</article></body></html>"

        def route(route: Any) -> None:
            if route.request.url == f"{FIXTURE}/plotly.js":
                route.fulfill(path=str(plotly_js_path()), content_type="text/javascript")
            elif route.request.url == f"{FIXTURE}/index.html":
                route.fulfill(body=html, content_type="text/html")
            else:
                route.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.goto(f"{FIXTURE}/index.html")
        return page

    yield open_
    for context in contexts:
        context.close()


# ---- pages wider than the screen ---------------------------------------------------------------


def test_overflow_names_the_inline_code_that_widens_a_phone_page(open_page: Any) -> None:
    page = open_page(f"<p>See <code class='literal'><span class='pre'>{LONG_NAME}</span></code>.</p>", width=390)
    found = page.evaluate(OVERFLOW)
    assert found["documentWidth"] > found["viewport"] == 390
    # The paragraph sticks out furthest (its full stop follows the code), then the code itself.
    assert any(culprit.startswith("span.pre") and LONG_NAME[:60] in culprit for culprit in found["culprits"]), found


def test_overflow_finds_a_long_word_overflowing_its_paragraph(open_page: Any) -> None:
    page = open_page(f"<p style='overflow-wrap: normal'>{LONG_NAME * 2}</p>", width=390)
    found = page.evaluate(OVERFLOW)
    assert found["documentWidth"] > 390 and found["culprits"][0].startswith("p "), found["culprits"]


def test_overflow_accepts_wide_content_that_scrolls_in_its_own_box(open_page: Any) -> None:
    body = f"<pre style='overflow-x: auto'>{LONG_NAME * 3}</pre>"
    body += (
        f"<div style='overflow-x: auto'><table><tr><td style='white-space: nowrap'>{LONG_NAME}</td></tr></table></div>"
    )
    found = open_page(body, width=390).evaluate(OVERFLOW)
    assert found["documentWidth"] <= 390 and found["bodyWidth"] <= 390 and not found["culprits"], found


@pytest.mark.parametrize(
    "body",
    [
        # Chapter prose: inline code with a long dotted name.
        f"<p>See <code class='docutils literal notranslate'><span class='pre'>{LONG_NAME}()</span></code>.</p>",
        # The API reference: a field list (a CSS grid) with a long type name in it.
        "<dl class='field-list'><dt>Parameters:</dt><dd><p><strong>model</strong> "
        f"(<em>{LONG_NAME}</em>) – the model.</p>"
        f"<p><code class='xref py py-func docutils literal notranslate'><span class='pre'>{LONG_NAME}</span></code></p>"
        "</dd></dl>",
        # The index of theorems and proofs: a page path in a three-column layout table.
        "<table class='indextable modindextable'><tr><td></td><td><a href='#'><code class='xref'>abs-lemma</code></a> "
        "<em>(notebooks/02_one_hot_and_learned_absolute_position_embeddings)</em></td><td><em>proposition</em></td>"
        "</tr></table>",
    ],
    ids=["inline-code", "api-field-list", "proof-index"],
)
def test_book_css_keeps_long_code_on_a_phone_screen(open_page: Any, body: str) -> None:
    """Without the book's CSS these pages scroll sideways at 390 px; with it they do not."""
    css = SPHINX_INLINE_CODE + " dl.field-list {display: grid; grid-template-columns: unset}"
    assert open_page(body, width=390, css=css).evaluate(OVERFLOW)["culprits"], "the fixture should overflow"
    book = (ROOT / "_static" / "book.css").read_text(encoding="utf-8")
    found = open_page(body, width=390, css=css + book).evaluate(OVERFLOW)
    assert max(found["documentWidth"], found["bodyWidth"]) <= 390, found["culprits"]


# ---- figures and tables ------------------------------------------------------------------------


def _figure(
    image: str,
    caption: str = "<span class='caption-number'>Fig. 3.2 </span><span class='caption-text'>The table.</span>",
) -> str:
    return f"<div class='cell_output'><figure>{image}<figcaption><p>{caption}</p></figcaption></figure></div>"


def test_figures_check_accepts_a_numbered_captioned_described_figure(open_page: Any) -> None:
    body = _figure("<img src='a.png' alt='Heatmap of the sinusoidal table: fast columns on the left.'>")
    body += _figure(
        "<div class='posenc-interactive' id='f' aria-label='Cosine curves; the slider sets the base.'></div>"
    )
    body += "<p><img src='b.png' alt='A diagram of two tokens.'></p>"  # prose image: alt text, no caption needed
    assert open_page(body).evaluate(FIGURES) == []


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (_figure("<img src='a.png'>"), "empty alt text"),
        (_figure("<img src='a.png' alt='  '>"), "empty alt text"),
        (_figure("<img src='x.png' alt='../_images/52e91170638aefef.png'>"), "file name, path or hash"),
        (_figure("<img src='x.png' alt='sinusoidal_table.png'>"), "file name, path or hash"),
        (_figure("<img src='x.png' alt='52e91170638aefef94513a900a12a7a5'>"), "file name, path or hash"),
        (_figure("<img src='x.png' alt='The table.'>"), "repeats the caption"),
        ("<div class='cell_output'><img src='a.png' alt='A curve rising.'></div>", "not in a <figure>"),
        (_figure("<img src='a.png' alt='A curve rising.'>", "<span class='caption-text'>A curve.</span>"), "no number"),
        (
            _figure("<img src='a.png' alt='A curve rising.'>", "<span class='caption-number'>Fig. 1.1 </span>"),
            "empty caption",
        ),
        ("<div class='posenc-interactive' id='f' aria-label='Curves.'></div>", "not in a <figure>"),
        (_figure("<div class='posenc-interactive' id='f'></div>"), "empty alt text"),
    ],
)
def test_figures_check_finds_each_problem(open_page: Any, body: str, problem: str) -> None:
    problems = open_page(body).evaluate(FIGURES)
    assert len(problems) == 1 and problem in problems[0], problems


# 图 as a character reference: the fixture page is served without a charset.
@pytest.mark.parametrize(
    ("lang", "number", "numbered"),
    [("zh-CN", "&#22270; 3.2 ", True), ("zh-CN", "Fig. 3.2 ", False), ("en", "&#22270; 3.2 ", False),
     ("en", "Fig. 3.2 ", True)],
)
def test_figures_are_numbered_in_the_page_language(open_page: Any, lang: str, number: str, numbered: bool) -> None:
    """Sphinx numbers a figure in the page's language: "图 3.2" on the Chinese site, "Fig. 3.2" on the English."""
    caption = f"<span class='caption-number'>{number}</span><span class='caption-text'>A curve.</span>"
    page = open_page(_figure("<img src='a.png' alt='A curve rising.'>", caption))
    page.evaluate("(lang) => { document.documentElement.lang = lang; }", lang)
    problems = page.evaluate(FIGURES)
    if numbered:
        assert problems == []
    else:
        assert len(problems) == 1 and "no number" in problems[0], problems


def test_tables_check(open_page: Any) -> None:
    row = "<tr><th>scheme</th><th>accuracy</th></tr><tr><td>RoPE</td><td>1.0</td></tr>"
    body = f"<table><caption>Accuracy by scheme.</caption>{row}</table>"  # fine
    body += f"<div class='cell_output'><table class='dataframe'>{row}</table></div>"  # a DataFrame without caption
    body += f"<table class='table'><caption> </caption>{row}</table>"  # an empty caption
    body += f"<table class='highlighttable'>{row}</table>"  # layout: a code listing
    body += f"<dl class='py class'><dd><table>{row}</table></dd></dl>"  # a docstring's table
    problems = open_page(body).evaluate(TABLES)
    assert [problem.split(" (")[1].split(";")[0] for problem in problems] == ["cell output", "prose"], problems


# ---- interactive figures -----------------------------------------------------------------------


def _interactive(figure: go.Figure) -> str:
    return interactive_figure(figure, alt="A test figure.", height=300).to_html()


def _use_every_figure(page: Any, drawn: int, patience: float = 1.0) -> list[list[str]]:
    """The problems found with each figure of the page, once ``drawn`` of them are drawn."""
    page.wait_for_function(f"() => document.querySelectorAll('.posenc-interactive .main-svg').length >= {drawn}")
    figures = page.locator("div.posenc-interactive")
    return [use_interactive_figure(page, figures.nth(index), patience=patience).problems
            for index in range(figures.count())]


def test_moving_a_slider_and_hovering_work_on_figures_that_respond(open_page: Any) -> None:
    x = np.arange(30)
    curves = slider_figure([(f"{b}", [go.Scatter(x=x, y=np.cos(x / b))]) for b in (1, 5, 25)], slider_label="b = ")
    last = slider_figure([(f"{b}", [go.Scatter(x=x, y=np.cos(x / b))]) for b in (1, 5)], slider_label="b = ", active=1)
    heatmaps = slider_figure([(f"{k}", [go.Heatmap(z=np.outer(x, x) % k)]) for k in (3, 7)], slider_label="k = ")
    heatmap = go.Figure(go.Heatmap(z=np.outer(x[:8], x[:5]), hovertemplate="row %{y}: %{z}<extra></extra>"))
    line = go.Figure(go.Scatter(x=x, y=x**2, mode="lines"))
    page = open_page("".join(_interactive(figure) for figure in (curves, last, heatmaps, heatmap, line)))
    assert _use_every_figure(page, drawn=5) == [[], [], [], [], []]


def test_figures_that_do_not_respond_are_reported(open_page: Any) -> None:
    x = np.arange(30)
    # Every step shows the same curve: the slider moves, the drawing does not change.
    frozen = slider_figure([(f"{b}", [go.Scatter(x=x, y=np.cos(x))]) for b in (1, 5)], slider_label="b = ")
    # No slider and hovering switched off.
    mute = go.Figure(go.Scatter(x=x, y=x**2), layout={"hovermode": False})
    page = open_page(_interactive(frozen) + _interactive(mute) + "<div class='posenc-interactive' id='empty'></div>")
    # Figures that never respond make every wait run out: shorter waits keep this test quick.
    problems = _use_every_figure(page, drawn=2, patience=0.2)
    assert "changed nothing drawn" in problems[0][0], problems
    assert "no hover label" in problems[1][0], problems
    assert "drew nothing" in problems[2][0], problems
