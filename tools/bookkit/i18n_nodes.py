"""A Sphinx extension for the Chinese site: translated nodes belong to their page, not to a copy of the build.

Sphinx translates a paragraph by parsing its Chinese as a small document of its own
(``sphinx.transforms.i18n.publish_msgstr``) and moving that document's nodes into the page. The
moved nodes keep a reference to the small document, whose settings hold the whole build
environment; Sphinx clears that reference on the page's own document before saving it, not on the
small ones. So every saved page carried a copy of the environment as it was when the page was read:
a chapter's doctree grew from 0.6 MB to 4 to 7 MB, more for each later chapter, and each ``{numref}``
reloads the doctree of the page it points at. In a profile of the Chinese build, unpickling doctrees
took 395 of its 724 s. :class:`TranslatedNodesOnTheirPage` points every node at the page's document
once all transforms have run.

Loaded by the Chinese site only (:func:`bookkit.i18n.chinese_config`); the English build translates
nothing.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform


class TranslatedNodesOnTheirPage(SphinxTransform):
    """Every node of the page refers to the page's document, so that saving the page saves nothing else."""

    default_priority = 999  # after Sphinx's Locale (20) and every transform that follows it

    def apply(self, **kwargs: Any) -> None:
        for node in self.document.findall():
            if node.document is not self.document:
                node.document = self.document


def setup(app: Sphinx) -> dict[str, object]:
    app.add_transform(TranslatedNodesOnTheirPage)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
