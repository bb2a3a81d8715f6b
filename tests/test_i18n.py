"""The Chinese edition's catalogs (bookkit.i18n): the check against hand-made catalogs, the glossary's
Chinese forms, the extraction configuration, the committed catalogs of the translated documents; and
the text Sphinx alone misses (bookkit.i18n_sphinx), extracted and translated in a one-page book."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import plotly.graph_objects as go
import pytest
import yaml
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po
from bookkit import i18n, i18n_glue, i18n_sphinx, language_links, pdf, zh_search
from myst_nb.ext.glue import GLUE_PREFIX

from posenc.interactive import interactive_figure

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = """# Glossary

```{glossary}
attention score
  **Chinese:** 注意力分数、注意力得分

  The number $s_{ij}$.

rotary position embedding
RoPE
  **Chinese:** 旋转位置编码、旋转式位置编码（Rotary Position Embedding，RoPE）

  A rotation.

permutation
permutation matrix
  **Chinese:** 置换、排列；置换矩阵

  A reordering.

sinusoidal position encoding
  **Chinese:** 正弦位置编码；三角函数式位置编码（苏剑林的叫法）；Sinusoidal 位置编码

  Sines and cosines.
```
"""
SCORE = "The {term}`attention score` $s_{ij}$ uses `q @ k.T`, see {doc}`notation`."
TITLE = "Getting started"


def write_catalog(path: Path, messages: dict[str, tuple[str, bool]]) -> None:
    catalog = Catalog(locale="zh_CN")
    for english, (chinese, fuzzy) in messages.items():
        catalog.add(english, chinese, flags=("fuzzy",) if fuzzy else ())
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        write_po(file, catalog)


@pytest.fixture
def book(tmp_path: Path) -> Path:
    (tmp_path / "glossary.md").write_text(GLOSSARY, encoding="utf-8")
    return tmp_path


def run_check(book: Path, messages: dict[str, tuple[str, bool]], english: list[str] | None = None) -> list[str]:
    write_catalog(book / "locale" / "zh_CN" / "LC_MESSAGES" / "book" / "intro.po", messages)
    pot = None
    if english is not None:
        pot = book / "pot"
        write_catalog(pot / "book" / "intro.pot", {m: ("", False) for m in english})
    return [str(p) for p in i18n.check(book / "locale", pot, glossary=book / "glossary.md")]


def test_a_complete_faithful_translation_passes(book: Path) -> None:
    chinese = "{term}`注意力分数 <attention score>` $s_{ij}$ 由 `q @ k.T` 算出，见 {doc}`notation`。"
    assert run_check(book, {SCORE: (chinese, False), TITLE: ("入门", False)}, [SCORE, TITLE]) == []


@pytest.mark.parametrize(
    ("chinese", "fuzzy", "reason"),
    [
        ("", False, "no Chinese translation"),
        ("入门", True, "fuzzy"),
    ],
)
def test_an_untranslated_or_fuzzy_message_fails_naming_document_and_message(
    book: Path, chinese: str, fuzzy: bool, reason: str
) -> None:
    problems = run_check(book, {TITLE: (chinese, fuzzy)})
    assert len(problems) == 1
    assert problems[0].startswith("book/intro: ") and reason in problems[0] and TITLE in problems[0]


def test_a_changed_english_message_fails_until_translated_again(book: Path) -> None:
    changed = TITLE + " quickly"
    problems = run_check(book, {TITLE: ("入门", False)}, [changed])
    assert len(problems) == 1 and "no Chinese translation" in problems[0] and changed in problems[0]


@pytest.mark.parametrize(
    "chinese",
    [
        "{term}`注意力分数 <attention weight>` $s_{ij}$ 由 `q @ k.T` 算出，见 {doc}`notation`。",  # role target
        "{term}`注意力分数 <attention score>` $s_{ji}$ 由 `q @ k.T` 算出，见 {doc}`notation`。",  # formula
        "{term}`注意力分数 <attention score>` $s_{ij}$ 由 `q @ k` 算出，见 {doc}`notation`。",  # code
        "{term}`注意力分数 <attention score>` $s_{ij}$ 由 `q @ k.T` 算出。",  # a lost reference
    ],
)
def test_a_translation_that_changes_a_target_formula_or_code_fails(book: Path, chinese: str) -> None:
    problems = run_check(book, {SCORE: (chinese, False)})
    assert len(problems) == 1 and "changes what it must keep" in problems[0]


def test_a_glued_value_must_stay_as_written(book: Path) -> None:
    english = "The loss fell to {glue:text}`ch2_loss:.2f`."
    assert run_check(book, {english: ("损失降到 {glue:text}`ch2_loss:.2f`。", False)}) == []
    assert run_check(book, {english: ("损失降到 {glue:text}`ch2_loss:.3f`。", False)})


@pytest.mark.parametrize(
    ("chinese", "alternative"),
    [
        ("注意力得分", "注意力得分"),
        ("旋转式位置编码", "旋转式位置编码"),
        ("三角函数式位置编码", "三角函数式位置编码"),
        ("Sinusoidal 位置编码", "Sinusoidal 位置编码"),
    ],
)
def test_a_glossary_term_in_another_chinese_form_fails(book: Path, chinese: str, alternative: str) -> None:
    problems = run_check(book, {TITLE: (chinese, False)})
    assert len(problems) == 1 and f"uses {alternative!r}" in problems[0]


def test_the_preferred_forms_and_related_notions_pass(book: Path) -> None:
    for chinese in ("注意力分数", "旋转位置编码（RoPE）", "置换矩阵", "排列", "正弦位置编码", "softmax"):
        assert run_check(book, {TITLE: (chinese, False)}) == [], chinese


def test_glossary_forms_of_the_book() -> None:
    forms = {entry.terms[0]: entry for entry in i18n.glossary_forms()}
    assert forms["rotary position embedding"].preferred == ("旋转位置编码",)
    assert forms["attention score"].alternatives == ("注意力得分",)
    assert forms["context window"].preferred == ("上下文窗口", "上下文长度")
    assert forms["NTK-aware scaling"].preferred == ("NTK-aware 缩放",)
    assert "三角函数式位置编码" in forms["sinusoidal position encoding"].alternatives
    assert all(entry.preferred for entry in forms.values())


def test_glossary_forms_reject_an_entry_without_chinese() -> None:
    with pytest.raises(ValueError, match="names no Chinese form"):
        i18n.parse_forms(["term"], "（none）")
    with pytest.raises(ValueError, match="at least one term"):
        i18n.parse_forms([], "术语")


def test_the_check_rejects_an_unknown_document(book: Path) -> None:
    write_catalog(book / "locale" / "zh_CN" / "LC_MESSAGES" / "book" / "intro.po", {TITLE: ("入门", False)})
    with pytest.raises(ValueError, match="no .po file for"):
        i18n.check(book / "locale", only=["book/nowhere"], glossary=book / "glossary.md")


def test_gettext_config_turns_execution_off_and_keeps_the_english_config(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    changed = i18n.gettext_config(config, ROOT)
    assert changed["execute"]["execute_notebooks"] == "off"
    assert changed["sphinx"]["config"]["gettext_compact"] is False
    assert all(Path(p).is_absolute() and Path(p).is_dir() for p in changed["sphinx"]["local_extensions"].values())
    assert config["execute"]["execute_notebooks"] == "cache"  # the English configuration is not changed
    assert changed["sphinx"]["config"]["nitpicky"] == config["sphinx"]["config"]["nitpicky"]
    with pytest.raises(TypeError, match="mapping"):
        i18n.gettext_config(["not", "a", "mapping"], ROOT)  # type: ignore[arg-type]


@pytest.mark.parametrize("document", i18n.TRANSLATED)
def test_the_translated_documents_are_complete_and_consistent(document: str) -> None:
    """Cheap (catalogs only, no extraction); make i18n-check also compares against the current English."""
    problems = i18n.check(only=[document])
    assert not problems, "\n".join(map(str, problems))


def test_chinese_config_reads_the_english_cache_and_the_catalogs(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    changed = i18n.chinese_config(config, ROOT, tmp_path / "cache")
    assert changed["sphinx"]["config"]["language"] == "zh_CN"
    assert changed["sphinx"]["config"]["locale_dirs"] == [str(ROOT / "locale")]
    assert changed["sphinx"]["config"]["gettext_compact"] is False  # catalogs as make i18n writes them
    assert changed["execute"]["execute_notebooks"] == "cache"
    assert changed["execute"]["cache"] == str((tmp_path / "cache").resolve())
    # Colab and Binder open the Chinese notebooks, on their branch of the same repository
    assert changed["repository"] == {**config["repository"], "branch": i18n.ZH_NOTEBOOKS_BRANCH}
    assert config["repository"]["branch"] == "main"


def test_without_an_english_cache_every_notebook_counts_as_unexecuted(tmp_path: Path) -> None:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))[:2]
    assert i18n.uncached(tmp_path, notebooks) == notebooks


# ---- what Sphinx alone does not extract (bookkit.i18n_sphinx) and Babel's format flags ----------


def test_the_extension_is_loaded_by_extraction_and_chinese_site_only(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert i18n.EXTENSION not in config["sphinx"]["local_extensions"]  # the English build is unchanged
    assert i18n.EXTENSION in i18n.gettext_config(config, ROOT)["sphinx"]["local_extensions"]
    chinese = i18n.chinese_config(config, ROOT, tmp_path / "cache", tmp_path / "locale")
    assert i18n.EXTENSION in chinese["sphinx"]["local_extensions"]
    assert chinese["sphinx"]["config"]["locale_dirs"] == [str((tmp_path / "locale").resolve())]


def test_only_cells_with_words_and_written_in_a_table_are_messages() -> None:
    assert i18n_sphinx.has_words("self-attention") and i18n_sphinx.has_words("cited {cite}`vllm2024rope`")
    assert i18n_sphinx.has_words("一致")
    for nothing in ("$O(n^2 d)$", "`rotate_half`", "{glue:text}`ch1-loss:.2f`", "0.25", "—"):
        assert not i18n_sphinx.has_words(nothing), nothing
    written = "| layer | cost |\n|---|---|\n| self-attention | $O(n)$ |\nrecurrent | $O(n)$\nA *proof* on paper."
    assert all(i18n_sphinx.written_cell(cell, written) for cell in ("layer", "self-attention", "recurrent"))
    assert not i18n_sphinx.written_cell("proof", written)  # a generated cell that the prose merely mentions
    assert not i18n_sphinx.written_cell("2 h 45 min", written)


def test_interactive_alts_are_read_from_literals_and_names_bound_to_them() -> None:
    source = (
        'walk_alt = ("A ring of points "\n    "around the origin. ")\n'
        'glue_figure("fig-a", interactive_figure(walk, alt=walk_alt, height=560))\n'
        'glue_figure("fig-b", interactive_figure(dot, height=400,\n    alt="Two curves."))\n'
        "figure = interactive_figure(table, alt=computed)  # not a literal: no message\n"
    )
    assert i18n_sphinx.interactive_alts(source) == ["A ring of points around the origin.", "Two curves."]
    assert i18n_sphinx.interactive_alts("%matplotlib inline\nx = 1") == []
    metadata = {"mystnb": {"figure": {"caption": "Weights.", "name": "fig-w"}, "image": {"alt": "Heatmaps."}}}
    assert i18n_sphinx.cell_messages(metadata, "plot()") == ("Weights.", "Heatmaps.", [])
    assert i18n_sphinx.cell_messages({"tags": ["hide-input"]}, "x = 1") == (None, None, [])


def test_format_flags_are_dropped_so_msgfmt_accepts_a_correct_translation(tmp_path: Path) -> None:
    english = "GPT-NeoX-20B rotates the first 25 % of each head, see {numref}`fig-partial`."
    chinese = "GPT-NeoX-20B 只旋转每个头的前 25% 的坐标，见 {numref}`fig-partial`。"
    path = tmp_path / "zh_CN" / "LC_MESSAGES" / "notebooks" / "06_x.po"
    write_catalog(path, {english: (chinese, False), TITLE: ("入门", True)})
    assert "python-format" in path.read_text(encoding="utf-8")  # what Babel (and sphinx-intl) write
    msgfmt = shutil.which("msgfmt")
    if msgfmt:
        assert subprocess.run([msgfmt, "-c", "-o", os.devnull, str(path)], capture_output=True).returncode != 0
    assert i18n.unflag(tmp_path) == [path]
    text = path.read_text(encoding="utf-8")
    assert "python-format" not in text and "python-brace-format" not in text
    assert "#, fuzzy\n" in text and i18n.load(path).get(english).string == chinese  # nothing else changed
    assert i18n.unflag(tmp_path) == []
    if msgfmt:
        assert subprocess.run([msgfmt, "-c", "-o", os.devnull, str(path)], capture_output=True).returncode == 0



def test_a_message_that_comes_back_gets_its_translation_back_and_no_duplicate(tmp_path: Path) -> None:
    """sphinx-intl keeps a removed message's translation as obsolete (#~), and when the message
    returns adds it untranslated beside it: msgfmt -c rejects the duplicate. unflag (make i18n)
    drops the obsolete entry and gives its translation back to the message."""
    pot_dir, locale = tmp_path / "pot", tmp_path / "locale"
    po = locale / "zh_CN" / "LC_MESSAGES" / "book" / "intro.po"
    returning, gone = "A paragraph that leaves and comes back.", "A paragraph gone for good."

    def update(english: list[str]) -> None:
        write_catalog(pot_dir / "book" / "intro.pot", {message: ("", False) for message in english})
        sphinx_intl = Path(sys.executable).with_name("sphinx-intl")
        command = [str(sphinx_intl), "update", "-p", str(pot_dir), "-d", str(locale), "-l", "zh_CN", "-w", "0"]
        subprocess.run(command, check=True, capture_output=True)

    update([TITLE, returning, gone])
    write_catalog(
        po, {TITLE: ("入门", False), returning: ("一段离开又回来的话。", False), gone: ("一去不返的一段话。", False)}
    )
    update([TITLE])
    update([TITLE, returning])
    assert po.read_text(encoding="utf-8").count(f'msgid "{returning}"') == 2  # what sphinx-intl leaves
    msgfmt = shutil.which("msgfmt")
    if msgfmt:
        assert subprocess.run([msgfmt, "-c", "-o", os.devnull, str(po)], capture_output=True).returncode != 0
    assert i18n.unflag(locale) == [po]
    catalog = i18n.load(po)
    assert catalog.get(returning).string == "一段离开又回来的话。" and not catalog.get(returning).fuzzy
    assert catalog.get(TITLE).string == "入门"
    assert list(catalog.obsolete) == [gone]  # an obsolete message that did not come back stays
    assert po.read_text(encoding="utf-8").count(f'msgid "{returning}"') == 1
    assert i18n.unflag(locale) == []
    if msgfmt:
        assert subprocess.run([msgfmt, "-c", "-o", os.devnull, str(po)], capture_output=True).returncode == 0

# A one-page book with every kind of text Sphinx alone misses: a Markdown table, an exercise title, a
# code cell's figure caption and alt text (mystnb metadata), an interactive figure's alt= text and a
# {glue:figure} caption.
TINY_TEXT = {
    "layer": "层",
    "self-attention": "自注意力",
    "A rotate_half that reads the wrong coordinates": "读错坐标的 rotate_half",
    "Weights of one head, $A(X)$.": "一个头的权重 $A(X)$。",
    "Three square heatmaps.": "三幅方形热图。",
    "A ring of points around the origin.": "绕原点的一圈点。",
    "The ring, with a slider (interactive).": "这一圈点，带滑块（交互式）。",
}
TINY_CONF = """
extensions = ["myst_nb", "sphinx_exercise", "bookkit.i18n_sphinx"]
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence", "dollarmath"]
gettext_compact = False
locale_dirs = ["locale"]
exclude_patterns = ["_build", "locale"]
"""
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


def tiny_notebook(executed: bool) -> nbformat.NotebookNode:
    """The one-page book's notebook, as committed (no outputs) or as the English build executed it."""
    figure_source = 'walk_alt = "A ring of points around the origin. "\nglue_figure("fig-live", '
    figure_source += "interactive_figure(ring, alt=walk_alt))"
    plot = nbformat.v4.new_code_cell("plot_weights()", metadata={"mystnb": {
        "figure": {"caption": "Weights of one head, $A(X)$.", "name": "fig-weights"},
        "image": {"alt": "Three square heatmaps."}}})
    live = nbformat.v4.new_code_cell(figure_source)
    if executed:
        plot.outputs = [nbformat.v4.new_output("display_data", {"image/png": PIXEL, "text/plain": "<Figure>"})]
        bundle = interactive_figure(go.Figure(), alt="A ring of points around the origin.")._repr_mimebundle_()
        live.outputs = [nbformat.v4.new_output(
            "display_data", {GLUE_PREFIX + mime: value for mime, value in bundle.items()},
            metadata={"scrapbook": {"name": "fig-live", "mime_prefix": GLUE_PREFIX}})]
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(
            "# A tiny chapter\n\n```{table} Two layers\n:name: tab-tiny\n\n"
            "| layer | cost |\n|---|---|\n| self-attention | $O(n^2 d)$ |\n```\n\n"
            "```{exercise} A rotate_half that reads the wrong coordinates\n:label: ex-tiny\n\nFix it.\n```\n\n"
            "```{solution} ex-tiny\n:label: sol-tiny\n\nRead the halves.\n```"),
        plot,
        live,
        nbformat.v4.new_markdown_cell(
            "```{glue:figure} fig-live\n:name: fig-live\n\nThe ring, with a slider (interactive).\n```"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def sphinx_build(source: Path, builder: str, output: Path, *options: str) -> None:
    # In a subprocess: Sphinx registers directives in docutils' global tables.
    result = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", builder, *options, str(source), str(output)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_missed_text_is_extracted_and_translated_on_the_chinese_site(tmp_path: Path) -> None:
    book = tmp_path / "book"
    book.mkdir()
    (book / "conf.py").write_text(TINY_CONF, encoding="utf-8")
    (book / "index.md").write_text("# Index\n\n```{toctree}\ntiny\n```\n", encoding="utf-8")
    nbformat.write(tiny_notebook(executed=False), book / "tiny.ipynb")
    sphinx_build(book, "gettext", tmp_path / "gettext")
    english = i18n.english_messages(tmp_path / "gettext" / "tiny.pot")
    assert set(TINY_TEXT) <= set(english), set(TINY_TEXT) - set(english)
    assert not [m for m in english if "O(n^2 d)" in m and m.startswith("$")]  # a math-only cell is no message

    catalog = Catalog(locale="zh_CN")
    for message in english:
        catalog.add(message, TINY_TEXT.get(message, ""))
    (book / "locale" / "zh_CN" / "LC_MESSAGES").mkdir(parents=True)
    with (book / "locale" / "zh_CN" / "LC_MESSAGES" / "tiny.po").open("wb") as file:
        write_po(file, catalog)
    nbformat.write(tiny_notebook(executed=True), book / "tiny.ipynb")
    sphinx_build(book, "html", tmp_path / "html", "-D", "language=zh_CN")
    page = (tmp_path / "html" / "tiny.html").read_text(encoding="utf-8")
    math = r'<span class="math notranslate nohighlight">\(A(X)\)</span>'
    for chinese in TINY_TEXT.values():
        assert chinese.replace("$A(X)$", math) in page, chinese
    assert 'alt="三幅方形热图。"' in page  # the image's alt text
    ring = "绕原点的一圈点。"  # the interactive figure's alt text, in its attribute and in its script
    assert f'aria-label="{ring}"' in page and f'"aria-label", {json.dumps(ring)}' in page
    assert page.count("读错坐标的 rotate_half") == 2  # the exercise's title and its solution's
    assert 'aria-label="A ring' not in page and "Weights of one head" not in page and "wrong coordinates" not in page


# ---- the Chinese site: search words, glued values in translated paragraphs, language links -------


def test_chinese_config_has_chinese_search_and_the_glue_extension(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    words = i18n.write_search_words(tmp_path / "search_words.txt")
    changed = i18n.chinese_config(config, ROOT, tmp_path / "cache", search_words=words)
    assert changed["sphinx"]["config"]["html_search_language"] == "zh"
    assert changed["sphinx"]["config"]["html_search_options"] == {"dict": str(words.resolve())}
    for extension in (i18n.GLUE_EXTENSION, i18n.NODES_EXTENSION, i18n.SEARCH_EXTENSION):  # not in the English build
        assert extension in changed["sphinx"]["local_extensions"]
        assert extension not in config["sphinx"]["local_extensions"]
    # both sites link to each other through the same extension
    assert language_links.__name__ in config["sphinx"]["local_extensions"]
    assert language_links.__name__ in changed["sphinx"]["local_extensions"]
    assert "html_search_options" not in i18n.chinese_config(config, ROOT, tmp_path / "cache")["sphinx"]["config"]


# ---- the Chinese PDF's own pages (bookkit.pdf; the printed PDF itself: tests/test_pdf.py -k chinese) --


def test_the_chinese_pdf_takes_its_part_titles_from_the_root_document_catalog(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert pdf.caption_translations(config, ROOT / "_toc.yml")["Reference"] == "Reference"  # English as it is
    root = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["root"]
    captions = {part for part, _ in pdf.toc_documents(ROOT / "_toc.yml") if part}
    write_catalog(
        tmp_path / "locale" / "zh_CN" / "LC_MESSAGES" / f"{root}.po",
        {caption: (f"第{index}部分", False) for index, caption in enumerate(sorted(captions))},
    )
    chinese = i18n.chinese_config(config, ROOT, tmp_path / "cache", tmp_path / "locale")
    translated = pdf.caption_translations(chinese, ROOT / "_toc.yml")
    assert translated == {caption: f"第{index}部分" for index, caption in enumerate(sorted(captions))}
    # a caption without a current translation stops the PDF rather than printing English
    write_catalog(
        tmp_path / "locale" / "zh_CN" / "LC_MESSAGES" / f"{root}.po",
        {caption: ("入门", caption == TITLE) for caption in captions},
    )
    with pytest.raises(ValueError, match=TITLE):
        pdf.caption_translations(chinese, ROOT / "_toc.yml")


def test_the_chinese_pdf_front_matter_is_chinese() -> None:
    entries = [("", "注意力中的位置", 3), ("第一部分：问题", "1. 自注意力的置换等变性", 46)]
    page = pdf._front_matter_html(i18n.TITLE, i18n.AUTHOR, "full", entries, i18n.LANGUAGE)
    assert '<html lang="zh-CN">' in page  # Chromium draws the Simplified Chinese forms
    words = pdf.WORDS[i18n.LANGUAGE]
    for chinese in (i18n.TITLE, i18n.AUTHOR, words.contents, words.full_edition, "第一部分：问题"):
        assert chinese in page
    english = pdf.WORDS["en"]
    assert english.contents not in page and english.full_edition not in page and "Printed" not in page
    assert words.student_edition in pdf._front_matter_html(i18n.TITLE, i18n.AUTHOR, "student", entries, i18n.LANGUAGE)


def test_the_search_words_are_the_glossary_terms_jieba_can_keep_whole(tmp_path: Path) -> None:
    words = i18n.search_words()
    assert {"位置编码", "旋转位置编码", "外推", "远程衰减", "注意力分数"} <= set(words)
    assert all(i18n.CJK_WORD.fullmatch(word) for word in words)  # no "KV 缓存", no "softmax 函数"
    path = i18n.write_search_words(tmp_path / "words.txt")
    assert path.read_text(encoding="utf-8").splitlines() == words


def test_a_translated_glue_role_refers_to_its_own_chapter() -> None:
    assert i18n_glue.in_document("alias-far:d", "notebooks/00_tour.ipynb") == "/notebooks/00_tour.ipynb::alias-far:d"
    # myst-nb splits the format at the last colon: a key without one gets the default format, s
    assert i18n_glue.in_document("checks", "notebooks/00_tour.ipynb") == "/notebooks/00_tour.ipynb::checks:s"
    assert i18n_glue.in_document("other.ipynb::key:.2f", "notebooks/00_tour.ipynb") == "other.ipynb::key:.2f"


@pytest.mark.parametrize(
    ("page", "to_chinese", "to_english"),
    [
        ("book/intro", "../zh/book/intro.html", "../../book/intro.html"),
        ("genindex", "zh/genindex.html", "../genindex.html"),
        ("notebooks/03_sinusoidal", "../zh/notebooks/03_sinusoidal.html", "../../notebooks/03_sinusoidal.html"),
    ],
)
def test_a_language_link_leads_to_the_same_page_of_the_other_site(page: str, to_chinese: str, to_english: str) -> None:
    english, chinese = language_links.site_of("en"), language_links.site_of("zh_CN")
    assert language_links.link_between(page, english, chinese) == to_chinese
    assert language_links.link_between(page, chinese, english) == to_english
    assert language_links.other_site(english) is chinese and language_links.other_site(chinese) is english
    assert language_links.site_of(None) is english


@pytest.mark.parametrize("page", ["", "/book/intro", "book/../../intro", "book//intro"])
def test_a_language_link_needs_a_page_inside_the_site(page: str) -> None:
    english, chinese = language_links.SITES
    with pytest.raises(ValueError, match="relative path inside the site"):
        language_links.link_between(page, english, chinese)


def test_a_site_in_another_language_is_refused() -> None:
    with pytest.raises(ValueError, match="no site in language 'fr'"):
        language_links.site_of("fr")


GLUED_TEXT = {
    "A tiny chapter": "一个小章节",
    "The loss fell to {glue:text}`loss:.2f` after {glue:text}`steps` steps.":
        "损失在 {glue:text}`steps` 步之后降到 {glue:text}`loss:.2f`。",
}
BOOK_CONF = """
extensions = ["myst_nb", "bookkit.i18n_sphinx", "bookkit.i18n_glue", "bookkit.i18n_nodes", "bookkit.language_links"]
html_theme = "sphinx_book_theme"
nb_execution_mode = "off"
gettext_compact = False
locale_dirs = ["locale"]
exclude_patterns = ["_build", "locale"]
"""


def glued_notebook() -> nbformat.NotebookNode:
    """A notebook as executed: two glued values, and the paragraph that shows them."""
    glue = nbformat.v4.new_code_cell('glue("loss", 0.25)\nglue("steps", 300)')
    glue.outputs = [
        nbformat.v4.new_output("display_data", {GLUE_PREFIX + "text/plain": text},
                               metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}})
        for name, text in (("loss", "0.25"), ("steps", "300"))
    ]
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A tiny chapter"),
        glue,
        nbformat.v4.new_markdown_cell(list(GLUED_TEXT)[1]),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def test_the_chinese_site_shows_glued_values_and_links_to_the_english(tmp_path: Path) -> None:
    """Built in Chinese with the book's theme: the translated paragraph shows the chapter's glued values,
    and the page links to itself on the English site (../<page>.html from the zh/ folder)."""
    book = tmp_path / "book"
    (book / "notebooks").mkdir(parents=True)
    (book / "conf.py").write_text(BOOK_CONF, encoding="utf-8")
    (book / "index.md").write_text("# Index\n\n```{toctree}\nnotebooks/tiny\n```\n", encoding="utf-8")
    nbformat.write(glued_notebook(), book / "notebooks" / "tiny.ipynb")
    write_catalog(book / "locale" / "zh_CN" / "LC_MESSAGES" / "notebooks" / "tiny.po",
                  {english: (chinese, False) for english, chinese in GLUED_TEXT.items()})
    sphinx_build(book, "html", tmp_path / "html", "-W", "-D", "language=zh_CN")
    page = (tmp_path / "html" / "notebooks" / "tiny.html").read_text(encoding="utf-8")
    assert '损失在 <span class="pasted-text">300</span> 步之后降到 <span class="pasted-text">0.25</span>。' in page
    link = '<a href="../../notebooks/tiny.html" class="btn btn-sm language-link" hreflang="en"'
    assert page.count(link) == 1 and '<link rel="alternate" hreflang="en" href="../../notebooks/tiny.html" />' in page
    assert '<html lang="zh-CN"' in page
    assert "language-link.css" in page and (tmp_path / "html" / "_static" / "language-link.css").is_file()
    # the translated paragraphs' nodes are saved with their page, not with the document Sphinx parsed them in
    doctree = pickle.loads((tmp_path / "html" / ".doctrees" / "notebooks" / "tiny.doctree").read_bytes())
    assert all(node.document is doctree for node in doctree.findall())


def test_the_chinese_search_indexes_jieba_words_with_its_latin_terms_in_a_set() -> None:
    """The same words as Sphinx's own Chinese search, with the Latin ones kept in a set."""
    from sphinx.search.zh import SearchChinese

    text = "旋转位置编码 rotates each pair; RoPE 的外推 uses rotate_half and the base 10000."
    ours, sphinx = zh_search.ChineseSearch({}), SearchChinese({})
    assert ours.lang == "zh" and isinstance(ours.latin_terms, set)
    assert [ours.stem(w) for w in ours.split(text)] == [sphinx.stem(w) for w in sphinx.split(text)]
    assert {"旋转", "位置", "编码", "rotates", "RoPE"} <= set(ours.split(text))
    assert set(ours.latin_terms) == set(sphinx.latin_terms)
