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
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["InteractiveFigure", "interactive_figure", "plotly_js_path", "slider_figure"]

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
    if isinstance(active, bool) or not isinstance(active, int):
        raise TypeError(f"active must be an int, got {type(active).__name__}")
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
            f'    window.Plotly.newPlot("{element}", spec.data, spec.layout,\n'
            "      {responsive: true, displaylogo: false});\n"
            f'    document.getElementById("{element}").setAttribute("aria-label", {label});\n'
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
        TypeError: if ``figure`` is not a Plotly figure or ``height`` not an int.
        ValueError: if ``alt`` is empty or ``height`` out of range.
    """
    go_module = _plotly_graph_objects()
    if not isinstance(figure, go_module.Figure):
        raise TypeError(f"figure must be a plotly.graph_objects.Figure, got {type(figure).__name__}")
    if not isinstance(alt, str) or not alt.strip():
        raise ValueError("alt must be a sentence saying what the figure shows, got an empty text")
    if isinstance(height, bool) or not isinstance(height, int):
        raise TypeError(f"height must be an int (CSS pixels), got {type(height).__name__}")
    if not 200 <= height <= 1200:
        raise ValueError(f"height must be in [200, 1200] CSS pixels, got {height}")
    return InteractiveFigure(figure, alt=alt.strip(), height=height)
