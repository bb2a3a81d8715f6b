"""What the browser suite checks in a page, kept apart from the site so it can be tested on its own.

The constants are JavaScript functions for Playwright's ``evaluate``; :func:`use_interactive_figure`
moves a figure's sliders or hovers its data as a reader would. ``test_page_checks.py`` runs them
on small pages made for the purpose, with and without each problem, so a check that silently
stopped finding anything would fail there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

#: Does the page scroll sideways? ``{viewport, documentWidth, bodyWidth, culprits}``: the widths
#: to compare with the viewport's, and the elements that stick out past its right edge (most
#: specific first: an ancestor is left out when a descendant reaches as far), as
#: ``"tag.class#id (right edge N px): text"``.
OVERFLOW = """() => {
    const viewport = window.innerWidth;
    const documentWidth = document.documentElement.scrollWidth;
    const bodyWidth = document.body?.scrollWidth ?? 0;
    const culprits = [];
    if (document.body && Math.max(documentWidth, bodyWidth) > viewport) {
        // Inside a box that scrolls or clips sideways, an element widens that box, not the page
        // (the box is the culprit if it sticks out itself). A fixed box (the theme's off-canvas
        // sidebars) does not widen the page either.
        const contained = element => {
            for (let box = element.parentElement; box && box !== document.body; box = box.parentElement) {
                const style = getComputedStyle(box);
                if (style.position === 'fixed' || style.overflowX !== 'visible') return true;
            }
            return false;
        };
        const sticking = [...document.body.querySelectorAll('*')]
            // An element's own box, or the text overflowing it (a long word in a narrow paragraph),
            // unless the element scrolls that text itself.
            .map(element => {
                const box = element.getBoundingClientRect();
                const spills = getComputedStyle(element).overflowX === 'visible';
                return {element, right: spills ? Math.max(box.right, box.left + element.scrollWidth) : box.right};
            })
            .filter(({element, right}) => right > viewport + 1 && element.getBoundingClientRect().width > 0
                && getComputedStyle(element).position !== 'fixed' && !contained(element))
            .sort((a, b) => b.right - a.right);
        const specific = sticking.filter(({element, right}) => !sticking.some(
            other => other.element !== element && element.contains(other.element) && other.right >= right - 1));
        for (const {element, right} of specific.slice(0, 8)) {
            const name = element.tagName.toLowerCase()
                + [...element.classList].map(c => '.' + c).join('')
                + (element.id ? '#' + element.id : '');
            const text = (element.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 70);
            culprits.push(`${name} (right edge ${Math.round(right)} px): ${text}`);
        }
    }
    return {viewport, documentWidth, bodyWidth, culprits};
}"""

#: Accessible, captioned figures: a list of problems (empty when every figure is fine).
#: - every image of the page's content needs alt text that says something: not empty, not a
#:   file name or path, not a hash (what a screen reader would otherwise read out), not a copy
#:   of the caption;
#: - every figure, a notebook's image output or an interactive figure (``div.posenc-interactive``,
#:   whose text alternative is its ``aria-label``), sits in a ``<figure>`` whose ``<figcaption>``
#:   carries a number ("Fig. 3.2", "图 3.2" on a page in Chinese) and a caption text.
#: Images in the content outside cell outputs (e.g. a picture in the prose) need alt text but no
#: caption; the book has none today.
FIGURES = """() => {
    const content = document.querySelector('article.bd-article') || document.body;
    const problems = [];
    const looksLikeAFile = text => /\\.(png|jpe?g|svg|gif|webp|pdf)$/i.test(text) || text.includes('_images/')
        || /[0-9a-f]{16,}/i.test(text) || (!/\\s/.test(text) && /[\\/\\\\]/.test(text));
    const captionOf = element => {
        const figure = element.closest('figure');
        const caption = figure && figure.querySelector(':scope > figcaption');
        if (!caption) return null;
        return {
            number: (caption.querySelector('.caption-number')?.textContent || '').trim(),
            text: (caption.querySelector('.caption-text')?.textContent || '').trim(),
        };
    };
    const describe = (element, what) => {
        const caption = captionOf(element);
        return `${what} ${caption?.number || '(no number)'}`;
    };
    const checkText = (element, label, text) => {
        text = (text || '').trim();
        if (!text) problems.push(`${label}: empty alt text`);
        else if (looksLikeAFile(text))
            problems.push(`${label}: alt text is a file name, path or hash: ${text.slice(0, 80)}`);
        else if (captionOf(element)?.text === text) problems.push(`${label}: alt text repeats the caption`);
    };
    // Sphinx numbers figures in the page's language: "Fig. 3.2", or "图 3.2" on the Chinese site.
    const numbered = document.documentElement.lang.startsWith('zh')
        ? /^图\\s*\\d+(\\.\\d+)*/ : /^Fig\\.\\s*\\d+(\\.\\d+)*/;
    const checkCaption = (element, label) => {
        const caption = captionOf(element);
        if (!caption) problems.push(`${label}: not in a <figure> with a <figcaption>`);
        else if (!numbered.test(caption.number))
            problems.push(`${label}: caption has no number ("Fig. N.M")`);
        else if (!caption.text) problems.push(`${label}: empty caption`);
    };
    content.querySelectorAll('img').forEach((img, index) => {
        const file = (img.getAttribute('src') || '').split('/').pop().slice(0, 24);
        const label = describe(img, `image ${index + 1} (${file})`);
        checkText(img, label, img.getAttribute('alt'));
        if (img.closest('.cell_output, figure, .output')) checkCaption(img, label);
    });
    content.querySelectorAll('div.posenc-interactive').forEach((div, index) => {
        const label = describe(div, `interactive figure ${index + 1} (#${div.id})`);
        checkText(div, label, div.getAttribute('aria-label'));
        checkCaption(div, label);
    });
    return problems;
}"""

#: Tables with captions: a list of problems. Every table of the content, a notebook's output
#: (a DataFrame, captioned with pandas' Styler) or a Markdown table (captioned by ``{table}``),
#: needs a non-empty ``<caption>``. Left out, with the reason:
#: - ``table.highlighttable``, ``table.indextable``: layout, not tables (code listings with line
#:   numbers; the generated indexes);
#: - tables inside MathJax's output (``mjx-container``): typeset matrices;
#: - tables in an API entry (autodoc's ``dl.py``): they come from docstrings, which are also read
#:   with ``help()`` in a terminal, where a Sphinx caption would be markup noise; the docstring's
#:   sentence before the table introduces it;
#: - the build report's table (``.execution-report``): myst-nb's ``{nb-exec-table}`` fills it in
#:   after parsing, so ``{table}`` cannot wrap it; the page's opening paragraph describes it.
TABLES = """() => {
    const content = document.querySelector('article.bd-article') || document.body;
    const problems = [];
    content.querySelectorAll('table').forEach((table, index) => {
        if (table.matches('.highlighttable, .indextable')
            || table.closest('mjx-container, dl.py, .execution-report')) return;
        const caption = table.querySelector(':scope > caption');
        const where = table.closest('.cell_output') ? 'cell output' : 'prose';
        const head = (table.querySelector('tr')?.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 60);
        if (!caption || !caption.textContent.trim())
            problems.push(`table ${index + 1} (${where}; ${head}): no <caption>`);
    });
    return problems;
}"""

#: What an interactive figure draws from its data, as a string that changes when the drawing
#: does: the paths and heatmap images of its plot areas (``.overplot``: the traces of every
#: cartesian subplot; ``.polarlayer``), the shapes drawn above them, and the annotations' text.
#: The slider, axes and legend are left out: they change whatever the data do.
DRAWN = """element => [...element.querySelectorAll(
        '.main-svg .overplot path, .main-svg .overplot image, .main-svg .polarlayer path,'
        + ' .main-svg .layer-above path, .main-svg .annotation-text')]
    .map(node => node.getAttribute('d') || node.getAttribute('href') || node.getAttribute('xlink:href')
        || node.textContent || '')
    .join('|')"""

#: Points (client coordinates) where the mouse should find data in a drawn Plotly figure: the
#: middle point of each visible scatter-like trace, the middle of a heatmap's plot area.
#: Uses plotly.js's axis objects (``_offset``, ``c2p``), as Plotly's own hover tests do.
HOVER_POINTS = """element => {
    const layout = element._fullLayout, svg = element.querySelector('.main-svg');
    if (!layout || !svg) return [];
    const box = svg.getBoundingClientRect(), points = [];
    for (const data of element.calcdata || []) {
        const trace = data[0]?.trace;
        if (!trace || trace.visible !== true) continue;
        const xaxis = layout['xaxis' + (trace.xaxis || 'x').slice(1)];
        const yaxis = layout['yaxis' + (trace.yaxis || 'y').slice(1)];
        if (!xaxis || !yaxis) continue;
        if (trace.type === 'heatmap' || trace.type === 'contour') {
            points.push([box.left + xaxis._offset + xaxis._length / 2, box.top + yaxis._offset + yaxis._length / 2]);
            continue;
        }
        const middle = data[Math.floor(data.length / 2)];
        const x = middle && xaxis.c2p(middle.x), y = middle && yaxis.c2p(middle.y);
        if (Number.isFinite(x) && Number.isFinite(y))
            points.push([box.left + xaxis._offset + x, box.top + yaxis._offset + y]);
    }
    return points;
}"""


# ---- using an interactive figure as a reader would ------------------------------------------------


@dataclass
class InteractiveFigureReport:
    """What one interactive figure did when it was moved or hovered."""

    element: str
    drawn: bool
    sliders: int = 0
    problems: list[str] = field(default_factory=list)


def use_interactive_figure(
    page: Any, figure: Any, *, patience: float = 1.0, move: bool = True
) -> InteractiveFigureReport:
    """Move every slider of the figure, or hover its data if it has none; record what changed.

    ``patience`` scales how long a redraw or a hover label is waited for (1: the book's pages);
    with ``move=False`` the figure is only checked to be drawn.
    """
    state = figure.evaluate(
        "element => ({id: element.id, drawn: !!element.querySelector('.main-svg'),"
        " sliders: (element.layout?.sliders || []).length})"
    )
    report = InteractiveFigureReport(f"#{state['id']}", state["drawn"], state["sliders"])
    if not report.drawn:
        report.problems.append("plotly.js drew nothing (no .main-svg)")
    if not report.drawn or not move:
        return report
    figure.scroll_into_view_if_needed()
    try:
        if report.sliders:
            for slider in range(report.sliders):
                problem = move_slider(page, figure, slider, timeout=10000 * patience)
                if problem:
                    report.problems.append(problem)
        else:
            problem = hover(page, figure, timeout=1000 * patience)
            if problem:
                report.problems.append(problem)
    except PlaywrightError as error:
        report.problems.append(f"could not be used: {str(error).splitlines()[0]}")
    return report


def move_slider(page: Any, figure: Any, slider: int, timeout: float = 10000) -> str | None:
    """Click slider ``slider`` at the far end from its current step; a problem, or None."""
    steps, active = figure.evaluate(
        f"element => [element.layout.sliders[{slider}].steps.length, element.layout.sliders[{slider}].active || 0]"
    )
    if steps < 2:
        return f"slider {slider + 1} has {steps} step: nothing to move to"
    before = figure.evaluate(DRAWN)
    rail = figure.locator(".slider-rail-touch-rect").nth(slider)
    rail.scroll_into_view_if_needed()
    box = rail.bounding_box()
    end = 0.02 if active == steps - 1 else 0.98
    page.mouse.click(box["x"] + box["width"] * end, box["y"] + box["height"] / 2)
    try:
        page.wait_for_function(
            f"([element, before]) => element.layout.sliders[{slider}].active !== {active}"
            f" && ({DRAWN})(element) !== before",
            arg=[figure.element_handle(), before],
            timeout=timeout,  # generous by default: a loaded machine redraws slowly, and a timeout is not the finding
        )
    except PlaywrightTimeoutError:
        pass  # the finding, reported below
    now, after = figure.evaluate(f"element => [element.layout.sliders[{slider}].active, ({DRAWN})(element)]")
    if now == active:
        return f"slider {slider + 1} did not move when clicked (still at step {active + 1} of {steps})"
    if after == before:
        return f"moving slider {slider + 1} from step {active + 1} to {now + 1} changed nothing drawn"
    return None


def hover(page: Any, figure: Any, timeout: float = 1000) -> str | None:
    """Put the mouse on the figure's data until a hover label shows; a problem, or None."""
    box = figure.bounding_box()
    points = figure.evaluate(HOVER_POINTS)
    # If plotly.js's axes give no point (another trace type), sweep the middle of the figure.
    points += [[box["x"] + box["width"] * k / 12, box["y"] + box["height"] / 2] for k in range(1, 12)]
    for x, y in points:
        page.mouse.move(x, y)
        try:
            figure.locator(".hovertext").first.wait_for(state="visible", timeout=timeout)
        except PlaywrightTimeoutError:
            continue  # no label at this point: try the next one
        label = figure.locator(".hovertext").first.text_content() or ""
        page.mouse.move(0, 0)
        return None if label.strip() else "the hover label is empty"
    return "no hover label (.hovertext) appeared over the figure's data, and it has no slider"
