"""Prepare the student edition: the book's sources with every solution removed.

Writes, under the output directory (default ``_build/student``):

- ``source/``: a copy of the book's sources whose notebooks have no solutions (see
  ``strip_solutions`` in :mod:`bookkit.exercise_catalog`) and whose configuration names the
  edition and has no launch buttons (they would open the full notebooks);
- ``notebooks/``: the same stripped notebooks, without outputs, to hand out.

``make student`` runs this module and then builds ``source/`` into ``_build/student/_build/html``;
that build executes every student notebook top to bottom and fails if one raises. ``make
student-zh`` builds the same sources in Chinese from that build's execution cache (nothing runs
again) into its ``zh/`` folder, so the two student sites link to each other page by page as the
full sites do (:mod:`bookkit.language_links`).

Usage:
    python -m bookkit.student_edition [OUTPUT_DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat
import yaml

from bookkit.exercise_catalog import chapter_docnames, strip_solutions

ROOT = Path(__file__).resolve().parents[2]  # tools/bookkit/ -> the repository

BOOK_SOURCES = ("_config.yml", "_toc.yml", "_ext", "_static", "book", "notebooks")
EDITION_NOTE = "student edition"


def student_config(config_text: str) -> str:
    """The configuration of the student edition: its own title and no launch buttons.

    Its language links stay: they lead to the Chinese student site in its ``zh/`` folder.
    """
    config = yaml.safe_load(config_text)
    config["title"] = f"{config['title']} ({EDITION_NOTE})"
    config.pop("launch_buttons", None)
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def write_student_notebook(source: Path, target: Path) -> list[str]:
    """Write ``source`` without solutions and outputs to ``target``; return the removed labels."""
    notebook = nbformat.read(source, as_version=4)
    stripped, removed = strip_solutions(notebook)
    for cell in stripped.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(stripped, target)
    return removed


def build_sources(output: Path) -> None:
    source_dir, handout_dir = output / "source", output / "notebooks"
    for directory in (source_dir, handout_dir):
        if directory.exists():
            shutil.rmtree(directory)
    source_dir.mkdir(parents=True)
    handout_dir.mkdir()
    for name in BOOK_SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source_dir / name, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        else:
            shutil.copy2(origin, source_dir / name)
    (source_dir / "_config.yml").write_text(
        student_config((ROOT / "_config.yml").read_text(encoding="utf-8")), encoding="utf-8"
    )
    for docname in chapter_docnames(ROOT / "_toc.yml"):
        notebook = f"{docname}.ipynb"
        removed = write_student_notebook(ROOT / notebook, source_dir / notebook)
        shutil.copy2(source_dir / notebook, handout_dir / Path(notebook).name)
        print(f"{notebook}: removed {len(removed)} solutions")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", type=Path, default=ROOT / "_build" / "student")
    args = parser.parse_args()
    build_sources(args.output.resolve())
    print(f"student sources in {args.output / 'source'}, handout notebooks in {args.output / 'notebooks'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
