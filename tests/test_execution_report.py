"""The per-notebook time budget of scripts/execution_report.py, and the Makefile's budgets.

A budget is reported by the build and fails only ``make bench`` (``--strict``): no test fails on
a wall time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_cache import get_cache

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import execution_report  # noqa: E402  (a script, not a package)

TRAINING_CHAPTER = "08_trained_extrapolation.ipynb"


def _fake_build(tmp_path: Path, seconds: dict[str, float]) -> tuple[Path, Path]:
    """Notebooks and a jupyter-cache that records ``seconds[name]`` as their execution time."""
    notebooks, build = tmp_path / "notebooks", tmp_path / "_build"
    notebooks.mkdir(parents=True)
    cache = get_cache(build / ".jupyter_cache")
    for name, elapsed in seconds.items():
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"print({name!r})")])
        nbformat.write(notebook, notebooks / name)
        cache.cache_notebook_file(str(notebooks / name), data={"execution_seconds": elapsed}, check_validity=False)
    return build, notebooks


def _run(*arguments: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "scripts" / "execution_report.py"), *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_a_named_notebook_gets_its_own_budget(tmp_path):
    build, notebooks = _fake_build(tmp_path, {"01_a.ipynb": 20.0, TRAINING_CHAPTER: 200.0})
    over = _run(build, "--budget", 60, "--notebooks", notebooks, "--strict")
    assert over.returncode == 1 and "over its budget of 60 s" in over.stdout
    within = _run(build, "--budget", 60, "--notebooks", notebooks, "--notebook-budget", f"{TRAINING_CHAPTER}=240",
                  "--strict")
    assert within.returncode == 0, within.stdout
    assert "own budget: 240 s" in within.stdout
    # The other notebooks keep the common budget.
    build2, notebooks2 = _fake_build(tmp_path / "second", {"01_a.ipynb": 61.0, TRAINING_CHAPTER: 10.0})
    command = [build2, "--notebooks", notebooks2, "--notebook-budget", f"{TRAINING_CHAPTER}=240", "--strict"]
    assert _run(*command).returncode == 1


def test_a_notebook_over_budget_is_reported_not_failed_without_strict(tmp_path):
    build, notebooks = _fake_build(tmp_path, {"01_a.ipynb": 20.0, TRAINING_CHAPTER: 200.0})
    result = _run(build, "--budget", 40, "--notebooks", notebooks)
    assert result.returncode == 0, result.stdout
    assert "over its budget of 40 s" in result.stdout and "not failed" in result.stdout


def test_a_notebook_the_build_did_not_execute_fails_even_without_strict(tmp_path):
    build, notebooks = _fake_build(tmp_path, {"01_a.ipynb": 20.0})
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), notebooks / "02_b.ipynb")
    result = _run(build, "--notebooks", notebooks)
    assert result.returncode == 1 and "NOT EXECUTED" in result.stdout


def test_a_budget_for_a_notebook_that_does_not_exist_is_an_error(tmp_path):
    build, notebooks = _fake_build(tmp_path, {"01_a.ipynb": 1.0})
    result = _run(build, "--notebooks", notebooks, "--notebook-budget", "99_typo.ipynb=240")
    assert result.returncode == 1 and "99_typo.ipynb" in result.stderr


@pytest.mark.parametrize("text", ["08.ipynb", "08.ipynb=", "08.ipynb=-5", "08=240", "notebooks/08.ipynb=240"])
def test_malformed_notebook_budgets_are_rejected(text):
    with pytest.raises(SystemExit):
        execution_report.parse_arguments(["_build", "--notebook-budget", text])


def test_the_makefile_gives_every_chapter_40_seconds_and_only_bench_is_strict():
    """No chapter trains in the build (chapter 8 loads its models from the store): one budget for all,
    reported by the builds, failing only make bench."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^NOTEBOOK_BUDGET_SECONDS := 40$", makefile, flags=re.MULTILINE)
    reports = re.findall(r"execution_report\.py[^\n]*", makefile.replace("\\\n", " "))
    assert len(reports) == 4
    assert all("--budget $(NOTEBOOK_BUDGET_SECONDS)" in report and "--notebook-budget" not in report
               for report in reports)
    strict = [report for report in reports if "--strict" in report]
    assert len(strict) == 1
    bench = makefile[makefile.index("\nbench:"):].split("\n\n")[0]
    assert "--strict" in bench
