"""Run every chapter again with every seed shifted: ``python -m bookkit.seed_shift --offsets 1 2``.

Each chapter seeds through :func:`posenc.seed_everything`, which adds ``POSENC_SEED_OFFSET`` to
the seed it is given. This runs every notebook top to bottom in a fresh kernel once per offset,
with the book build's environment, and fails if any cell raises: a claim a chapter asserts must
hold for other seeds, not only for the seed the text was written with.

Every run also stands in for another CPU (:data:`EMULATED_CPUS`): PyTorch's vectorised kernels
are pinned to a narrower instruction set than this machine's (``ATEN_CPU_CAPABILITY``), so
reductions such as softmax and sums round differently, as they do on a machine without AVX-512;
odd offsets also run MKL's AVX2 code path (``MKL_CBWR=AVX2``, as on a machine without AVX-512),
which changes the rounding of matrix products as well.
``tests/test_seed_shift.py`` checks that each stand-in really changes PyTorch's results here. It
reports the failing cell's error (usually the claim that a shifted seed broke) and the time
of every run.

With ``--claims-out FILE`` it writes every claim the runs stated (:mod:`posenc.claims`) as JSON:
``{chapter: {label: {offset: {"value", "margin", "held"}}}}``, with each chapter's notebook
``sha256`` under the key ``"_sha256"``, so a report can tell runs of the current text from stale
ones (:mod:`bookkit.claims`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping, MutableMapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from bookkit.claims import claims_of_notebook, execute, notebook_sha256

ROOT = Path(__file__).resolve().parents[2]


EMULATED_CPUS: dict[str, dict[str, str | None]] = {
    "AVX2 kernels, MKL AVX2 path, 1 thread": {
        "ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"
    },
    "scalar kernels, 1 thread": {
        "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": None, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"
    },
}
"""Environment settings that stand in for another CPU (None removes the variable): odd seed
offsets use the first, even offsets the second.

MKL's "compatible" path (``MKL_CBWR=COMPATIBLE``) would round products differently too, but it
doubles their cost (chapter 8: 68 s against 38 s in the build, 2026-11-28); its AVX2 path changes
them as well, at about the cost of this machine's own. Both run on one thread: a multi-threaded
run would test one more order of summation, but next to the other lane of ``make test`` it
oversubscribes the two cores (chapter 9 took 125 s on the scalar kernels with the default two
threads against 48 s for the one-thread run, 2026-11-28)."""


def emulated_cpu(offset: int) -> str:
    """The name of the :data:`EMULATED_CPUS` entry that seed offset ``offset`` runs with."""
    return list(EMULATED_CPUS)[(offset + 1) % 2]


def apply_settings(settings: Mapping[str, str | None], environ: MutableMapping[str, str]) -> None:
    """Set the variables of ``settings`` in ``environ``, removing those whose value is None."""
    for name, value in settings.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def run_notebook(path: Path, offset: int, cache_dir: Path, timeout: int) -> tuple[str | None, list[dict[str, Any]]]:
    """Execute ``path`` with ``POSENC_SEED_OFFSET=offset`` on its emulated CPU.

    Returns:
        The error text (None if every cell ran) and the claims the run stated (up to the failure).
    """
    os.environ.update(
        {"POSENC_SEED_OFFSET": str(offset), "POSENC_PROGRESS": "0", "POSENC_CACHE_DIR": str(cache_dir)}
    )
    apply_settings(EMULATED_CPUS[emulated_cpu(offset)], os.environ)
    error, notebook = execute(path, timeout)
    return error, claims_of_notebook(notebook)


def _timed_run(
    path: Path, offset: int, cache_dir: Path, timeout: int
) -> tuple[str | None, list[dict[str, Any]], float]:
    start = time.perf_counter()
    error, claims = run_notebook(path, offset, cache_dir, timeout)
    return error, claims, time.perf_counter() - start


def claims_by_run(runs: list[tuple[Path, int, list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    """``{chapter: {"_sha256": ..., label: {offset: {"value", "margin", "held"}}}}`` of the runs' claims."""
    table: dict[str, dict[str, Any]] = {}
    for path, offset, claims in sorted(runs, key=lambda run: (run[0].name, run[1])):
        chapter = table.setdefault(path.stem, {"_sha256": notebook_sha256(path)})
        for claim in claims:
            chapter.setdefault(claim["label"], {})[str(offset)] = {
                key: claim[key] for key in ("value", "margin", "held")
            }
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter in notebooks/")
    parser.add_argument("--offsets", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--timeout", type=int, default=240, help="seconds per cell")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once, each in its own process and kernel")
    parser.add_argument("--claims-out", type=Path, help="write the runs' claims to this JSON file")
    args = parser.parse_args(argv)
    if any(offset <= 0 for offset in args.offsets):
        parser.error("--offsets must be positive: offset 0 is the build itself")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    notebooks = [path.resolve() for path in args.notebooks] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    failures = []
    stated = []
    with tempfile.TemporaryDirectory(prefix="posenc-seed-") as scratch, ProcessPoolExecutor(args.jobs) as pool:
        runs = {
            pool.submit(_timed_run, path, offset, Path(scratch) / str(offset), args.timeout): (offset, path)
            for offset in args.offsets
            for path in notebooks
        }
        for future in as_completed(runs):
            offset, path = runs[future]
            error, claims, seconds = future.result()
            stated.append((path, offset, claims))
            status = "ok" if error is None else "FAILED"
            print(f"seed offset {offset} ({emulated_cpu(offset)})  {path.name:<40} {seconds:6.1f} s  {status}",
                  flush=True)
            if error is not None:
                failures.append((offset, path.name, error))
    for offset, name, error in failures:
        print(f"\n==== {name} with seed offset {offset} ====\n{error[-3000:]}")
    print(f"\nseed-shifted runs: {len(failures)} failed of {len(notebooks) * len(args.offsets)}")
    if args.claims_out is not None:
        args.claims_out.parent.mkdir(parents=True, exist_ok=True)
        args.claims_out.write_text(json.dumps(claims_by_run(stated), indent=1, ensure_ascii=False) + "\n")
        print(f"claims of {len(stated)} runs written to {args.claims_out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
