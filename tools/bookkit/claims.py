"""The claims ledger as data: collect the claims the chapters state, check and report them.

Every chapter states its measured facts through :class:`posenc.claims.Ledger`, which records each
claim in the notebook's outputs (glued, hidden, with the claim's record in the output's metadata).
This module reads those records:

- ``python -m bookkit.claims collect BUILD_DIR OUT``: the claims of a book build (from the glue
  data myst-nb writes beside each executed notebook in ``BUILD_DIR/jupyter_execute``) into a JSON
  file, one entry per claim; exits 1 if a claim did not hold or a chapter states none.
- ``python -m bookkit.claims check NOTEBOOK ...``: execute notebooks in a fresh kernel, with the
  build's environment and print their claims, failing if a cell raises or if the prose refers with
  ``{glue:text}`` to a key the notebook does not glue (the build would fail on it too).
- ``python -m bookkit.claims report CLAIMS SEED_CLAIMS``: each claim's value in the build and in
  every shifted-seed run, the smallest margin seen, and the fragile ones.

The shifted-seed runs (:mod:`bookkit.seed_shift`) write their claims with :func:`claims_of_notebook`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from posenc.claims import CLAIM_METADATA_KEY, FRAGILE_MARGIN

GLUE_REFERENCE = re.compile(r"\{glue(?::[a-z]+)?\}`([^`:<]+?)(?::[^`]*)?`")
"""A ``{glue}``, ``{glue:text}`` ... role in markdown; group 1 is the key."""


def claims_of_outputs(outputs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The claim records held in the metadata of a cell's (or a glue file's) outputs."""
    return [
        dict(output["metadata"][CLAIM_METADATA_KEY])
        for output in outputs
        if CLAIM_METADATA_KEY in output.get("metadata", {})
    ]


def claims_of_notebook(notebook: nbformat.NotebookNode) -> list[dict[str, Any]]:
    """Every claim recorded in an executed notebook's outputs, in order (a re-stated label: the last)."""
    found: dict[str, dict[str, Any]] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for record in claims_of_outputs(cell.get("outputs", [])):
                found[record["label"]] = record
    return list(found.values())


def notebook_sha256(path: Path) -> str:
    """The sha256 of a notebook file: which text a run's claims belong to."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def glued_keys(notebook: nbformat.NotebookNode) -> set[str]:
    """The glue keys of an executed notebook's outputs."""
    return {
        output["metadata"]["scrapbook"]["name"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "scrapbook" in output.get("metadata", {})
    }


def glued_twice(notebook: nbformat.NotebookNode) -> list[str]:
    """Glue keys that an executed notebook glues twice, by two cells or by one: myst-nb warns, so the build fails."""
    outputs_of: dict[str, int] = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if "scrapbook" in output.get("metadata", {}):
                name = output["metadata"]["scrapbook"]["name"]
                outputs_of[name] = outputs_of.get(name, 0) + 1
    return sorted(key for key, count in outputs_of.items() if count > 1)


def glue_references(notebook: nbformat.NotebookNode) -> list[str]:
    """The keys the notebook's markdown refers to with a glue role or directive (same-document keys)."""
    keys = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            keys += [key for key in GLUE_REFERENCE.findall(cell.source) if "::" not in key]
            keys += re.findall(r"```\{glue(?::[a-z]+)?\}\s+([^\s:]+)", cell.source)
    return keys


def collect(build_dir: Path) -> list[dict[str, Any]]:
    """The claims of a book build, read from its ``jupyter_execute/**/*.glue.json`` files."""
    execute_dir = build_dir / "jupyter_execute"
    if not execute_dir.is_dir():
        raise FileNotFoundError(f"no executed notebooks in {execute_dir}: was the book built in {build_dir}?")
    claims = []
    for glue_file in sorted(execute_dir.rglob("*.glue.json")):
        glue = json.loads(glue_file.read_text(encoding="utf-8"))
        claims += claims_of_outputs(glue.values())
    return claims


def execute(path: Path, timeout: int) -> tuple[str | None, nbformat.NotebookNode]:
    """Execute a notebook top to bottom in a fresh kernel, in its own folder, with this environment.

    Returns:
        The error text of the cell that raised (None if every cell ran) and the executed notebook,
        whose outputs hold the claims stated up to a failure.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    try:
        client.execute()
    except CellExecutionError as error:
        return str(error), notebook
    return None, notebook


def check(paths: list[Path], timeout: int) -> int:
    """Execute each notebook in a fresh kernel and print its claims; 1 if anything failed."""
    # As the book's build runs them (the Makefile's BUILD_ENV): no progress bars on stderr, and
    # interactive figures glued for their captioned {glue:figure}.
    os.environ.update({"POSENC_PROGRESS": "0", "POSENC_BOOK_BUILD": "1"})
    failed = False
    for path in paths:
        print(f"== {path.name}")
        error, notebook = execute(path.resolve(), timeout)
        if error is not None:
            print(error[-3000:])
            failed = True
            continue
        rows = claim_rows(claims_of_notebook(notebook), {})
        for row in rows:
            margin = "   -  " if row.margin is None else f"{row.margin:6.2f}"
            status = "ok" if row.held else "FAILED"
            print(f"  {status:<6} {row.label:<34} {row.value:>14}  margin {margin}  {row.bounds}")
        missing = sorted(set(glue_references(notebook)) - glued_keys(notebook))
        if missing:
            print(f"  the prose refers to glue keys the notebook does not glue: {missing}")
            failed = True
        twice = glued_twice(notebook)
        if twice:
            print(f"  keys glued twice (a label stated twice; the build fails on it): {twice}")
            failed = True
        printed = stderr_outputs(notebook)
        if printed:
            print("  cells that write to stderr (the build, stderr_output: warn under -W, fails on them):")
            print("\n".join(f"    {line}" for line in printed))
            failed = True
        print(f"  {len(rows)} claims, {sum(row.fragile for row in rows)} fragile (margin < {FRAGILE_MARGIN})")
    return 1 if failed else 0


def stderr_outputs(notebook: nbformat.NotebookNode) -> list[str]:
    """The stderr outputs of an executed notebook, one line each: the cell's index and the text's start."""
    return [
        f"cell {index}: {' '.join(output.get('text', '').split())[:160]}"
        for index, cell in enumerate(notebook.cells)
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and output.get("name") == "stderr"
    ]


@dataclass(frozen=True)
class ClaimRow:
    """One claim over the build and the shifted-seed runs: what the build report shows."""

    chapter: str
    label: str
    words: str
    value: str
    bounds: str
    margin: float | None
    """The margin in the build (None where the form has none)."""
    run_values: dict[str, str]
    """The value at each shifted-seed run of the current notebook, by offset."""
    smallest_margin: float | None
    """The smallest margin over the build and the runs."""
    held: bool
    """Whether the claim held in the build and every run."""

    @property
    def fragile(self) -> bool:
        """Its smallest margin is below :data:`posenc.claims.FRAGILE_MARGIN`."""
        return self.smallest_margin is not None and self.smallest_margin < FRAGILE_MARGIN


def format_value(value: Any) -> str:
    """A measured value as the report prints it: 4 significant digits, or a short repr."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return f"{value:.4g}"


def format_bounds(record: Mapping[str, Any]) -> str:
    """The bounds of a claim record in words: "[0.01, 0.025]", ">= 0.94", "== [41, 46]", "true"."""
    bounds, form = record["bounds"], record["form"]
    if form in ("between", "close_to"):
        return f"[{bounds['low']:.4g}, {bounds['high']:.4g}]"
    if form == "at_least":
        return f">= {bounds['low']:.4g}"
    if form == "at_most":
        return f"<= {bounds['high']:.4g}"
    if form == "equals":
        return "== " + format_value(bounds["expected"])
    return "true"


def current_runs(seeds: Mapping[str, Any], notebooks: Path) -> dict[str, Any]:
    """The chapters of a ``claims-seeds.json`` whose runs are of the current notebook text."""
    current = {}
    for chapter, runs in seeds.items():
        path = notebooks / f"{chapter}.ipynb"
        if path.is_file() and runs.get("_sha256") == notebook_sha256(path):
            current[chapter] = runs
    return current


def run_offsets(seeds: Mapping[str, Any]) -> list[str]:
    """The seed offsets that ran, in order, in a ``claims-seeds.json`` table."""
    return sorted(
        {offset for runs in seeds.values() for label, by_offset in runs.items() if label != "_sha256"
         for offset in by_offset},
        key=int,
    )


def claim_rows(claims: Sequence[Mapping[str, Any]], seeds: Mapping[str, Any]) -> list[ClaimRow]:
    """Each claim of the build with its values and smallest margin over the build and the runs."""
    rows = []
    for record in claims:
        runs = seeds.get(record["chapter"], {}).get(record["label"], {})
        margins = [m for m in [record.get("margin"), *(run.get("margin") for run in runs.values())] if m is not None]
        rows.append(
            ClaimRow(
                chapter=record["chapter"],
                label=record["label"],
                words=record["words"],
                value=format_value(record["value"]),
                bounds=format_bounds(record),
                margin=record.get("margin"),
                run_values={offset: format_value(run["value"]) for offset, run in sorted(runs.items())},
                smallest_margin=min(margins) if margins else None,
                held=record["held"] and all(run["held"] for run in runs.values()),
            )
        )
    return rows


def report(claims_file: Path, seeds_file: Path | None, notebooks: Path) -> int:
    """Print the fragile or failed claims over the build and the runs; 1 if any failed."""
    claims = json.loads(claims_file.read_text(encoding="utf-8"))
    seeds: Mapping[str, Any] = {}
    if seeds_file is not None and seeds_file.is_file():
        seeds = current_runs(json.loads(seeds_file.read_text(encoding="utf-8")), notebooks)
    rows = claim_rows(claims, seeds)
    offsets = run_offsets(seeds)
    print(f"{len(rows)} claims in {len({row.chapter for row in rows})} chapters; "
          f"shifted-seed runs of the current text: offsets {offsets or 'none'}")
    for row in rows:
        if row.fragile or not row.held:
            status = "FAILED" if not row.held else "fragile"
            margin = "-" if row.smallest_margin is None else f"{row.smallest_margin:.3f}"
            print(f"  {status:<7} {row.chapter} {row.label}: {row.words} (smallest margin {margin})")
    print(f"{sum(row.fragile for row in rows)} fragile (smallest margin < {FRAGILE_MARGIN}), "
          f"{sum(not row.held for row in rows)} failed")
    return 1 if any(not row.held for row in rows) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    collect_parser = commands.add_parser("collect", help="the claims of a build into a JSON file")
    collect_parser.add_argument("build_dir", type=Path)
    collect_parser.add_argument("output", type=Path)
    check_parser = commands.add_parser("check", help="execute notebooks and print their claims")
    check_parser.add_argument("notebooks", nargs="+", type=Path)
    check_parser.add_argument("--timeout", type=int, default=240, help="seconds per cell")
    report_parser = commands.add_parser("report", help="claims over the build and the shifted-seed runs")
    report_parser.add_argument("claims", type=Path)
    report_parser.add_argument("seeds", type=Path, nargs="?")
    report_parser.add_argument("--notebooks", type=Path, default=Path("notebooks"))
    args = parser.parse_args(argv)
    if args.command == "check":
        return check(args.notebooks, args.timeout)
    if args.command == "report":
        return report(args.claims, args.seeds, args.notebooks)
    claims = collect(args.build_dir)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(claims, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    failed = [c for c in claims if not c["held"]]
    silent = sorted(
        path.stem for path in (args.build_dir / "jupyter_execute" / "notebooks").glob("*.ipynb")
        if path.stem not in {c["chapter"] for c in claims}
    )
    print(f"{len(claims)} claims written to {args.output}; {len(failed)} did not hold")
    if silent:
        print(f"chapters that state no claim through posenc.claims.Ledger: {silent}", file=sys.stderr)
    return 1 if failed or silent else 0


if __name__ == "__main__":
    sys.exit(main())
