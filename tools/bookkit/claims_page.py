"""The build report's claims: a Sphinx extension with one directive, ``{claims-report}``.

The directive leaves a placeholder that is filled when the page is written, after every notebook
has been executed (or read from the execution cache): one captioned table per chapter with each
claim of the ledger (:mod:`posenc.claims`), the sentence it backs, the value measured by this build,
its bounds, its margin, its value in each shifted-seed run of the current notebook text, and the
smallest margin seen, fragile claims first. The claims are read from the glue data myst-nb writes
beside each executed notebook (``<build>/jupyter_execute``); the shifted-seed runs from
``_build/test/claims-seeds.json`` (written by ``make seeds-test``), counted only for notebooks
whose text has not changed since. The page holding the directive is rebuilt on every build.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

from bookkit.claims import FRAGILE_MARGIN, ClaimRow, claim_rows, collect, current_runs, run_offsets

SEED_CLAIMS = Path("_build/test/claims-seeds.json")
"""Where ``make seeds-test`` writes the shifted-seed runs' claims, relative to the book's root."""


class claims_placeholder(nodes.General, nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """Replaced by the claims tables when the page is written."""


class ClaimsReport(SphinxDirective):
    """``{claims-report}``: the claims of every chapter, filled in when the page is written."""

    def run(self) -> list[nodes.Node]:
        docnames: set[str] = getattr(self.env, "claims_report_docs", set())
        docnames.add(self.env.docname)
        self.env.claims_report_docs = docnames  # type: ignore[attr-defined]
        return [claims_placeholder()]


def _paragraph(text: str) -> nodes.paragraph:
    return nodes.paragraph(text=text)


def _table(
    name: str, caption: str, header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int]
) -> nodes.table:
    table = nodes.table(classes=["claims-table"], ids=[nodes.make_id(name)])
    table += nodes.title(text=caption)
    group = nodes.tgroup(cols=len(header))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    for target, cells in [(head, header), *((body, row) for row in rows)]:
        row_node = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += _paragraph(cell)
            row_node += entry
        target += row_node
    return table


def _margin(margin: float | None) -> str:
    return "—" if margin is None else f"{margin:.2f}"


def _chapter_tables(rows: list[ClaimRow], offsets: list[str]) -> Iterator[nodes.Node]:
    chapters = sorted({row.chapter for row in rows})
    header = ["claim", "what the text says", "value", "bounds", "margin",
              *(f"seed +{offset}" for offset in offsets), "smallest margin"]
    widths = [14, 40, 9, 12, 7, *(9 for _ in offsets), 8]
    for chapter in chapters:
        mine = sorted(
            (row for row in rows if row.chapter == chapter),
            key=lambda row: (row.held, not row.fragile, row.smallest_margin if row.smallest_margin is not None else 9),
        )
        body = [
            [
                row.label + ("" if row.held else " (FAILED)") + (" (fragile)" if row.fragile and row.held else ""),
                row.words,
                row.value,
                row.bounds,
                _margin(row.margin),
                *(row.run_values.get(offset, "—") for offset in offsets),
                _margin(row.smallest_margin),
            ]
            for row in mine
        ]
        fragile = sum(row.fragile for row in mine)
        caption = (f"The {len(mine)} claims of {chapter}, fragile ones first ({fragile} fragile): "
                   f"the value measured by this build, its bounds and margins.")
        yield _table(f"claims-{chapter}", caption, header, body, widths)


def fill_reports(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Replace the placeholders of ``docname`` by the tables (event ``doctree-resolved``)."""
    placeholders = list(doctree.findall(claims_placeholder))
    if not placeholders:
        return
    build_dir = Path(app.outdir).parent
    claims: list[dict[str, Any]] = collect(build_dir) if (build_dir / "jupyter_execute").is_dir() else []
    seeds_file = Path(app.srcdir) / SEED_CLAIMS
    seeds = {}
    if seeds_file.is_file():
        seeds = current_runs(json.loads(seeds_file.read_text(encoding="utf-8")), Path(app.srcdir) / "notebooks")
    rows = claim_rows(claims, seeds)
    offsets = run_offsets(seeds)
    fragile = [row for row in rows if row.fragile]
    summary: list[nodes.Node] = [
        _paragraph(
            f"This build checked {len(rows)} claims in {len({row.chapter for row in rows})} chapters; "
            f"{sum(not row.held for row in rows)} did not hold. A claim's margin is the distance from "
            f"its value to its nearest bound, as a share of the bounds' width (of the bound itself, or "
            f"of the scale the chapter gives, for a one-sided bound); a claim is listed as fragile when "
            f"its smallest margin is below {FRAGILE_MARGIN:g}. Fragile claims: {len(fragile)}"
            + (": " + ", ".join(f"{row.chapter} {row.label}" for row in fragile) + "." if fragile else ".")
        ),
        _paragraph(
            f"Shifted-seed runs of the current text included: offsets {', '.join(offsets)}."
            if offsets else
            "No shifted-seed run of the current text was available when this page was written "
            "(make test rewrites this page with them once its runs are done; so does make book "
            "after make seeds-test)."
        ),
    ]
    for placeholder in placeholders:
        placeholder.replace_self([*summary, *_chapter_tables(rows, offsets)])


def always_outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """The pages with a claims report are rewritten on every build (event ``env-get-outdated``)."""
    return sorted(getattr(env, "claims_report_docs", set()))


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    getattr(env, "claims_report_docs", set()).discard(docname)


def setup(app: Sphinx) -> dict[str, object]:
    app.add_node(claims_placeholder)
    app.add_directive("claims-report", ClaimsReport)
    app.connect("doctree-resolved", fill_reports)
    app.connect("env-get-outdated", always_outdated)
    app.connect("env-purge-doc", purge)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
