"""The PDF editions (``make pdf``): complete, typeset, illustrated, and the student one without solutions.

Runs when ``PDF_DIR`` names the directory ``make pdf`` wrote (``make pdf`` sets it); otherwise
skipped. The evidence of a solution is the same as for the student website
(``tests/test_exercise_catalog.py``): lines that occur only in a chapter's solutions. The full
edition must contain most of them, which shows the check can see them at all; the student
edition must contain none.
"""

from __future__ import annotations

import os
import re
import unicodedata
from functools import cache
from pathlib import Path

import nbformat
import pytest
import yaml
from bookkit import exercise_catalog as catalog
from bookkit import i18n
from bookkit.i18n_notebooks import translations
from bookkit.pdf import SOLUTIONS_HEADING, WORDS, toc_documents
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
PDF_DIR = os.environ.get("PDF_DIR")
FULL = "position-in-attention.pdf"
STUDENT = "position-in-attention-student.pdf"
CHAPTERS = catalog.read_book(ROOT, ROOT / "_toc.yml")
# TeX that MathJax would have replaced: a backslash command of the book's formulas, or a
# display-math delimiter. Code in the book never contains these.
RAW_TEX = re.compile(r"\\(frac|theta|ell|mathbf|mathrm|sum|begin|end\{|left|right|cdot|top|sqrt|operatorname)\b|\$\$")

pytestmark = pytest.mark.skipif(PDF_DIR is None, reason="set PDF_DIR to the output of make pdf")


@cache
def _reader(name: str) -> PdfReader:
    path = Path(PDF_DIR or "") / name
    if not path.is_file():
        pytest.fail(f"{path} does not exist: run make pdf")
    return PdfReader(path)


@cache
def _pages(name: str) -> tuple[str, ...]:
    return tuple(page.extract_text() or "" for page in _reader(name).pages)


TYPOGRAPHY = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "..."})


def _squeezed(text: str) -> str:
    """Text as comparable across source and PDF: ligatures and Sphinx's smart quotes undone,
    without whitespace (the PDF's line breaks fall where the page ends, not where the source's do)."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).translate(TYPOGRAPHY))


def _chapter_titles() -> list[tuple[int, str]]:
    """``(number, title)`` of every numbered chapter (the tour, in "Getting started", has none)."""
    titles = []
    for chapter in CHAPTERS:
        if chapter.number is None:
            continue
        notebook = nbformat.read(ROOT / f"{chapter.docname}.ipynb", as_version=4)
        heading = next(
            line for cell in notebook.cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("# ")
        )
        titles.append((chapter.number, heading[2:].strip()))
    return titles


@cache
def _kept_text() -> str:
    """The sources of every chapter with the solutions removed: what the student edition keeps."""
    kept = []
    for chapter in CHAPTERS:
        stripped, _ = catalog.strip_solutions(nbformat.read(ROOT / f"{chapter.docname}.ipynb", as_version=4))
        kept += [cell.source for cell in stripped.cells]
    return "\n".join(kept)


def _solution_evidence(chapter: catalog.Chapter) -> list[str]:
    notebook = nbformat.read(ROOT / f"{chapter.docname}.ipynb", as_version=4)
    # A solution line that also appears outside the solutions of any chapter (e.g. a loop over
    # dtypes that chapter 7 writes too) is no evidence: the student edition rightly prints it.
    kept = _kept_text()
    # List markers are rendered, not printed as typed.
    lines = {
        re.sub(r"^(\d+\.|[-*]) ", "", line.strip()) for cell in notebook.cells for line in cell.source.splitlines()
    }
    return sorted(
        line for line in lines
        if len(line) >= 40 and line not in kept and not set("$`{}*_[]\\<>") & set(line)
    )


@pytest.mark.parametrize("name", [FULL, STUDENT])
def test_every_chapter_is_there_numbered_in_order(name: str) -> None:
    text = _squeezed("\n".join(_pages(name)))
    positions = []
    for number, title in _chapter_titles():
        heading = _squeezed(f"{number}. {title}")
        assert heading in text, f"{name}: chapter {number} ({title!r}) is missing"
        positions.append(text.index(heading))
    assert positions == sorted(positions)


@pytest.mark.parametrize("name", [FULL, STUDENT])
def test_contents_and_outline_list_every_page_of_the_book(name: str) -> None:
    reader = _reader(name)
    pages = _pages(name)
    assert 150 <= len(pages) <= 1500, f"{name} has {len(pages)} pages"
    contents = "\n".join(pages[1:4])
    assert "Contents" in contents
    outline_titles: list[str] = []

    def walk(items: list) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                outline_titles.append(item.title)

    walk(reader.outline)
    parts = {part for part, _ in toc_documents(ROOT / "_toc.yml") if part}
    assert parts <= set(outline_titles)
    assert len(outline_titles) == len(parts) + len(toc_documents(ROOT / "_toc.yml"))
    for number, title in _chapter_titles():
        assert f"{number}. {title}" in outline_titles
        # The contents give the page where the outline says the chapter starts.
        entry = next(item for item in _flat(reader.outline) if item.title == f"{number}. {title}")
        first_page = reader.get_destination_page_number(entry) + 1
        entry_line = _squeezed(f"{number}. {title} {first_page}")
        assert entry_line in {_squeezed(line) for line in contents.splitlines()}, (name, title, first_page)
        assert _squeezed(title) in _squeezed(pages[first_page - 1])


def _flat(items: list) -> list:
    return [leaf for item in items for leaf in (_flat(item) if isinstance(item, list) else [item])]


@pytest.mark.parametrize("name", [FULL, STUDENT])
def test_formulas_are_typeset(name: str) -> None:
    for number, text in enumerate(_pages(name), start=1):
        assert "MathJax" not in text and "Math input error" not in text, f"{name}, page {number}"
        for line in text.splitlines():
            # Prose has Sphinx's curly quotes; a straight quote marks code, where TeX in a
            # matplotlib label (r"$\Pi A$") is meant to stay raw.
            raw = RAW_TEX.search(line) if not set("'\"") & set(line) else None
            assert raw is None, f"{name}, page {number}: raw TeX {raw.group(0)!r} in {line!r}"


@pytest.mark.parametrize("name", [FULL, STUDENT])
def test_figures_are_embedded(name: str) -> None:
    """Every chapter's pages carry images: its figures, printed from the PNGs of the build."""
    reader = _reader(name)
    parts = {part for part, _ in toc_documents(ROOT / "_toc.yml") if part}
    starts = sorted(
        (reader.get_destination_page_number(item), item.title)
        for item in _flat(reader.outline)
        if item.title not in parts
    )
    figures = 0
    for (first, title), (following, _) in zip(starts, [*starts[1:], (len(reader.pages), "")], strict=True):
        images = sum(len(page.images) for page in reader.pages[first:following])
        figures += images
        if re.match(r"\d+\. ", title):
            assert images >= 2, f"{name}: chapter {title!r} has {images} images"
    assert figures >= 40, f"{name}: {figures} images in all"


def test_the_full_edition_has_every_solution_and_the_student_edition_none() -> None:
    full = _squeezed("\n".join(_pages(FULL)))
    student = _squeezed("\n".join(_pages(STUDENT)))
    assert SOLUTIONS_HEADING in "\n".join(_pages(FULL))
    assert SOLUTIONS_HEADING not in "\n".join(_pages(STUDENT))
    for chapter in CHAPTERS:
        evidence = _solution_evidence(chapter)
        assert len(evidence) >= len(chapter.exercises), f"{chapter.docname}: too little solution text to test"
        found = [line for line in evidence if _squeezed(line) in full]
        assert len(found) >= 0.8 * len(evidence), (
            f"{chapter.docname}: only {len(found)} of {len(evidence)} solution lines found in the full PDF"
        )
        leaked = [line for line in evidence if _squeezed(line) in student]
        assert leaked == [], f"{chapter.docname}: solution text in the student PDF: {leaked[:3]}"
    for chapter in CHAPTERS:
        for exercise in chapter.exercises:
            assert _squeezed(exercise.title) in student, f"exercise {exercise.label} missing from the student PDF"


# ---- the Chinese edition (make pdf-zh): printed from the Chinese site like the full edition --------

CHINESE = os.environ.get("PDF_CHINESE")
chinese = pytest.mark.skipif(not CHINESE, reason="set PDF_CHINESE to the Chinese PDF in PDF_DIR (make pdf-zh)")
CJK = re.compile(r"[\u3400-\u9fff]")
NOTO_CJK = re.compile(r"Noto(Sans|Serif)CJK")


def _fonts(page: object) -> set[str]:
    """The names of the fonts a page draws with, its own and those of the forms it places. Chromium
    embeds Noto CJK (an OpenType font with CFF outlines) as Type 3 fonts, each glyph a drawing: their
    name is in the font descriptor (``/FAAAAA+NotoSansCJKsc-Bold``), not in ``/BaseFont``."""
    names: set[str] = set()
    resources = page.get("/Resources") or {}  # type: ignore[attr-defined]
    for font in (resources.get("/Font") or {}).values():
        font = font.get_object()
        descriptor = font.get("/FontDescriptor")
        names.add(str(font.get("/BaseFont", "")))
        names.add(str(descriptor.get_object().get("/FontName", "")) if descriptor else "")
    for xobject in (resources.get("/XObject") or {}).values():
        names |= _fonts(xobject.get_object())
    return names


def _shows(text: str, chinese: str) -> bool:
    """Whether ``text`` (squeezed) holds ``chinese`` as extracted from the PDF, where a character may
    come out as its twin in the CJK Radicals Supplement, 门 as ⻔ (no Unicode normalization undoes it)."""
    pattern = "".join(
        f"[{re.escape(char)}\u2e80-\u2eff]" if CJK.match(char) else re.escape(char) for char in _squeezed(chinese)
    )
    return re.search(pattern, text) is not None


def _chinese_parts() -> dict[str, str]:
    """The part captions of ``_toc.yml`` in Chinese, by English caption: the root document's catalog
    holds them (the Chinese site's sidebar shows them from it)."""
    root = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["root"]
    catalog_ = translations(i18n.LOCALE_DIR / i18n.LANGUAGE / "LC_MESSAGES" / f"{root}.po")
    return {part: catalog_[part] for part, _ in toc_documents(ROOT / "_toc.yml") if part}


@chinese
def test_the_chinese_edition_has_a_chinese_title_page_contents_and_part_titles() -> None:
    name = CHINESE or ""
    reader = _reader(name)
    pages = _pages(name)
    outline = reader.outline
    first_document = reader.get_destination_page_number(_flat(outline)[0])
    cover, contents = _squeezed(pages[0]), _squeezed("\n".join(pages[1:first_document]))
    english, chinese = WORDS["en"], WORDS[i18n.LANGUAGE]
    assert _shows(cover, i18n.TITLE) and _shows(cover, i18n.AUTHOR) and _shows(cover, chinese.full_edition)
    assert _shows(contents, chinese.contents)
    for words in (english.contents, english.full_edition, "Printed from", "Position in Attention"):
        assert _squeezed(words) not in cover + contents, f"{name}: {words!r} on the title page or in the contents"
    parts = _chinese_parts()
    # The outline's top level: the root page, then each part with its pages beneath it.
    top = [item.title for item in outline if not isinstance(item, list)]
    assert top[1:] == list(dict.fromkeys(parts.values())), f"{name}: the outline's parts are {top[1:]}"
    for english_part, chinese_part in parts.items():
        assert _shows(contents, chinese_part), f"{name}: part {chinese_part!r} is not in the contents"
        assert _squeezed(english_part) not in contents, f"{name}: the English part {english_part!r} is in the contents"
    text = _squeezed("".join(pages))
    assert _shows(text, chinese.solutions) and _squeezed(SOLUTIONS_HEADING) not in text


@chinese
def test_the_chinese_edition_has_every_page_in_the_outline_and_chinese_text() -> None:
    name = CHINESE or ""
    reader = _reader(name)
    pages = _pages(name)
    assert 150 <= len(pages) <= 1500, f"{name} has {len(pages)} pages"
    outline = _flat(reader.outline)
    toc = toc_documents(ROOT / "_toc.yml")
    parts = set(_chinese_parts().values())
    assert len(outline) == len(parts) + len(toc)
    chapters = [item for item in outline if item.title not in parts]
    untitled = [item.title for item in chapters if not CJK.search(item.title) and item.title != "API reference"]
    assert not untitled, f"{name}: pages whose title is not Chinese: {untitled}"
    text = "".join(pages)
    cjk = len(CJK.findall(text))
    # Measured: 82 568 (the text of about 670 pages; a few common characters come out as their
    # Kangxi-radical twins, 面 as ⾯, from the font's own map, which a reader's search would miss).
    assert cjk >= 50_000, f"{name}: only {cjk} Chinese characters can be extracted"
    for item in chapters:
        first = pages[reader.get_destination_page_number(item)]
        assert CJK.search(first), f"{name}: no extractable Chinese on the first page of {item.title!r}"


@chinese
def test_the_chinese_edition_draws_its_chinese_with_noto_cjk_fonts() -> None:
    """Every page with Chinese text embeds a Noto CJK font (a page without one would show empty boxes)."""
    name = CHINESE or ""
    reader = _reader(name)
    without = [
        number
        for number, (page, text) in enumerate(zip(reader.pages, _pages(name), strict=True), start=1)
        if CJK.search(text) and not any(NOTO_CJK.search(font) for font in _fonts(page))
    ]
    assert not without, f"{name}: pages with Chinese text but no Noto CJK font: {without[:20]}"


@chinese
def test_the_chinese_edition_formulas_are_typeset() -> None:
    name = CHINESE or ""
    for number, text in enumerate(_pages(name), start=1):
        assert "MathJax" not in text and "Math input error" not in text, f"{name}, page {number}"
        for line in text.splitlines():
            raw = RAW_TEX.search(line) if not set("'\"") & set(line) else None
            assert raw is None, f"{name}, page {number}: raw TeX {raw.group(0)!r} in {line!r}"
