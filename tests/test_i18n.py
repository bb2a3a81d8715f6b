"""The Chinese edition's catalogs (bookkit.i18n): the check against hand-made catalogs, the glossary's
Chinese forms, the extraction configuration, and the committed catalogs of the translated documents."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po
from bookkit import i18n

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


def test_without_an_english_cache_every_notebook_counts_as_unexecuted(tmp_path: Path) -> None:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))[:2]
    assert i18n.uncached(tmp_path, notebooks) == notebooks
