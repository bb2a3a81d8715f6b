"""posenc.interactive: slider figures switch between precomputed groups, and embed without a kernel."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from posenc.interactive import (
    FIGURE_CLASS,
    GRID_META_KEY,
    grid_slider_figure,
    interactive_figure,
    plotly_js_path,
    plotly_js_version,
    slider_figure,
)


def _steps(count: int = 3, traces_per_step: int = 2) -> list[tuple[str, list[go.Scatter]]]:
    x = np.arange(10)
    return [
        (f"b={base}", [go.Scatter(x=x, y=np.cos(x / base + phase)) for phase in range(traces_per_step)])
        for base in range(1, count + 1)
    ]


@pytest.mark.parametrize("active", [0, 1, 2])
def test_each_slider_step_shows_exactly_its_own_traces(active: int) -> None:
    steps = _steps()
    figure = slider_figure(steps, slider_label="b: ", active=active)
    slider = figure.layout.sliders[0]
    assert slider.active == active and [step.label for step in slider.steps] == ["b=1", "b=2", "b=3"]
    assert [trace.visible for trace in figure.data] == [index // 2 == active for index in range(6)]
    for index, step in enumerate(slider.steps):
        visible = step.args[0]["visible"]
        assert visible == [owner // 2 == index for owner in range(6)]
        # The step's visible traces carry exactly the data computed for that step.
        shown = [trace.y.tolist() for trace, on in zip(figure.data, visible, strict=True) if on]
        assert shown == [trace.y.tolist() for trace in steps[index][1]]


def test_html_embeds_the_figure_as_json_and_draws_it_with_the_pages_plotly() -> None:
    figure = slider_figure(_steps(), slider_label="b: ")
    html = interactive_figure(figure, alt="Cosines for three bases.", height=300).to_html()
    element = re.search(rf'<div class="{FIGURE_CLASS}" id="(posenc-figure-[0-9a-f]{{12}})"', html)
    assert element, html[:200]
    assert f'getElementById("{element.group(1)}")' in html and "window.Plotly.newPlot(node" in html
    assert 'aria-label="Cosines for three bases."' in html and "height:300px" in html
    spec = json.loads(re.search(r"var spec = (.*);\n", html).group(1))
    assert spec["data"] == json.loads(figure.to_json())["data"]
    # The CDN is only a fallback for notebooks: the script tries the page's plotly.js first.
    assert html.index("if (window.Plotly)") < html.index("cdn.plot.ly")


def test_the_element_id_is_stable_and_depends_on_the_figure() -> None:
    first = interactive_figure(slider_figure(_steps(3), slider_label="b"), alt="a").to_html()
    again = interactive_figure(slider_figure(_steps(3), slider_label="b"), alt="a").to_html()
    other = interactive_figure(slider_figure(_steps(4), slider_label="b"), alt="a").to_html()
    ids = [re.search(r'id="(posenc-figure-\w+)"', html).group(1) for html in (first, again, other)]
    assert ids[0] == ids[1] != ids[2]


def test_text_that_would_close_the_script_is_escaped() -> None:
    figure = go.Figure(go.Scatter(y=[1, 2], name="</script><b>x"), layout={"title": {"text": "</script>"}})
    html = interactive_figure(figure, alt='a "quoted" <alt>').to_html()
    assert html.count("</script>") == 1 and 'aria-label="a &quot;quoted&quot; &lt;alt&gt;"' in html
    spec = json.loads(re.search(r"var spec = (.*);\n", html).group(1).replace("<\\/", "</"))
    assert spec["data"][0]["name"] == "</script><b>x"


def test_the_mime_bundle_is_html_with_a_text_fallback() -> None:
    bundle = interactive_figure(go.Figure(), alt="Nothing yet.")._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"} and bundle["text/plain"] == "Interactive figure: Nothing yet."


def test_the_served_bundle_is_the_installed_plotly_js() -> None:
    path = plotly_js_path()
    head = path.read_bytes()[:400].decode("utf-8", "replace")
    assert path.stat().st_size > 1_000_000 and f"v{plotly_js_version()}" in head


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"steps": []}, ValueError, "at least one"),
        ({"steps": [("a", [])]}, ValueError, "no traces"),
        ({"steps": [(1, [go.Scatter()])]}, ValueError, "must be a str"),
        ({"steps": ["a"]}, ValueError, "pair"),
        ({"steps": [("a", [go.Scatter()])], "active": 1}, ValueError, r"\[0, 1\)"),
        ({"steps": [("a", [go.Scatter()])], "active": 0.0}, TypeError, "int"),
    ],
)
def test_slider_figure_rejects_bad_input(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        slider_figure(slider_label="b", **kwargs)


@pytest.mark.parametrize(
    ("figure", "kwargs", "error", "message"),
    [
        ({"data": []}, {"alt": "x"}, TypeError, "plotly.graph_objects.Figure"),
        (None, {"alt": "  "}, ValueError, "alt"),
        (None, {"alt": 123}, TypeError, "alt must be a sentence .a str."),
        (None, {"alt": "x", "height": 100}, ValueError, r"\[200, 1200\]"),
        (None, {"alt": "x", "height": 300.0}, TypeError, "int"),
    ],
)
def test_interactive_figure_rejects_bad_input(figure: object, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        interactive_figure(go.Figure() if figure is None else figure, **kwargs)


def _grid(rows: int = 3, columns: int = 2) -> dict[tuple[int, int], list[go.Scatter]]:
    x = np.arange(10)
    return {(i, j): [go.Scatter(x=x, y=(j + 1) * np.cos(x / (i + 1)))] for i in range(rows) for j in range(columns)}


def test_grid_slider_figure_records_the_combination_of_every_trace() -> None:
    grid = _grid()
    figure = grid_slider_figure(
        grid, first=("b = ", ["1", "2", "3"]), second=("a = ", ["1", "2"]), active=(1, 1)
    )
    owners = figure.layout.meta[GRID_META_KEY]
    assert [tuple(owner) for owner in owners] == sorted(grid)
    # Only the active combination is visible at first, and it is the data computed for it.
    shown = [trace.y.tolist() for trace in figure.data if trace.visible]
    assert shown == [grid[(1, 1)][0].y.tolist()]
    first, second = figure.layout.sliders
    assert (first.active, second.active) == (1, 1)
    assert [step.label for step in first.steps] == ["1", "2", "3"] and len(second.steps) == 2
    # The steps themselves change nothing; the page's script shows the pair of current steps.
    assert {step.method for step in (*first.steps, *second.steps)} == {"skip"}
    html = interactive_figure(figure, alt="grid").to_html()
    assert "plotly_sliderchange" in html and f'"{GRID_META_KEY}"' in html


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"grid": {(0, 0): [go.Scatter()]}}, ValueError, r"missing \[\(0, 1\)"),
        ({"grid": {**_grid(1, 2), (5, 0): [go.Scatter()]}}, ValueError, r"outside the sliders \[\(5, 0\)\]"),
        ({"grid": {(0, 0): [], (0, 1): [go.Scatter()]}}, ValueError, "no traces"),
        ({"grid": _grid(1, 2), "first": ("b", [])}, ValueError, "at least one step"),
        ({"grid": _grid(1, 2), "first": (1, ["x"])}, ValueError, "str prefix"),
        ({"grid": _grid(1, 2), "active": (0, 2)}, ValueError, "combination"),
        ({"grid": _grid(1, 2), "active": (0.0, 0)}, TypeError, "pair of ints"),
    ],
)
def test_grid_slider_figure_rejects_bad_input(kwargs: dict, error: type, message: str) -> None:
    arguments = {"first": ("b", ["1"]), "second": ("a", ["1", "2"]), **kwargs}
    with pytest.raises(error, match=message):
        grid_slider_figure(**arguments)


def test_glue_figure_glues_in_the_book_build_and_displays_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display
    import myst_nb

    from posenc.interactive import BOOK_BUILD_VARIABLE, glue_figure

    calls: list[tuple] = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, obj, display=True: calls.append(("glue", name, obj, display)))
    monkeypatch.setattr(IPython.display, "display", lambda obj: calls.append(("display", obj)))
    figure = interactive_figure(go.Figure(), alt="Nothing yet.")
    monkeypatch.delenv(BOOK_BUILD_VARIABLE, raising=False)
    glue_figure("fig-live", figure)
    monkeypatch.setenv(BOOK_BUILD_VARIABLE, "1")
    glue_figure("fig-live", figure)
    assert calls == [("display", figure), ("glue", "fig-live", figure, False)]


@pytest.mark.parametrize(
    ("name", "figure", "error"),
    [("fig live", None, ValueError), ("", None, ValueError), ("fig", go.Figure(), TypeError)],
)
def test_glue_figure_rejects_bad_input(name: str, figure: object, error: type) -> None:
    from posenc.interactive import glue_figure

    with pytest.raises(error):
        glue_figure(name, interactive_figure(go.Figure(), alt="x") if figure is None else figure)
