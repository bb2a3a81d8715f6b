"""posenc.interactive: slider figures switch between precomputed groups, and embed without a kernel."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from posenc.interactive import FIGURE_CLASS, interactive_figure, plotly_js_path, plotly_js_version, slider_figure


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
    assert f'window.Plotly.newPlot("{element.group(1)}"' in html
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
        (None, {"alt": "x", "height": 100}, ValueError, r"\[200, 1200\]"),
        (None, {"alt": "x", "height": 300.0}, TypeError, "int"),
    ],
)
def test_interactive_figure_rejects_bad_input(figure: object, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        interactive_figure(go.Figure() if figure is None else figure, **kwargs)
