"""A Sphinx extension for the Chinese site's search: Sphinx's Chinese search language, made fast.

Sphinx's Chinese search (``sphinx.search.zh``) cuts the text into words with jieba, and records every
Latin word it meets (code, formulas' names, English terms) in a *list* that it scans for each word it
stems, Chinese words included. On this book's pages, full of code, the list grows to tens of
thousands of words: splitting and stemming the text of four chapters' pages as Sphinx does took
104 s with the list and 9.6 s with a set, for the same words (the list is only ever asked whether it
holds a word). :class:`ChineseSearch` is that search language with a
set; everything else, jieba's words and the user dictionary of ``html_search_options``, is Sphinx's.

Loaded by the Chinese site only (:func:`bookkit.i18n.chinese_config`), which also quiets jieba's
messages on loading its dictionary.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese


class LatinTerms(set[str]):
    """A set that takes Sphinx's ``list.extend`` calls."""

    def extend(self, terms: Iterable[str]) -> None:
        self.update(terms)


class ChineseSearch(SearchChinese):
    """Sphinx's Chinese search language, with its Latin words in a set instead of a list."""

    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = LatinTerms()  # type: ignore[assignment]


def setup(app: Sphinx) -> dict[str, object]:
    try:
        import jieba  # type: ignore[import-untyped]
    except ImportError:  # Sphinx indexes no Chinese then: tests/browser/test_chinese_site.py fails
        pass
    else:
        jieba.setLogLevel(logging.WARNING)
    app.add_search_language(ChineseSearch)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
