"""A Sphinx extension for the Chinese site: the glued values of a translated paragraph.

Sphinx translates a paragraph by parsing its Chinese (the catalog's ``msgstr``) as a document of its
own (``sphinx.transforms.i18n.publish_msgstr``). myst-nb's ``{glue:text}`` role looks a key up in the
glue data of the notebook being parsed, and that small document has none: every measured number of a
translated chapter would be missing, each with a warning. :class:`TranslatedPasteTextRole` finds a
key the small document lacks in the chapter it translates, through myst-nb's own reference to another
document's glue (``path::key``, resolved from the glue data the chapter's parse has written), so the
Chinese shows the same value, formatted as the English does.

Loaded by the Chinese site only (:func:`bookkit.i18n.chinese_config`); in the English build every
key is found where myst-nb looks, and nothing changes.
"""

from __future__ import annotations

from docutils import nodes
from myst_nb.ext.glue.roles import PasteTextRole  # type: ignore[import-untyped]
from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data  # type: ignore[import-untyped]
from sphinx.application import Sphinx


def in_document(text: str, document: str) -> str:
    """A ``{glue:text}`` role's content, ``key:format``, as a reference to ``document``'s glue.

    Args:
        text: the role's content, ``key`` or ``key:format``, or already ``path::key[:format]``.
        document: the document's source path relative to the book's root (``notebooks/00_tour.ipynb``).

    Returns:
        ``/notebooks/00_tour.ipynb::key:format`` (a path from the root, as myst-nb resolves it), with
        the default format ``s`` written out (myst-nb would take the path's ``:`` for the format's);
        a content that already names a document unchanged.
    """
    if "::" in text:
        return text
    return f"/{document.lstrip('/')}::{text if ':' in text else text + ':s'}"


class TranslatedPasteTextRole(PasteTextRole):
    """``{glue:text}`` that takes a key missing from a translated paragraph from the chapter itself."""

    text: str  # the role's content, set by myst-nb's RoleBase when the role is called

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        key = self.text.rsplit(":", 1)[0]  # without its format, as PasteTextRole splits it
        env = getattr(self.document.settings, "env", None)
        if env is not None and "::" not in self.text:
            try:
                retrieve_glue_data(self.document, key)
            except RetrievalError:
                self.text = in_document(self.text, env.doc2path(env.docname, base=False))
        return super().run()


def setup(app: Sphinx) -> dict[str, object]:
    app.setup_extension("myst_nb")
    app.add_role_to_domain("glue", "text", TranslatedPasteTextRole(), override=True)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
