"""Label bibliography entries the way the text cites them: "Vaswani et al., 2017".

The book cites in author-year style (``bibtex_reference_style: author_year``), but pybtex's
default styles label the reference list with alphabetic keys such as "[VSP+17]", so a reader
following a citation lands on a label that looks nothing like it. This registers the pybtex
style ``author_year_labels`` (the ``unsrt`` formatting with author-year labels, sorted by
author, year and title), selected by ``bibtex_default_style`` in ``_config.yml``.
"""

from __future__ import annotations

from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.application import Sphinx


def _authors(entry: object) -> str:
    people = entry.persons.get("author") or entry.persons.get("editor") or []  # type: ignore[attr-defined]
    surnames = [" ".join(person.last_names) for person in people]
    if not surnames:
        return entry.fields.get("title", "Anonymous")  # type: ignore[attr-defined]
    if len(surnames) == 1:
        return surnames[0]
    if len(surnames) == 2 and "others" not in surnames:
        return f"{surnames[0]} and {surnames[1]}"
    return f"{surnames[0]} et al."


class AuthorYearLabels(BaseLabelStyle):
    """"Surname, year", "Surname and Surname, year" or "Surname et al., year"; a, b, ... on clashes."""

    def format_labels(self, sorted_entries):  # noqa: ANN001, ANN201 (pybtex's signature)
        entries = list(sorted_entries)
        labels = [f"{_authors(entry)}, {entry.fields.get('year', 'n.d.')}" for entry in entries]
        clashes = {label for label, count in Counter(labels).items() if count > 1}
        suffix: Counter[str] = Counter()
        for label in labels:
            if label in clashes:
                yield f"{label}{'abcdefghijklmnopqrstuvwxyz'[suffix[label]]}"
                suffix[label] += 1
            else:
                yield label


class AuthorYearStyle(UnsrtStyle):
    default_label_style = AuthorYearLabels
    default_sorting_style = "author_year_title"


def setup(app: Sphinx) -> dict[str, object]:
    register_plugin("pybtex.style.formatting", "author_year_labels", AuthorYearStyle)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
