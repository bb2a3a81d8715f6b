"""The nbgrader course (``make assignments``): generated from the chapters, and graded end to end.

The nbgrader steps run when ``COURSE_DIR`` names the course ``make assignments`` generated and
``NBGRADER`` its nbgrader command (the target sets both); ``make unit`` checks only the generated
sources. The round trip autogrades, in a copy
of the course, two submissions of the sinusoidal chapter: one made from the book's solutions
(full marks) and one with a typical mistake, the ``base`` argument ignored (partial marks, and
the checker's diagnosis in the feedback the student receives); and, for every other chapter, a
submission with one typical mistake (:data:`MISTAKES`), whose feedback names it.
"""

from __future__ import annotations

import ast
import csv
import html
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from bookkit import exercise_catalog as catalog
from bookkit.assignments import POINTS, build_course
from bookkit.wire_checkers import STARTERS

ROOT = Path(__file__).resolve().parent.parent
COURSE_DIR = os.environ.get("COURSE_DIR")
NBGRADER = os.environ.get("NBGRADER")
ROUND_TRIP = "03_sinusoidal"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

needs_nbgrader = pytest.mark.skipif(COURSE_DIR is None or NBGRADER is None, reason="run through make assignments")


@pytest.fixture(scope="module")
def source_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course ``make assignments`` generated or, in ``make unit``, its sources written here."""
    if COURSE_DIR:
        return Path(COURSE_DIR)
    course = tmp_path_factory.mktemp("sources") / "course"
    build_course(course)
    return course


def _graded_exercises() -> dict[str, list[catalog.Exercise]]:
    chapters = catalog.read_book(ROOT, ROOT / "_toc.yml")
    return {
        Path(chapter.docname).name: [exercise for exercise in chapter.exercises if exercise.checkers]
        for chapter in chapters
        if any(exercise.checkers for exercise in chapter.exercises)
    }


def _cells(path: Path, kind: str) -> list[nbformat.NotebookNode]:
    """The answer (``solution``) or test (``grade``) cells of an nbgrader notebook."""
    notebook = nbformat.read(path, as_version=4)
    return [cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get(kind)]


def _nbgrader(course: Path, *args: str) -> None:
    # nbgrader runs alembic (its database migrations) from PATH: put its environment first.
    nbgrader_bin = str(Path(NBGRADER or "").absolute().parent)
    path = f"{nbgrader_bin}:{os.environ['PATH']}"
    environment = {**os.environ, "JUPYTER_PATH": str(course / "jupyter"), "PATH": path}
    result = subprocess.run(
        [str(Path(NBGRADER or "").absolute()), *args, "--log-level=WARN"],
        cwd=course, env=environment, capture_output=True, text=True, check=False, timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_checked_exercise_is_an_answer_and_a_test_worth_its_difficulty(source_course: Path) -> None:
    course = source_course
    expected = _graded_exercises()
    assert sorted(path.name for path in (course / "source").iterdir()) == sorted(expected)
    for name, exercises in expected.items():
        source = course / "source" / name / f"{name}.ipynb"
        answers, tests = _cells(source, "solution"), _cells(source, "grade")
        assert [cell.metadata.nbgrader.grade_id for cell in answers] == [f"{e.label}-answer" for e in exercises]
        assert [cell.metadata.nbgrader.points for cell in tests] == [
            POINTS[exercise.difficulty or 2] for exercise in exercises
        ]
        for answer, test, exercise in zip(answers, tests, exercises, strict=True):
            assert BEGIN in answer.source and END in answer.source
            assert exercise.checkers[0] in test.source and "report.score" in test.source
            assert test.metadata.nbgrader.locked


@needs_nbgrader
def test_student_versions_have_no_solution() -> None:
    course = Path(COURSE_DIR or "")
    for name in _graded_exercises():
        source = _cells(course / "source" / name / f"{name}.ipynb", "solution")
        release = _cells(course / "release" / name / f"{name}.ipynb", "solution")
        assert len(release) == len(source)
        for original, handed_out in zip(source, release, strict=True):
            solution = original.source.split(BEGIN)[1].split(END)[0]
            body = [line.strip() for line in solution.splitlines() if line.strip()]
            assert "raise NotImplementedError()" in handed_out.source
            assert not [line for line in body if line in handed_out.source], f"{name}: solution in the release"
        # The student version is the chapter without its solutions: no gated solution is left.
        text = (course / "release" / name / f"{name}.ipynb").read_text(encoding="utf-8")
        assert "{solution-start}" not in text and "{solution}" not in text


def _base_ignored(answer: str) -> str:
    """A typical mistake added to the book's answer: the table is always built for base 10000.

    Written as a wrapper, so it does not depend on how the chapter's solution is worded.
    """
    name = next(node.name for node in ast.parse(answer).body if isinstance(node, ast.FunctionDef))
    return (
        f"{answer}\n\n\n_book_answer = {name}\n\n\n"
        f"def {name}(seq_len, dim, base=10000.0):\n    return _book_answer(seq_len, dim)\n"
    )


#: Per chapter: an exercise, the body of a typical wrong answer to it, and what the feedback must say.
MISTAKES = {
    "01_permutation_invariance": ("ex-perm-2", "return torch.softmax((y @ w_q) @ (z @ w_k).T, -1) @ (z @ w_v)",
                                  "your scores are not divided by sqrt(d_k)"),
    "02_one_hot_and_learned": ("ex-abs-4", "return initial * (1 - lr * weight_decay) ** (steps - 1)",
                               "your exponent is T - 1"),
    "04_relative_position": ("ex-rel-4",
                             "p = torch.arange(length)\nreturn slopes[:, None, None] * (p[:, None] - p[None, :])",
                             "your bias has the wrong sign"),
    "05_rope_derivation": ("ex-ropea-5",
                           "from posenc import apply_rope\nreturn apply_rope(outputs, positions, base=base)",
                           "you rotated the outputs forward"),
    "06_rope_complex_and_implementations": ("ex-ropeb-5", "return torch.arange(num_new)", "restart at 0"),
    "07_rope_long_range": ("ex-ropec-1", "import math\nreturn 2 * math.pi * base", "you returned 2π b"),
    "08_trained_extrapolation": ("ex-trained-3",
                                 "p = positions.long().double()\n"
                                 "return -slopes[:, None, None] * (p[None, :] - p[:, None]).abs()",
                                 "converted the positions to integers"),
    "09_stretching_rope": ("ex-stretch-7", "return (base ** (-torch.arange(0, dim, 2) / dim)) * factor",
                           "you multiply the frequencies by the factor"),
}


def _with_body(body: str) -> Callable[[str], str]:
    """Replace an answer's body (after its def line and docstring) by ``body``."""

    def replace(answer: str) -> str:
        function = next(node for node in ast.parse(answer).body if isinstance(node, ast.FunctionDef))
        first = function.body[0]
        header_end = first.end_lineno if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) else (
            function.lineno)
        header = "\n".join(answer.splitlines()[:header_end])
        indent = " " * (function.col_offset + 4)
        return header + "\n" + "\n".join(indent + line for line in body.splitlines())

    return replace


def _submission(course: Path, student: str, *, mistake: Callable[[str], str] | None = None,
                chapter: str = ROUND_TRIP, only: str | None = None) -> None:
    """The released notebook with every answer taken from the book (optionally with a mistake,
    in every answer or, with ``only``, in the answer of that exercise)."""
    source = nbformat.read(course / "source" / chapter / f"{chapter}.ipynb", as_version=4)
    answers = {
        cell.metadata.nbgrader.grade_id: "\n".join(
            line for line in cell.source.splitlines() if line.strip() not in (BEGIN, END)
        )
        for cell in source.cells if cell.metadata.get("nbgrader", {}).get("solution")
    }
    released = nbformat.read(course / "release" / chapter / f"{chapter}.ipynb", as_version=4)
    for cell in released.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
            if mistake and (only is None or grade_id == f"{only}-answer"):
                cell.source = mistake(cell.source)
    target = course / "submitted" / student / chapter / f"{chapter}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(released, target)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = tmp_path_factory.mktemp("course") / "course"
    # The configuration finds the course root from its own path, so the copy is a course of its own.
    skipped = shutil.ignore_patterns("submitted", "autograded", "feedback")
    shutil.copytree(Path(COURSE_DIR or ""), course, ignore=skipped)
    _submission(course, "solved")
    _submission(course, "mistaken", mistake=_base_ignored)
    chapters = [name for name in MISTAKES if (course / "release" / name).exists()]
    for chapter in chapters:
        label, body, _ = MISTAKES[chapter]
        _submission(course, "mistaken", mistake=_with_body(body), chapter=chapter, only=label)
    for chapter in [ROUND_TRIP, *chapters]:
        _nbgrader(course, "autograde", chapter, "--create")
        _nbgrader(course, "generate_feedback", chapter)
    _nbgrader(course, "export", "--to", str(course / "grades.csv"))
    return course


def _scores(course: Path) -> dict[str, tuple[float, float]]:
    with (course / "grades.csv").open(encoding="utf-8") as handle:
        return {
            row["student_id"]: (float(row["score"]), float(row["max_score"]))
            for row in csv.DictReader(handle) if row["assignment"] == ROUND_TRIP
        }


@needs_nbgrader
def test_the_books_solutions_get_full_marks(graded: Path) -> None:
    score, max_score = _scores(graded)["solved"]
    assert max_score == sum(POINTS[e.difficulty or 2] for e in _graded_exercises()[ROUND_TRIP])
    assert score == max_score


@needs_nbgrader
def test_a_typical_mistake_gets_partial_marks_and_the_checkers_diagnosis(graded: Path) -> None:
    score, max_score = _scores(graded)["mistaken"]
    assert 0 < score < max_score
    feedback = (graded / "feedback" / "mistaken" / ROUND_TRIP / f"{ROUND_TRIP}.html").read_text(encoding="utf-8")
    assert "your function ignores its base argument" in feedback
    assert "failed 3 of 8 hidden cases" in feedback


@needs_nbgrader
@pytest.mark.parametrize("chapter", sorted(MISTAKES))
def test_every_chapter_feedback_names_a_typical_mistake(graded: Path, chapter: str) -> None:
    label, _, diagnosis = MISTAKES[chapter]
    assert label in {exercise.label for exercise in _graded_exercises()[chapter]}
    feedback = html.unescape(
        (graded / "feedback" / "mistaken" / chapter / f"{chapter}.html").read_text(encoding="utf-8"))
    assert diagnosis in feedback
    assert "first differing input: fn(" in feedback or "should have frequency" in feedback


def test_every_chapter_mistake_is_named_by_its_checker(source_course: Path) -> None:
    """Without nbgrader: each chapter's mistaken answer, run with its test cell, gets its diagnosis.

    The namespace has posenc but no checker: the test cell imports its own (as the starter did).
    """
    import math

    import torch

    import posenc

    cells = {label: (answer, test) for label, answer, test in _answer_and_test_cells(source_course)}
    checked = [(label, body, diagnosis) for label, body, diagnosis in MISTAKES.values() if label in cells]
    assert checked  # the others are not graded until bookkit.wire_checkers has added their starter
    for label, body, diagnosis in checked:
        answer, test = cells[label]
        namespace = {**{name: getattr(posenc, name) for name in posenc.__all__}, "math": math, "torch": torch}
        exec(compile(_with_body(body)(answer), f"<{label}-mistake>", "exec"), namespace)  # noqa: S102
        *statements, _ = test.splitlines()
        exec(compile("\n".join(statements), f"<{label}-test>", "exec"), namespace)  # noqa: S102
        assert not namespace["report"].passed and diagnosis in str(namespace["report"]), str(namespace["report"])


def test_the_instructor_guide_lists_every_checked_exercise() -> None:
    """The guide's table of checkers is the catalog's: exercise, checker, stars and points."""
    import posenc.exercises

    guide = (ROOT / "book" / "instructor_guide.md").read_text(encoding="utf-8")
    assert "```{checked-exercises}" in guide  # the table, generated from the chapters
    table = catalog.checked_exercises_markdown(catalog.read_book(ROOT, ROOT / "_toc.yml"))
    rows = re.findall(r"^\| \{ref\}`(ex-[\w-]+)` \| `(check_\w+)` \| (★+) \| (\d) \|$", table, flags=re.MULTILINE)
    expected = [
        (exercise.label, checker, exercise.stars, str(POINTS[exercise.difficulty or 2]))
        for exercises in _graded_exercises().values()
        for exercise in exercises
        for checker in exercise.checkers
    ]
    assert rows == expected
    unused = set(posenc.exercises.__all__) - {"CheckResult"} - {checker for _, checker, _, _ in rows}
    to_wire = {starter.checker for starter in STARTERS}  # used once bookkit.wire_checkers has run
    assert "check_alibi_slopes" in unused and unused <= {"check_alibi_slopes", *to_wire}
    assert "`check_alibi_slopes`" in guide


def _answer_and_test_cells(course: Path) -> list[tuple[str, str, str]]:
    """``(label, answer source, test source)`` of every graded exercise of the course."""
    cells = []
    for name in _graded_exercises():
        notebook = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
        graded = [cell for cell in notebook.cells if "nbgrader" in cell.metadata]
        for answer, test in zip(graded[::2], graded[1::2], strict=True):
            label = answer.metadata.nbgrader.grade_id.removesuffix("-answer")
            cells.append((label, answer.source, test.source))
    return cells


#: Answers that call a function the chapter defined earlier (graded in the notebook, not here).
USES_CHAPTER_CODE = {"ex-abs-5": "roberta_positions", "ex-perm-2": "attention", "ex-ropea-5": "rope_elementwise"}


def test_every_answer_taken_from_the_book_passes_its_checker(source_course: Path) -> None:
    """Run each answer cell (the book's solution) and its test cell with the chapters' imports.

    Full marks for every answer that needs only posenc, torch and math; the others name the
    chapter function they call.
    """
    import math

    import torch
    from torch import nn

    import posenc
    import posenc.exercises

    for label, answer, test in _answer_and_test_cells(source_course):
        namespace = {
            **{name: getattr(posenc, name) for name in posenc.__all__},
            **{name: getattr(posenc.exercises, name) for name in posenc.exercises.__all__},
            "math": math, "torch": torch, "nn": nn, "BASE": 10000.0,
        }
        exec(compile(answer, f"<{label}-answer>", "exec"), namespace)  # noqa: S102 (the book's own code)
        *statements, points = test.splitlines()
        exec(compile("\n".join(statements), f"<{label}-test>", "exec"), namespace)  # noqa: S102
        if label in USES_CHAPTER_CODE:
            assert f"name '{USES_CHAPTER_CODE[label]}' is not defined" in str(namespace["report"])
            continue
        assert namespace["report"].passed, f"{label}: {namespace['report']}"
        assert eval(points, namespace) == int(points.split(" * ")[0])  # noqa: S307 (full marks)
