"""Print how long each notebook took to execute in a build, and enforce the time budget.

The build executes notebooks through a jupyter-cache; this reads the execution time it
recorded for the current version of each notebook in ``notebooks/`` (or ``--notebooks DIR``,
e.g. the student edition's), on the machine that ran the build.

Usage:
    python scripts/execution_report.py BUILD_DIR [--budget SECONDS] [--notebooks DIR]

``BUILD_DIR`` is the ``_build`` folder of a build (it holds ``.jupyter_cache``). Exits 1 if a
notebook has no cached execution of its current version, or took longer than the budget.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jupyter_cache import get_cache

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description="Report notebook execution times of a build.")
    parser.add_argument("build_dir", type=Path, help="the build's _build folder")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds allowed per notebook")
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks", help="the notebooks the build executed")
    args = parser.parse_args()

    cache_dir = args.build_dir / ".jupyter_cache"
    if not cache_dir.is_dir():
        print(f"no execution cache at {cache_dir}: was the book built there?", file=sys.stderr)
        return 1
    cache = get_cache(cache_dir)
    failed = False
    print(f"{'notebook':<56} {'seconds':>8}")
    for notebook in sorted(args.notebooks.resolve().glob("*.ipynb")):
        name = f"{notebook.parent.name}/{notebook.name}"
        try:
            # Matched by content: a record of an older version of the notebook does not count.
            elapsed = cache.match_cache_file(notebook).data.get("execution_seconds")
        except KeyError:
            elapsed = None
        if elapsed is None:
            print(f"{name:<56} {'-':>8}  NOT EXECUTED by this build")
            failed = True
            continue
        verdict = "over budget" if elapsed > args.budget else ""
        failed |= elapsed > args.budget
        print(f"{name:<56} {elapsed:8.1f}  {verdict}")
    print(f"budget: {args.budget:.0f} s per notebook -> {'FAILED' if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
