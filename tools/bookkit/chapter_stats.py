"""Length of every chapter as a reader meets it: words of prose, lines of code, long cells shown.

    python -m bookkit.chapter_stats [notebooks/*.ipynb]

Prose is every word of the Markdown cells (exercises and solutions included); code is every line
of every code cell (the hidden bootstrap cell included, so totals compare across editions). A code
cell counts as *folded* when a myst-nb tag hides its source on the site (``hide-input``,
``hide-cell``, ``remove-input``, ``remove-cell``): the reader sees a "show code" toggle, or
nothing. The book's convention is that no unfolded cell is longer than ``MAX_SHOWN_LINES``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MAX_SHOWN_LINES = 25
FOLDING_TAGS = frozenset({"hide-input", "hide-cell", "remove-input", "remove-cell"})


def is_folded(cell: dict) -> bool:
    return bool(FOLDING_TAGS.intersection(cell.get("metadata", {}).get("tags", [])))


def long_unfolded_cells(path: Path) -> list[tuple[int, int]]:
    """(cell index, line count) of every code cell shown unfolded with more than MAX_SHOWN_LINES."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        (index, len("".join(cell["source"]).splitlines()))
        for index, cell in enumerate(cells)
        if cell["cell_type"] == "code"
        and not is_folded(cell)
        and len("".join(cell["source"]).splitlines()) > MAX_SHOWN_LINES
    ]


def chapter_stats(path: Path) -> dict[str, int]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    sources = [("".join(cell["source"]), cell) for cell in cells]
    return {
        "words": sum(len(text.split()) for text, cell in sources if cell["cell_type"] == "markdown"),
        "code_lines": sum(len(text.splitlines()) for text, cell in sources if cell["cell_type"] == "code"),
        "nonblank_code_lines": sum(
            sum(1 for line in text.splitlines() if line.strip())
            for text, cell in sources
            if cell["cell_type"] == "code"
        ),
        "long_unfolded": len(long_unfolded_cells(path)),
    }


def main(paths: list[str]) -> None:
    notebooks = [Path(p) for p in paths] or sorted(Path("notebooks").glob("*.ipynb"))
    print(f"{'chapter':<46}{'words':>7}{'code':>7}{'nonblank':>9}{'long shown':>12}")
    for path in notebooks:
        stats = chapter_stats(path)
        print(
            f"{path.name:<46}{stats['words']:>7}{stats['code_lines']:>7}{stats['nonblank_code_lines']:>9}"
            f"{stats['long_unfolded']:>12}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
