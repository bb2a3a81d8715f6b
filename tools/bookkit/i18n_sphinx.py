"""A Sphinx extension for the Chinese edition: the English text that gettext would otherwise miss.

Loaded only by the message extraction (``make i18n``) and the Chinese site (``make book-zh``),
through :func:`bookkit.i18n.gettext_config`; the English build does not load it, so its output
is unchanged. Sphinx extracts a node's text as a message, and translates it on the Chinese site,
only if the node carries its source file; four kinds of English text in the book do not:

- **Table cells.** MyST gives the paragraphs of a Markdown table's cells their Markdown source
  (``rawsource``) but no ``source`` file, so Sphinx extracted only the table's title.
  :class:`TranslatableTableCells` gives each cell written in the document the source of its
  table, unless it has nothing to translate (only math, code or a glued value).
- **Exercise titles.** sphinx-exercise parses ``{exercise}``'s argument into a subtitle node with
  neither source nor Markdown text; :class:`ExerciseDirective` records both, and
  :class:`TranslatedExerciseTitles` passes the translated title on to the solution's title.
- **Figures made by code cells.** A code cell's ``mystnb`` metadata names its figure's caption and
  its image's alt text, but the figure node exists only when the cell has outputs: the extraction
  runs with execution off, so it never has. In the gettext build, :class:`CodeCellMessages`
  reads them from the cell's metadata, with the ``alt=`` text of every interactive figure the
  cell makes (a string literal, or a name bound to one in the cell), and adds them to the
  document as messages. On the Chinese site the executed outputs are there: Sphinx translates the
  caption and the image's alt text itself, and :class:`TranslateInteractiveAlt` the alt text
  inside an interactive figure's HTML.
- **Captions of ``{glue:figure}``.** With execution off there is no glued output, and myst-nb
  drops the whole figure with its caption; in the gettext build :class:`GlueFigureCaption` keeps
  the caption.
"""

from __future__ import annotations

import ast
import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docutils import nodes
from myst_nb.ext.glue.directives import PasteFigureDirective  # type: ignore[import-untyped]
from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data  # type: ignore[import-untyped]
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain
from sphinx_exercise.directive import ExerciseDirective as _ExerciseDirective  # type: ignore[import-untyped]
from sphinx_exercise.directive import ExerciseStartDirective as _ExerciseStartDirective  # type: ignore[import-untyped]
from sphinx_exercise.nodes import exercise_subtitle  # type: ignore[import-untyped]

from .i18n import INLINE_CODE, INLINE_MATH, ROLE

# Before sphinx.transforms.i18n.Locale (priority 20), which translates the nodes this marks.
BEFORE_LOCALE = 15
WORD = re.compile(r"[A-Za-z]{2,}|[\u3400-\u9fff]")
ARIA_LABEL = re.compile(r'aria-label="([^"]*)"')


def has_words(markdown: str) -> bool:
    """Whether a piece of MyST text has anything to translate outside roles, code and math."""
    rest = ROLE.sub(" ", markdown)
    rest = INLINE_CODE.sub(" ", rest)
    return bool(WORD.search(INLINE_MATH.sub(" ", rest)))


def _source_of(node: nodes.Element, document: nodes.document) -> tuple[str, int | None]:
    """The source file and line of the nearest node, from ``node`` up, that has them."""
    current: nodes.Element | None = node
    while current is not None:
        if current.source:
            return current.source, current.line
        current = current.parent
    return document["source"], None


def written_text(path: Path) -> str:
    """The text an author wrote in a document: a Markdown file, or a notebook's Markdown cells."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


def written_cell(cell: str, written: str) -> bool:
    """Whether ``cell`` is a cell of a Markdown table row in ``written`` (outer pipes optional)."""
    return re.search(rf"(^|\|)[ \t]*{re.escape(cell)}[ \t]*(\||$)", written, re.MULTILINE) is not None


class TranslatableTableCells(SphinxTransform):
    """Give the cells of the Markdown tables an author wrote a source, so Sphinx extracts and translates them.

    Only cells written in the document: the cells of the tables a directive generates when the
    book is built (the exercise index, the study plan) change with the chapters, so they stay out
    of the catalogs and English on the Chinese site.
    """

    default_priority = BEFORE_LOCALE

    def apply(self, **kwargs: Any) -> None:
        written = None
        for entry in self.document.findall(nodes.entry):
            for paragraph in entry.findall(nodes.paragraph):
                if not paragraph.rawsource:
                    continue
                if written is None:
                    written = written_text(Path(self.document["source"]))
                if not has_words(paragraph.rawsource) or not written_cell(paragraph.rawsource, written):
                    # Whether or not the parser gave it a source (docutils does in some contexts).
                    paragraph["translatable"] = False
                elif not paragraph.source:
                    paragraph.source, paragraph.line = _source_of(entry, self.document)


class ExerciseDirective(_ExerciseDirective):
    """sphinx-exercise's ``{exercise}``, with the title's Markdown and source kept for translation."""

    def run(self) -> list[nodes.Node]:
        result = super().run()
        if not self.arguments:
            return result
        source, title = self.state.document["source"], self.arguments[0]
        for node in result:
            for subtitle in list(node.findall(exercise_subtitle)):
                # What Sphinx's Locale transform translates (when the document is read).
                subtitle.rawsource, subtitle.source, subtitle.line = title, source, self.lineno
                if self.env.app.builder.name == "gettext":
                    # sphinx-exercise's post-transform dissolves the subtitle into a new title before
                    # the gettext builder extracts, so the extraction gets a copy that stays.
                    copy = nodes.paragraph(title, title)
                    copy.source, copy.line = source, self.lineno
                    node.insert(node.index(subtitle.parent) + 1, nodes.container("", copy, classes=["i18n-messages"]))
        return result


class ExerciseStartDirective(_ExerciseStartDirective, ExerciseDirective):
    """``{exercise-start}``, the gated form, with the same title handling."""


class TranslatedExerciseTitles(SphinxTransform):
    """A solution's title repeats its exercise's title from sphinx-exercise's registry: the translated one.

    The registry keeps a copy of each exercise made when the directive ran, before Sphinx translated
    the document; this gives the copy the translated title.
    """

    default_priority = 21  # after Sphinx's Locale (20)

    def apply(self, **kwargs: Any) -> None:
        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for subtitle in self.document.findall(exercise_subtitle):
            exercise = subtitle.parent.parent
            entry = registry.get(exercise.get("label"))
            if entry is None or not subtitle.get("translated"):
                continue
            for copy in entry["node"].findall(exercise_subtitle):
                copy.children = []
                copy.extend(child.deepcopy() for child in subtitle.children)


def interactive_alts(source: str) -> list[str]:
    """The ``alt=`` texts of the calls in a code cell: string literals, or names bound to one in the cell.

    Args:
        source: the code cell's Python source.

    Returns:
        The alt texts in the order of the calls, stripped as :func:`posenc.interactive.interactive_figure`
        strips them. A cell that does not parse (IPython magics) has none.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    bound = {
        target.id: node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    alts = []
    for call in calls:
        for keyword in call.keywords:
            value = keyword.value
            if keyword.arg != "alt":
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                alts.append(value.value.strip())
            elif isinstance(value, ast.Name) and value.id in bound:
                alts.append(bound[value.id].strip())
    return alts


def cell_messages(metadata: dict, source: str) -> tuple[str | None, str | None, list[str]]:
    """A code cell's figure caption and image alt text (``mystnb`` metadata), and its interactive alts."""
    mystnb = metadata.get("mystnb", {}) if isinstance(metadata, dict) else {}
    caption = mystnb.get("figure", {}).get("caption")
    alt = mystnb.get("image", {}).get("alt")
    return (str(caption) if caption else None, str(alt) if alt else None, interactive_alts(source))


class CodeCellMessages(SphinxTransform):
    """In the gettext build (no outputs): a code cell's captions and alt texts as messages."""

    default_priority = BEFORE_LOCALE

    def apply(self, **kwargs: Any) -> None:
        if self.app.builder.name != "gettext":
            return
        cells = None
        for container in self.document.findall(nodes.container):
            if container.get("nb_element") != "cell_code" or container.next_node(nodes.figure):
                continue
            if cells is None:
                import nbformat

                cells = nbformat.read(Path(self.env.doc2path(self.env.docname)), as_version=4).cells
            cell = cells[container["cell_index"]]
            caption, alt, alts = cell_messages(container.get("cell_metadata", {}), cell.source)
            source, line = self.document["source"], container.line
            added: list[nodes.Element] = []
            if caption:
                # The paragraph myst-nb parses the caption into has the caption as its Markdown text.
                added.append(nodes.caption(caption, caption))
            if alt:
                added.append(nodes.image(uri="", alt=alt))
            added += [nodes.paragraph(text, text) for text in alts]
            for node in added:
                node.source, node.line = source, line
            if added:
                container += nodes.container("", *added, classes=["i18n-messages"])


class GlueFigureCaption(PasteFigureDirective):
    """``{glue:figure}`` that keeps its caption when there is no glued output (the gettext build)."""

    def run(self) -> list[nodes.Node]:
        if self.state.document.settings.env.app.builder.name != "gettext":
            return super().run()
        try:
            retrieve_glue_data(self.document, self.arguments[0])
        except RetrievalError:
            if not self.content:
                return []
            parsed = nodes.Element()
            self.state.nested_parse(self.content, self.content_offset, parsed)
            first = parsed[0]
            if not isinstance(first, nodes.paragraph):
                return []
            caption = nodes.caption(first.rawsource, "", *first.children)
            caption.source, caption.line = first.source, first.line
            return [nodes.figure("", caption)]
        return super().run()


def document_catalog(env: Any, config: Any) -> Callable[[str], str]:
    """The current document's catalog, as Sphinx's Locale transform finds it: English to translation."""
    directories = [str(Path(env.srcdir) / directory) for directory in config.locale_dirs]
    catalog, _ = init_locale(directories, config.language, docname_to_domain(env.docname, config.gettext_compact))
    return catalog.gettext


class TranslateInteractiveAlt(SphinxTransform):
    """On a translated site: the alt text of each interactive figure, inside its HTML, from the catalog."""

    default_priority = 21  # after Sphinx's Locale (20); the figure's HTML exists from parsing on

    def apply(self, **kwargs: Any) -> None:
        if not self.config.language or self.config.language == "en":
            return
        from posenc.interactive import FIGURE_CLASS  # here: posenc imports PyTorch, which extraction never needs

        translate = None
        for raw in list(self.document.findall(nodes.raw)):
            text = raw.astext()
            label = ARIA_LABEL.search(text)
            if "html" not in raw.get("format", "").split() or f'class="{FIGURE_CLASS}"' not in text or not label:
                continue
            translate = translate or document_catalog(self.env, self.config)
            english = html.unescape(label[1])
            chinese = translate(english)
            if chinese == english:
                continue
            # posenc.interactive writes the alt text twice: the attribute, and the script that sets it again
            text = text.replace(f'aria-label="{label[1]}"', f'aria-label="{html.escape(chinese, quote=True)}"')
            text = text.replace(json.dumps(english), json.dumps(chinese))
            raw.replace_self(nodes.raw(text, text, **raw.attributes))


def setup(app: Sphinx) -> dict[str, object]:
    app.setup_extension("myst_nb")
    app.setup_extension("sphinx_exercise")
    app.add_transform(TranslatableTableCells)
    app.add_transform(CodeCellMessages)
    app.add_transform(TranslateInteractiveAlt)
    app.add_transform(TranslatedExerciseTitles)
    app.add_directive("exercise", ExerciseDirective, override=True)
    app.add_directive("exercise-start", ExerciseStartDirective, override=True)
    app.add_directive_to_domain("glue", "figure", GlueFigureCaption, override=True)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
