"""Print how long each notebook took to execute in a build, against its time budget.

The build executes notebooks through a jupyter-cache; this reads the execution time it
recorded for the current version of each notebook in ``notebooks/`` (or ``--notebooks DIR``,
e.g. the student edition's), on the machine that ran the build.

Usage:
    python scripts/execution_report.py BUILD_DIR [--budget SECONDS] [--notebooks DIR]
        [--notebook-budget NAME=SECONDS ...] [--strict]

``BUILD_DIR`` is the ``_build`` folder of a build (it holds ``.jupyter_cache``). Every notebook
gets ``--budget`` seconds, except those named (by file name) in a ``--notebook-budget`` (the
Makefile names none: every chapter has the same 40 s). Exits 1 if a notebook has no cached
execution of its current version (an error of the build); a notebook over its budget is reported,
and fails only with ``--strict`` (``make bench``): a wall time depends on the machine and its
load, so the build and the tests never fail on one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jupyter_cache import get_cache

ROOT = Path(__file__).resolve().parent.parent


def notebook_budget(text: str) -> tuple[str, float]:
    """Parse ``NAME=SECONDS`` (e.g. ``08_trained_extrapolation.ipynb=240``) into its two parts."""
    name, separator, seconds = text.partition("=")
    try:
        budget = float(seconds)
    except ValueError:
        budget = float("nan")
    if not separator or not name.endswith(".ipynb") or "/" in name or not budget > 0:
        raise argparse.ArgumentTypeError(f"expected NOTEBOOK.ipynb=SECONDS with SECONDS > 0, got {text!r}")
    return name, budget


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; ``budgets`` maps a notebook's file name to its own budget in seconds."""
    parser = argparse.ArgumentParser(description="Report notebook execution times of a build.")
    parser.add_argument("build_dir", type=Path, help="the build's _build folder")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds allowed per notebook")
    parser.add_argument(
        "--notebook-budget",
        type=notebook_budget,
        action="append",
        default=[],
        metavar="NAME=SECONDS",
        help="a different budget for the notebook with this file name (repeatable)",
    )
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks", help="the notebooks the build executed")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a notebook is over its budget")
    args = parser.parse_args(argv)
    args.budgets = dict(args.notebook_budget)
    return args


def main() -> int:
    args = parse_arguments()

    cache_dir = args.build_dir / ".jupyter_cache"
    if not cache_dir.is_dir():
        print(f"no execution cache at {cache_dir}: was the book built there?", file=sys.stderr)
        return 1
    cache = get_cache(cache_dir)
    failed = over = False
    total = 0.0
    print(f"{'notebook':<56} {'seconds':>8}")
    notebooks = sorted(args.notebooks.resolve().glob("*.ipynb"))
    unknown = set(args.budgets) - {notebook.name for notebook in notebooks}
    if unknown:
        print(f"--notebook-budget names notebooks that do not exist: {sorted(unknown)}", file=sys.stderr)
        return 1
    for notebook in notebooks:
        name = f"{notebook.parent.name}/{notebook.name}"
        budget = args.budgets.get(notebook.name, args.budget)
        try:
            # Matched by content: a record of an older version of the notebook does not count.
            elapsed = cache.match_cache_file(notebook).data.get("execution_seconds")
        except KeyError:
            elapsed = None
        if elapsed is None:
            print(f"{name:<56} {'-':>8}  NOT EXECUTED by this build")
            failed = True
            continue
        verdict = f"over its budget of {budget:.0f} s" if elapsed > budget else ""
        if notebook.name in args.budgets and not verdict:
            verdict = f"(own budget: {budget:.0f} s)"
        over |= elapsed > budget
        total += elapsed
        print(f"{name:<56} {elapsed:8.1f}  {verdict}")
    verdict = "over budget" if over else "within budget"
    print(f"{'all notebooks':<56} {total:8.1f}\nbudget: {args.budget:.0f} s per notebook -> {verdict}"
          + (" (reported, not failed: pass --strict to fail)" if over and not args.strict else ""))
    return 1 if failed or (over and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
