"""The Chinese notebooks (bookkit.i18n_notebooks): Markdown from the catalogs, code unchanged."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from bookkit.exercise_catalog import chapter_docnames, strip_solutions
from bookkit.i18n_notebooks import _PARSER, translate_markdown, translate_notebook, translations, write_notebooks

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "notebooks"
CHAPTERS = [ROOT / f"{docname}.ipynb" for docname in chapter_docnames(ROOT / "_toc.yml")]

CELL = """## A heading

A paragraph that the source
breaks over two lines, with $x$ and {term}`RoPE`.

- an item
- another item
  on two lines

| Scheme | Bias |
|---|---|
| learned | $p_i$ |

$$
a = b
$$ (eq-test)

```{prf:theorem} A title
:label: thm-test

The statement.
```

```{prf:proof}
The first step.

The second step.
```

````{exercise} Count the pairs
:label: ex-test

Do it.

```{solution} ex-test
:class: dropdown

Done.
```
````"""

CATALOG = {
    "A heading": "标题",
    "A paragraph that the source breaks over two lines, with $x$ and {term}`RoPE`.": "一段话，含 $x$ 与 {term}`RoPE`。",
    "an item": "一项",
    "another item on two lines": "另一项",
    "Scheme": "方案",
    "Bias": "偏置",
    "learned": "可学习",
    "(A title)": "（一个标题）",
    "The statement.": "命题。",
    "Proof. The first step.": "证明：第一步。",
    "The second step.": "第二步。",
    "Count the pairs": "数一数坐标对",
    "Do it.": "做吧。",
    "Done.": "完成。",
}

EXPECTED = """## 标题

一段话，含 $x$ 与 {term}`RoPE`。

- 一项
- 另一项

| 方案 | 偏置 |
|---|---|
| 可学习 | $p_i$ |

$$
a = b
$$ (eq-test)

```{prf:theorem} 一个标题
:label: thm-test

命题。
```

```{prf:proof}
第一步。

第二步。
```

````{exercise} 数一数坐标对
:label: ex-test

做吧。

```{solution} ex-test
:class: dropdown

完成。
```
````"""


def test_every_kind_of_block_is_translated_in_place():
    missing: list[str] = []
    assert translate_markdown(CELL, CATALOG, missing) == EXPECTED
    assert missing == []


def test_a_block_without_translation_keeps_its_english_and_is_reported():
    catalog = {key: value for key, value in CATALOG.items() if key != "an item"}
    missing: list[str] = []
    translated = translate_markdown(CELL, catalog, missing)
    assert "- an item\n" in translated
    assert missing == ["an item"]


def test_a_missing_catalog_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no catalog"):
        translations(tmp_path / "missing.po")


def _blocks(source: str) -> list[tuple[str, str]]:
    """The block structure of a Markdown cell: token types, and the text of formulas and fences' options."""
    blocks = []
    for token in _PARSER.parse(source):
        if token.type == "inline":
            continue
        kept = token.content if token.type.startswith("math") else ""
        if token.type in ("fence", "colon_fence"):
            kept = "\n".join(line for line in token.content.split("\n") if line.startswith(":"))
        blocks.append((token.type, kept))
    return blocks


@pytest.fixture(scope="module")
def chinese(tmp_path_factory):
    output = tmp_path_factory.mktemp("zh")
    untranslated = write_notebooks(output, notebooks=CHAPTERS)
    return output, untranslated


def test_every_message_of_every_chapter_is_translated(chinese):
    _, untranslated = chinese
    assert untranslated == {}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_code_is_unchanged_and_markdown_keeps_its_structure(chinese, chapter):
    output, _ = chinese
    english = nbformat.read(chapter, as_version=4)
    zh = nbformat.read(output / "notebooks" / chapter.name, as_version=4)
    assert [cell.cell_type for cell in zh.cells] == [cell.cell_type for cell in english.cells]
    translated_cells = 0
    for en_cell, zh_cell in zip(english.cells, zh.cells, strict=True):
        assert zh_cell.get("id") == en_cell.get("id")
        if en_cell.cell_type == "code":
            assert zh_cell.source == en_cell.source
            assert zh_cell.metadata.get("tags") == en_cell.metadata.get("tags")
            continue
        # Same headings, lists, tables, formulas (verbatim), directives and options; new words.
        assert _blocks(zh_cell.source) == _blocks(en_cell.source)
        translated_cells += zh_cell.source != en_cell.source
    markdown_cells = sum(cell.cell_type == "markdown" for cell in english.cells)
    assert translated_cells >= 0.9 * markdown_cells


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_student_handouts_lose_exactly_the_english_solutions(chinese, chapter):
    output, _ = chinese
    english_handout, removed = strip_solutions(nbformat.read(chapter, as_version=4))
    _, zh_removed = strip_solutions(nbformat.read(output / "notebooks" / chapter.name, as_version=4))
    zh_handout = nbformat.read(output / "student" / "notebooks" / chapter.name, as_version=4)
    assert zh_removed == removed
    assert [cell.get("id") for cell in zh_handout.cells] == [cell.get("id") for cell in english_handout.cells]
    assert "{solution" not in "".join(cell.source for cell in zh_handout.cells if cell.cell_type == "markdown")


def test_figure_captions_in_metadata_are_translated():
    chapter = ROOT / "notebooks" / "03_sinusoidal.ipynb"
    catalog = translations(CATALOGS / "03_sinusoidal.po")
    zh = translate_notebook(chapter, catalog).notebook
    captions = [cell.metadata["mystnb"]["figure"]["caption"] for cell in zh.cells
                if cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption")]
    assert captions and all(caption in catalog.values() for caption in captions)
