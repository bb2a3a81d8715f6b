"""Drop repeated inline scripts from every page.

With Sphinx 7.4, extensions that add an inline script while the builder starts (sphinx-thebe's
``const THEBE_JS_URL = ...``, sphinx-togglebutton's selector) get it written into each page
twice; a repeated ``const`` declaration is a script error in the browser. This keeps the first
copy of each script.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _drop_repeats(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
    seen = set()
    unique = []
    for script in context.get("script_files", []):
        # The two copies differ only in how "no file" is spelled (None or "").
        key = (getattr(script, "filename", script) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    # In place: a handler that runs later (interactive_figures) adds its page script to this list.
    context["script_files"][:] = unique


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("html-page-context", _drop_repeats)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
