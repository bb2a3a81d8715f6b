"""The Chinese notebooks: every chapter with its Markdown from the catalogs and its code unchanged.

    python -m bookkit.i18n_notebooks _build/zh [--locale locale] [--strict]   # make zh-notebooks

A reader who runs the book in Colab or Jupyter gets a notebook, not the site, so the Chinese edition
needs notebooks too. They are made from the same catalogs as the Chinese site (no second copy of
the sources): each Markdown cell of ``notebooks/<chapter>.ipynb`` is parsed as the book parses it
(MyST, with the book's extensions), and every block that Sphinx's gettext builder extracts as a
message (a paragraph, a heading, a list item, a directive's title and body) is replaced by its
translation, looked up by the same text (the block's Markdown with its line breaks as spaces). What
the parser gives no message for stays as it is: formulas, directive options, labels, code. Code
cells are copied unchanged, outputs and all (the committed notebooks have none); a figure caption
in a code cell's ``mystnb`` metadata is translated like a paragraph.

Written under the output folder: ``notebooks/`` (every chapter, to open in Colab or Jupyter) and
``student/notebooks/`` (the student edition's handouts: the same with every solution removed, as
:mod:`bookkit.student_edition` removes them from the English).

A message without a current translation (missing, empty or fuzzy) keeps its English; ``--strict``
fails instead, naming the chapter and the message (``make i18n-check`` guarantees there is none for
the translated chapters).
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from bookkit.exercise_catalog import chapter_docnames, strip_solutions
from bookkit.i18n import INLINE_CODE, INLINE_MATH, LOCALE_DIR, ROLE, ROOT, load

# The book's MyST extensions (_config.yml, parse.myst_enable_extensions): they decide which lines
# are a formula, a directive or a paragraph.
MYST_EXTENSIONS = {"amsmath", "colon_fence", "deflist", "dollarmath"}
_PARSER = create_md_parser(MdParserConfig(enable_extensions=MYST_EXTENSIONS), RendererHTML)


@dataclass
class Translation:
    """A chapter's notebook in Chinese, and the messages of its Markdown that kept their English."""

    notebook: nbformat.NotebookNode
    untranslated: list[str] = field(default_factory=list)


def message_key(markdown: str) -> str:
    """The text by which Sphinx's gettext builder names a block: its line breaks as spaces, stripped."""
    return markdown.replace("\n", " ").strip()


def has_words(text: str) -> bool:
    """Whether a text has words outside its roles, formulas and code (a cell of only those is no message)."""
    bare = INLINE_CODE.sub("", INLINE_MATH.sub("", ROLE.sub("", text)))
    return any(character.isalpha() for character in bare)


def translations(catalog_path: Path) -> dict[str, str]:
    """A catalog's current translations, by English message (fuzzy and empty ones left out).

    Raises:
        ValueError: if the catalog does not exist.
    """
    if not catalog_path.is_file():
        raise ValueError(f"no catalog at {catalog_path}: run make i18n first")
    return {
        str(message.id): str(message.string)
        for message in load(catalog_path)
        if message.id and message.string and not message.fuzzy
    }


# Directives whose argument is a title (a message); the others' is a path, a label or a glue key.
TITLED_DIRECTIVES = ("exercise", "admonition")
# sphinx-proof shows a proof's first paragraph after "Proof." and a statement's title in
# parentheses, and the catalogs carry them so; the notebook has neither.
PROOF_LEAD = ("Proof. ", ("证明：", "证明:"))


def _lookup(key: str, catalog: dict[str, str], untranslated: list[str]) -> str | None:
    if key in catalog:
        return catalog[key]
    untranslated.append(key)
    return None


def _directive_title(info: str, catalog: dict[str, str], untranslated: list[str]) -> str:
    """A fence's info string (``{exercise} The title``) with its title translated."""
    name, _, title = info.partition(" ")
    directive = name.strip("{}")
    titled = directive in TITLED_DIRECTIVES or (directive.startswith("prf:") and directive != "prf:proof")
    if not titled or not title.strip():
        return info
    key = message_key(title)
    if key not in catalog and f"({key})" in catalog:
        return f"{name} {catalog[f'({key})'].strip('()（）')}"
    found = _lookup(key, catalog, untranslated)
    return info if found is None else f"{name} {found}"


def _split_options(body: str) -> tuple[list[str], str]:
    """A directive body's option lines (``:label: x`` or a ``---`` YAML block) and the rest."""
    lines = body.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1) if "---" in lines[1:] else 0
        return lines[: end + 1], "\n".join(lines[end + 1 :])
    count = 0
    while count < len(lines) and lines[count].startswith(":") and lines[count].count(":") >= 2:
        count += 1
    return lines[:count], "\n".join(lines[count:])


def _translate_directive(token: Token, lines: list[str], catalog: dict[str, str], missing: list[str]) -> list[str]:
    """A directive fence's lines with its title and body translated (options kept)."""
    if token.map is None:
        raise ValueError(f"the directive {token.info!r} has no source lines")
    start, end = token.map
    options, body = _split_options(token.content.rstrip("\n"))
    proof = token.info.strip() == "{prf:proof}"
    translated = translate_markdown(body, catalog, missing, proof=proof).split("\n")
    opening = lines[start].replace(token.info, _directive_title(token.info, catalog, missing), 1)
    indent = opening[: len(opening) - len(opening.lstrip())]
    closing = lines[end - 1] if end - 1 > start else indent + token.markup
    inner = [*options, *translated]
    return [opening, *(indent + line if line else line for line in inner), closing]


def _translate_row(line: str, cells: list[str], catalog: dict[str, str], missing: list[str]) -> str:
    """A table row with the text of each of its cells translated in place."""
    position = 0
    for cell in cells:
        key = message_key(cell)
        found = line.find(cell, position)
        if not key or found < 0:
            continue
        translation = catalog.get(key)
        if translation is None:
            if has_words(key):
                missing.append(key)
            position = found + len(cell)
            continue
        line = line[:found] + translation + line[found + len(cell) :]
        position = found + len(translation)
    return line


def translate_markdown(
    source: str, catalog: dict[str, str], untranslated: list[str] | None = None, *, proof: bool = False
) -> str:
    """A Markdown cell's source with every translatable block replaced by its translation.

    Args:
        source: the cell's MyST Markdown.
        catalog: translations by English message (:func:`translations`).
        untranslated: if given, the blocks that have no translation are appended to it.
        proof: the source is a proof's body (its first paragraph's message starts with "Proof.").

    Returns:
        The translated Markdown: a block keeps its line prefix (heading marks, list bullet,
        indentation) and becomes one line; a table row keeps its cells' places; formulas,
        directive options and everything else the parser gives no text block for are unchanged.
    """
    missing: list[str] = [] if untranslated is None else untranslated
    lines = source.split("\n")
    replacements: dict[int, tuple[int, list[str]]] = {}
    row_cells: dict[int, list[str]] = {}
    in_table = False
    first_paragraph = proof
    for token in _PARSER.parse(source):
        in_table = (in_table or token.type == "table_open") and token.type != "table_close"
        if token.map is None:
            continue
        start, end = token.map
        if token.type == "inline" and in_table:
            row_cells.setdefault(start, []).append(token.content)
        elif token.type == "inline":
            key = message_key(token.content)
            lead, first_paragraph = (PROOF_LEAD[0] if first_paragraph else ""), False
            if not key or key.startswith("$$"):
                continue
            translation = _lookup(lead + key, catalog, missing)
            if translation is None:
                continue
            for mark in PROOF_LEAD[1] if lead else ():
                translation = translation.removeprefix(mark)
            first, last = token.content.split("\n")[0], token.content.split("\n")[-1]
            prefix = lines[start][: lines[start].find(first)] if first in lines[start] else ""
            tail = lines[end - 1]
            suffix = tail[tail.rfind(last) + len(last) :] if last in tail else ""
            replacements[start] = (end, [prefix + translation + suffix])
        elif token.type in ("fence", "colon_fence") and token.info.startswith("{"):
            replacements[start] = (end, _translate_directive(token, lines, catalog, missing))
    for row, cells in row_cells.items():
        replacements[row] = (row + 1, [_translate_row(lines[row], cells, catalog, missing)])
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in replacements:
            end, new = replacements[index]
            out += new
            index = end
        else:
            out.append(lines[index])
            index += 1
    return "\n".join(out)


def translate_notebook(path: Path, catalog: dict[str, str]) -> Translation:
    """The notebook at ``path`` with its Markdown cells and figure captions in Chinese.

    Raises:
        ValueError: if ``path`` is not a notebook.
    """
    if path.suffix != ".ipynb" or not path.is_file():
        raise ValueError(f"{path} is not a notebook (.ipynb file)")
    notebook = nbformat.read(path, as_version=4)
    translated = copy.deepcopy(notebook)
    result = Translation(translated)
    for cell in translated.cells:
        if cell.cell_type == "markdown":
            cell.source = translate_markdown(cell.source, catalog, result.untranslated)
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
        if figure.get("caption"):
            key = message_key(figure["caption"])
            if key in catalog:
                figure["caption"] = catalog[key]
            else:
                result.untranslated.append(key)
    return result


def write_notebooks(
    output: Path, locale_dir: Path = LOCALE_DIR, notebooks: Sequence[Path] | None = None, *, strict: bool = False
) -> dict[str, list[str]]:
    """Write the Chinese chapters and their student handouts under ``output``.

    Args:
        output: the folder that receives ``notebooks/`` and ``student/notebooks/``.
        locale_dir: the folder holding ``zh_CN/LC_MESSAGES/notebooks/<chapter>.po``.
        notebooks: the chapters (default: every chapter of ``_toc.yml``).
        strict: fail if a message has no current translation.

    Returns:
        The messages that kept their English, by chapter (none when the catalogs are complete).

    Raises:
        ValueError: with ``strict``, if any chapter has a message without a current translation,
            naming the chapter and the message.
    """
    if notebooks is None:
        notebooks = [ROOT / f"{docname}.ipynb" for docname in chapter_docnames(ROOT / "_toc.yml")]
    chapters, handouts = output / "notebooks", output / "student" / "notebooks"
    for folder in (chapters, handouts):
        folder.mkdir(parents=True, exist_ok=True)
    untranslated: dict[str, list[str]] = {}
    for path in notebooks:
        catalog = translations(locale_dir / "zh_CN" / "LC_MESSAGES" / "notebooks" / f"{path.stem}.po")
        result = translate_notebook(path, catalog)
        if result.untranslated:
            untranslated[path.stem] = result.untranslated
        nbformat.write(result.notebook, chapters / path.name)
        nbformat.write(strip_solutions(result.notebook)[0], handouts / path.name)
    if strict and untranslated:
        lines = [f"{stem}: {message[:100]!r}" for stem, messages in untranslated.items() for message in messages]
        raise ValueError("messages without a current translation:\n" + "\n".join(lines))
    return untranslated


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookkit.i18n_notebooks", description=__doc__.split("\n")[0])
    parser.add_argument("output", type=Path, help="folder for notebooks/ and student/notebooks/")
    parser.add_argument("--locale", type=Path, default=LOCALE_DIR, help="the catalogs' folder")
    parser.add_argument("--strict", action="store_true", help="fail on a message without a translation")
    parser.add_argument("notebooks", type=Path, nargs="*", help="chapters (default: every one)")
    args = parser.parse_args(argv)
    try:
        missing = write_notebooks(args.output, args.locale, args.notebooks or None, strict=args.strict)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    count = sum(len(messages) for messages in missing.values())
    print(f"Chinese notebooks in {args.output}/notebooks, student handouts in {args.output}/student/notebooks; "
          f"{count} messages kept their English")
    return 0


if __name__ == "__main__":
    sys.exit(main())
