"""Serve plotly.js from the built site, once, to the pages that hold an interactive figure.

The chapters' interactive figures (``posenc.interactive``) are Plotly JSON drawn by plotly.js
in the page. This extension copies the bundle of the installed ``plotly`` package to
``_static/plotly/`` after an HTML build and adds a ``<script>`` for it, in the page's head, to
every page whose body contains an interactive figure. The browser fetches the file once and
caches it; pages without interactive figures do not load it, and no page reaches a CDN.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx

from posenc.interactive import FIGURE_CLASS, plotly_js_path, plotly_js_version

TARGET = "plotly"


def _script_name() -> str:
    # The version in the name: a new plotly.js is never mixed up with a cached old one.
    return f"{TARGET}/plotly-{plotly_js_version()}.min.js"


def _add_script(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
    if f'class="{FIGURE_CLASS}"' in context.get("body", ""):
        # Called during html-page-context, add_js_file adds the script to this page only. It must
        # load before the figures' inline scripts run, so it is neither deferred nor async.
        app.add_js_file(_script_name(), priority=200)


def _copy_bundle(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / _script_name()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(plotly_js_path(), target)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("html-page-context", _add_script)
    app.connect("build-finished", _copy_bundle)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
