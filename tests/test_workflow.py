"""The GitHub Actions workflow (``.github/workflows/book.yml``): valid, and doing what the README says.

``actionlint`` (pinned in ``requirements.txt``; its wheel ships the binary) checks the syntax,
the expressions, the job graph and the inputs of the actions it knows. The other tests pin the
parts that are ours: ``make test`` (which prints and checks the PDF editions), the site that
``make test`` built and checked is the one published, its PDFs are uploaded, and only a push to
``main`` deploys.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BOOK_WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def _actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    if found is None:
        pytest.fail("actionlint is missing: it is pinned in requirements.txt (make env installs it)")
    return found


def _lint(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_actionlint(), "-color=false", "-shellcheck=", "-pyflakes=", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def _workflow() -> dict:
    # YAML 1.1 reads the key `on` as True; keep it a string.
    return yaml.load(BOOK_WORKFLOW.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def _steps(job: str) -> list[dict]:
    return _workflow()["jobs"][job]["steps"]


def _make_variable(name: str) -> str:
    match = re.search(rf"^{name} := (\S+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert match, f"the Makefile defines no {name}"
    return match.group(1)


def test_workflows_pass_actionlint() -> None:
    assert BOOK_WORKFLOW in WORKFLOWS
    result = _lint(*WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    """The check is real: a misspelt key and an unknown job dependency are both reported."""
    broken = BOOK_WORKFLOW.read_text(encoding="utf-8").replace("runs-on:", "run-on:", 1)
    broken = broken.replace("needs: test", "needs: tests", 1)
    workflow_dir = tmp_path / ".github" / "workflows"
    workflow_dir.mkdir(parents=True)
    (workflow_dir / "book.yml").write_text(broken, encoding="utf-8")
    result = _lint(workflow_dir / "book.yml")
    assert result.returncode != 0
    assert "run-on" in result.stdout and "tests" in result.stdout, result.stdout


def test_the_workflow_runs_make_test_which_prints_the_pdf() -> None:
    commands = [step["run"].strip() for step in _steps("test") if "run" in step]
    assert commands == ["make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test_recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert test_recipe and "test-sites test-runs" in test_recipe.group(1)
    lanes = re.findall(r"^test-(?:sites|runs):.*\n((?:\t.*\n)+)", makefile, re.M)
    steps = re.findall(r"\$\(call timed,([\w-]+)[^)]*\)", "".join(lanes))
    every_step = ["unit", "build-test", "seeds-test", "outside-test", "browser", "student-test", "pdf-test",
                  "assignments", "i18n-check", "zh-site-test", "browser-zh", "student-zh-test", "pdf-zh-test"]
    assert sorted(steps) == sorted(every_step)
    pdf_test = re.search(r"^pdf-test:.*\n\t(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    site = "$(TEST_OUTPUT)/_build/html"
    assert pdf_test and "pdf" in pdf_test.group(1).split() and f"PDF_SITE={site}" in pdf_test.group(1)


def test_the_published_site_is_the_one_make_test_checked() -> None:
    site = f"{_make_variable('TEST_OUTPUT')}/_build/html"
    uploads = [step for step in _steps("test") if step.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert len(uploads) == 1 and uploads[0]["with"]["path"] == site
    artifacts = {step["with"]["name"]: step["with"]["path"] for step in _steps("test")
                 if step.get("uses", "").startswith("actions/upload-artifact@")}
    assert artifacts == {
        "position-in-attention-pdf": f"{_make_variable('PDF_OUTPUT')}/*.pdf",
        "position-in-attention-zh-notebooks": f"{_make_variable('ZH_NOTEBOOKS')}/notebooks/*.ipynb",
    }


def test_the_chinese_notebooks_are_published_on_the_branch_the_chinese_site_opens() -> None:
    from bookkit.i18n import ZH_NOTEBOOKS_BRANCH

    job = _workflow()["jobs"]["zh-notebooks"]
    assert job["needs"] == "test" and job["permissions"] == {"contents": "write"}
    assert job["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    download = [step for step in job["steps"] if step.get("uses", "").startswith("actions/download-artifact@")]
    assert download and download[0]["with"]["name"] == "position-in-attention-zh-notebooks"
    script = job["steps"][-1]["run"]
    assert f"git checkout -B {ZH_NOTEBOOKS_BRANCH}" in script and f"push --force origin {ZH_NOTEBOOKS_BRANCH}" in script


def test_only_a_push_to_main_deploys() -> None:
    workflow = _workflow()
    assert workflow["permissions"] == {"contents": "read"}
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "test"
    assert deploy["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert [step["uses"].split("@")[0] for step in deploy["steps"]] == ["actions/deploy-pages"]
    assert "permissions" not in workflow["jobs"]["test"], "the test job keeps the read-only token"
