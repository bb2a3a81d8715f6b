"""Interactive figures that work on the static website: computed in Python, drawn by plotly.js.

Everything an interactive figure shows is computed when the notebook runs: a slider does not call
back into Python, it switches between curves that were all computed in advance
(:func:`slider_figure`). The figure travels as Plotly JSON inside the page, so the built site
needs no kernel, and every number in it comes from the build like every other figure of the book.

Where plotly.js comes from:

- on the book's website, from the build itself: ``_ext/interactive_figures.py`` copies the
  bundle of the installed ``plotly`` package to ``_static/`` and loads it, once, on the pages
  that hold an interactive figure (the page makes no network request);
- in a live notebook (JupyterLab, Colab, VS Code), which has no bundled copy, the figure's
  script loads the same plotly.js version from Plotly's CDN.

``plotly`` is an optional dependency of posenc (``pip install posenc[interactive]``), imported
only when a figure is made.

Shape legend:
    - ``S``: slider steps (positions of the slider)
    - ``S1``, ``S2``: the steps of the two sliders of :func:`grid_slider_figure`
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._validation import check_int

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "InteractiveFigure",
    "glue_figure",
    "grid_slider_figure",
    "interactive_figure",
    "plotly_js_path",
    "slider_figure",
]

#: The key in a figure's ``layout.meta`` under which :func:`grid_slider_figure` records, for
#: every trace, the pair of slider steps it belongs to; the figure's script reads it.
GRID_META_KEY = "posenc_grid"

#: Set (to ``1``) by the book's build (the Makefile's ``BUILD_ENV``): :func:`glue_figure` then
#: glues figures for their captioned ``{glue:figure}`` instead of displaying them in place.
BOOK_BUILD_VARIABLE = "POSENC_BOOK_BUILD"

#: The CSS class of every interactive figure's ``<div>``: the website's build looks for it to
#: decide which pages load plotly.js.
FIGURE_CLASS = "posenc-interactive"


def _plotly() -> Any:
    try:
        import plotly
    except ImportError as error:  # pragma: no cover - the book's environment has plotly
        raise ImportError(
            "interactive figures need the 'plotly' package: pip install plotly (or posenc[interactive])"
        ) from error
    return plotly


def plotly_js_path() -> Path:
    """The plotly.js bundle shipped with the installed ``plotly`` package.

    Returns:
        The path of ``plotly.min.js``; the book's build serves this file.

    Raises:
        FileNotFoundError: if the installed ``plotly`` package has no bundle.
    """
    path = Path(_plotly().__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise FileNotFoundError(f"plotly.js bundle not found at {path}; reinstall the 'plotly' package")
    return path


def plotly_js_version() -> str:
    """The version of the plotly.js bundle of the installed ``plotly`` package (e.g. ``'3.1.1'``)."""
    from plotly.offline import get_plotlyjs_version

    return str(get_plotlyjs_version())


def slider_figure(
    steps: Sequence[tuple[str, Sequence[go.BaseTraceType]]],
    *,
    slider_label: str,
    active: int = 0,
    layout: dict[str, Any] | None = None,
) -> go.Figure:
    """A figure whose slider shows one precomputed group of traces at a time.

    Every group is computed in Python beforehand; moving the slider only changes which group
    is visible, so the figure needs no kernel.

    Args:
        steps: ``S`` pairs ``(label, traces)``: the slider's label at that position and the
            Plotly traces shown there. Every step must have at least one trace.
        slider_label: what the slider sets, shown before the current step's label
            (e.g. ``"base b = "``).
        active: the index of the step shown first, in ``[0, S)``.
        layout: Plotly layout properties (titles, axis ranges, ...). Fix the axis ranges when the
            curves of different steps differ in scale, so the axes stay put as the slider moves.

    Returns:
        A ``plotly.graph_objects.Figure`` with all traces and one slider of ``S`` steps.

    Raises:
        ValueError: if ``steps`` is empty, a step has no traces or a label is not a string, or
            ``active`` is not a step index.
        TypeError: if ``active`` is not an int.
    """
    go_module = _plotly_graph_objects()
    if not steps:
        raise ValueError("steps must hold at least one (label, traces) pair, got none")
    active = check_int("active", active)
    if not 0 <= active < len(steps):
        raise ValueError(f"active must index a step, in [0, {len(steps)}), got {active}")
    figure = go_module.Figure(layout=layout)
    owners: list[int] = []
    for index, step in enumerate(steps):
        if not (isinstance(step, tuple) and len(step) == 2):
            raise ValueError(f"step {index} must be a (label, traces) pair, got {step!r:.60}")
        label, traces = step
        if not isinstance(label, str):
            raise ValueError(f"the label of step {index} must be a str, got {type(label).__name__}")
        if len(traces) == 0:
            raise ValueError(f"step {index} ({label!r}) has no traces")
        for trace in traces:
            trace.visible = index == active
            figure.add_trace(trace)
            owners.append(index)
    slider_steps = [
        {
            "label": label,
            "method": "restyle",
            "args": [{"visible": [owner == index for owner in owners]}],
        }
        for index, (label, _) in enumerate(steps)
    ]
    figure.update_layout(
        sliders=[{"active": active, "currentvalue": {"prefix": slider_label}, "steps": slider_steps, "pad": {"t": 40}}]
    )
    return figure


def grid_slider_figure(
    grid: Mapping[tuple[int, int], Sequence[go.BaseTraceType]],
    *,
    first: tuple[str, Sequence[str]],
    second: tuple[str, Sequence[str]],
    active: tuple[int, int] = (0, 0),
    layout: dict[str, Any] | None = None,
) -> go.Figure:
    """A figure with two sliders that together choose one precomputed group of traces.

    Every combination is computed in Python beforehand (``S1 * S2`` groups). Plotly's sliders
    each set one thing, so the steps themselves do nothing (``method: "skip"``); the figure's
    script (:meth:`InteractiveFigure.to_html`) shows the group of the two sliders' current steps
    whenever either moves. The pairing is stored in ``layout.meta`` under :data:`GRID_META_KEY`.

    Args:
        grid: the traces of every combination: ``grid[(i, j)]`` is shown when the first slider
            is at step ``i`` and the second at step ``j``. Every pair in ``[0, S1) x [0, S2)``
            must be present, with at least one trace.
        first: ``(prefix, labels)`` of the first slider: the text before the current label
            (e.g. ``"base b = "``) and the ``S1`` step labels.
        second: ``(prefix, labels)`` of the second slider, ``S2`` labels.
        active: the steps ``(i, j)`` shown first.
        layout: Plotly layout properties; fix the axis ranges so the axes stay put.

    Returns:
        A ``plotly.graph_objects.Figure`` with all traces and two sliders.

    Raises:
        ValueError: if a slider has no labels, ``grid`` misses a combination, has one outside
            the sliders or one without traces, or ``active`` is not a combination.
        TypeError: if ``active`` is not a pair of ints.
    """
    go_module = _plotly_graph_objects()
    sliders = []
    for name, spec in (("first", first), ("second", second)):
        if not (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str)):
            raise ValueError(f"{name} must be a (prefix, labels) pair with a str prefix, got {spec!r:.60}")
        if len(spec[1]) == 0 or not all(isinstance(label, str) for label in spec[1]):
            raise ValueError(f"{name} must have at least one step label, all str, got {list(spec[1])!r:.60}")
        sliders.append(spec)
    shape = (len(first[1]), len(second[1]))
    if not (isinstance(active, tuple) and len(active) == 2 and all(_is_int(index) for index in active)):
        raise TypeError(f"active must be a pair of ints (i, j), got {active!r}")
    if not (0 <= active[0] < shape[0] and 0 <= active[1] < shape[1]):
        raise ValueError(f"active must be a combination in [0, {shape[0]}) x [0, {shape[1]}), got {active}")
    expected = {(i, j) for i in range(shape[0]) for j in range(shape[1])}
    if set(grid) != expected:
        missing, extra = sorted(expected - set(grid)), sorted(set(grid) - expected)
        raise ValueError(
            f"grid must have one entry per combination of the sliders' steps, {shape[0]} x {shape[1]}: "
            f"missing {missing[:5]}, outside the sliders {extra[:5]}"
        )
    figure = go_module.Figure(layout=layout)
    owners: list[list[int]] = []
    for key in sorted(grid):
        if len(grid[key]) == 0:
            raise ValueError(f"grid[{key}] has no traces")
        for trace in grid[key]:
            trace.visible = key == active
            figure.add_trace(trace)
            owners.append(list(key))
    figure.update_layout(
        meta={GRID_META_KEY: owners},
        sliders=[
            {
                "active": active[index],
                "currentvalue": {"prefix": prefix},
                "steps": [{"label": label, "method": "skip", "args": [None]} for label in labels],
                "pad": {"t": 40 + 70 * index},
            }
            for index, (prefix, labels) in enumerate(sliders)
        ],
    )
    return figure


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plotly_graph_objects() -> Any:
    _plotly()
    import plotly.graph_objects as go_module

    return go_module


class InteractiveFigure:
    """A Plotly figure as a notebook output that draws itself wherever the notebook is shown.

    Use :func:`interactive_figure` to make one. Displayed in a notebook (or glued with
    ``myst_nb.glue`` and shown by ``{glue:figure}`` with a caption), it offers:

    - ``text/html``: a ``<div class="posenc-interactive">`` and a script that draws the
      figure with the page's plotly.js, loading it from Plotly's CDN only if the page has none;
    - ``text/plain``: a one-line description (the alt text).

    (No ``application/vnd.plotly.v1+json`` part: the book's build has no renderer for it and
    would warn, and the HTML part draws the figure in JupyterLab too.)

    Attributes:
        figure: the ``plotly.graph_objects.Figure``.
        alt: what the figure shows, in words, for screen readers and text outputs.
        height: the height of the figure on the page, in CSS pixels.
    """

    def __init__(self, figure: go.Figure, *, alt: str, height: int = 420) -> None:
        self.figure = figure
        self.alt = alt
        self.height = height

    def to_html(self) -> str:
        """The figure as an HTML fragment (a ``<div>`` and the script that draws it)."""
        spec = json.loads(self.figure.to_json())
        payload = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        # A stable id: the same figure gets the same id in every build.
        element = "posenc-figure-" + hashlib.sha256(payload.encode()).hexdigest()[:12]
        # "</" cannot appear inside a <script> element's text.
        payload = payload.replace("</", "<\\/")
        cdn = f"https://cdn.plot.ly/plotly-{plotly_js_version()}.min.js"
        label = json.dumps(self.alt)
        return (
            f'<div class="{FIGURE_CLASS}" id="{element}" role="img" aria-label={_attribute(self.alt)} '
            f'style="width:100%;height:{self.height}px;"></div>\n'
            "<script>\n(function () {\n"
            f"  var spec = {payload};\n"
            "  function draw() {\n"
            f'    var node = document.getElementById("{element}");\n'
            "    window.Plotly.newPlot(node, spec.data, spec.layout,\n"
            "      {responsive: true, displaylogo: false});\n"
            f"    var grid = (spec.layout.meta || {{}})[{json.dumps(GRID_META_KEY)}];\n"
            "    // Two sliders (grid_slider_figure): show the traces of both current steps.\n"
            "    if (grid) node.on('plotly_sliderchange', function () {\n"
            "      var at = node._fullLayout.sliders.map(function (s) { return s.active; });\n"
            "      window.Plotly.restyle(node, {visible: grid.map(function (g) {\n"
            "        return g[0] === at[0] && g[1] === at[1]; })});\n"
            "    });\n"
            "    node.setAttribute(\"aria-label\", " + label + ");\n"
            "  }\n"
            "  if (window.Plotly) { draw(); return; }\n"
            "  // Outside the book's website (e.g. Colab): no bundled plotly.js, load the same version.\n"
            '  var script = document.createElement("script");\n'
            f'  script.src = "{cdn}";\n'
            "  script.onload = draw;\n"
            "  document.head.appendChild(script);\n"
            "})();\n</script>"
        )

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, object]:
        return {
            "text/html": self.to_html(),
            "text/plain": f"Interactive figure: {self.alt}",
        }

    def __repr__(self) -> str:
        return f"InteractiveFigure({self.alt!r})"


def _attribute(text: str) -> str:
    from html import escape

    return '"' + escape(text, quote=True) + '"'


def interactive_figure(figure: go.Figure, *, alt: str, height: int = 420) -> InteractiveFigure:
    """Wrap a Plotly figure as an output that works in the book's pages and in notebooks.

    Args:
        figure: a ``plotly.graph_objects.Figure``, e.g. from :func:`slider_figure`.
        alt: what the figure shows, in a sentence: read by screen readers, shown as text where
            the figure cannot be drawn. Must not be empty.
        height: the figure's height on the page in CSS pixels, in ``[200, 1200]``; its width
            follows the page column (phones included).

    Returns:
        An :class:`InteractiveFigure`; display it, or glue it for a captioned ``{glue:figure}``.

    Raises:
        TypeError: if ``figure`` is not a Plotly figure, ``alt`` not a string or ``height`` not
            an int.
        ValueError: if ``alt`` is empty or ``height`` out of range.
    """
    go_module = _plotly_graph_objects()
    if not isinstance(figure, go_module.Figure):
        raise TypeError(f"figure must be a plotly.graph_objects.Figure, got {type(figure).__name__}")
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a sentence (a str) saying what the figure shows, got {type(alt).__name__}")
    if not alt.strip():
        raise ValueError("alt must be a sentence saying what the figure shows, got an empty text")
    height = check_int("height", height)
    if not 200 <= height <= 1200:
        raise ValueError(f"height must be in [200, 1200] CSS pixels, got {height}")
    return InteractiveFigure(figure, alt=alt.strip(), height=height)


def glue_figure(name: str, figure: InteractiveFigure) -> None:
    """Show an interactive figure: captioned in the book, in place in a live notebook.

    In the book's build (:data:`BOOK_BUILD_VARIABLE` set), the figure is glued with myst-nb
    under ``name`` and shown where a Markdown cell's ``{glue:figure}`` directive gives it its
    number and caption. Anywhere else (Jupyter, Colab, where MyST directives are not rendered
    and myst-nb may be missing) it is displayed as the cell's output.

    Args:
        name: the glue key, also used as the figure's label (e.g. ``"fig-sin-dot-live"``):
            letters, digits, ``-`` and ``_``.
        figure: the figure, from :func:`interactive_figure`.

    Raises:
        TypeError: if ``figure`` is not an :class:`InteractiveFigure`.
        ValueError: if ``name`` is not a valid key.
    """
    if not isinstance(figure, InteractiveFigure):
        raise TypeError(f"figure must be an InteractiveFigure (see interactive_figure), got {type(figure).__name__}")
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"name must be a non-empty key of letters, digits, '-' and '_', got {name!r}")
    if os.environ.get(BOOK_BUILD_VARIABLE):
        from myst_nb import glue

        glue(name, figure, display=False)
    else:
        from IPython.display import display

        display(figure)
