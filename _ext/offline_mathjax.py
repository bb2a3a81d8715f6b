"""Serve MathJax 3 from the built site instead of a CDN, so every formula renders offline.

The ``django-static-mathjax`` wheel ships MathJax 3's ``es5`` bundle. After an HTML build this
extension copies that bundle to ``_static/mathjax/`` and checks that ``mathjax_path`` points
into it; ``_config.yml`` sets ``mathjax_path: mathjax/tex-mml-chtml.js``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ConfigError, ExtensionError

TARGET = "mathjax"


def _bundle() -> Path:
    import mathjax  # the django-static-mathjax package

    bundle = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (bundle / "tex-mml-chtml.js").is_file():
        raise ExtensionError(f"MathJax 3 bundle not found at {bundle}; is django-static-mathjax installed?")
    return bundle


def _check_path(app: Sphinx, config: object) -> None:
    path = str(app.config.mathjax_path)
    if not path.startswith(f"{TARGET}/"):
        raise ConfigError(
            f"mathjax_path must point into the local copy '{TARGET}/...' (e.g. '{TARGET}/tex-mml-chtml.js'), "
            f"got {path!r}: a CDN address would not render offline"
        )
    if not (_bundle() / path.removeprefix(f"{TARGET}/")).is_file():
        raise ConfigError(f"mathjax_path {path!r} names no file of the MathJax bundle")


def _copy_bundle(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        shutil.copytree(_bundle(), Path(app.outdir) / "_static" / TARGET, dirs_exist_ok=True)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _check_path)
    app.connect("build-finished", _copy_bundle)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
