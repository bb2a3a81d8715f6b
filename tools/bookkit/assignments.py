"""nbgrader assignments from the chapters (``make assignments``).

Every chapter with a coding exercise that a checker of :mod:`posenc.exercises` grades becomes
one nbgrader assignment: the chapter as in the student edition (every solution removed, see
:func:`bookkit.exercise_catalog.strip_solutions`), in which the starter cell of each such
exercise is replaced by

- an *autograded answer* cell: the starter's ``def`` line and docstring, then the body of the
  function from the book's solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
  (``nbgrader generate_assignment`` replaces it with ``raise NotImplementedError()``), and
- a locked *autograder test* cell: the starter's checker call, whose report is printed (so the
  diagnosis is in the student's feedback) and asserted, worth :data:`~bookkit.points.POINTS` by difficulty.

The course directory (``source/`` and ``nbgrader_config.py``) is written here; ``make
assignments`` then runs ``nbgrader generate_assignment`` in nbgrader's own environment.

Usage:
    python -m bookkit.assignments COURSE_DIR
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat

from bookkit.exercise_catalog import SOLUTION_TAG, STARTER_TAG, read_book, strip_solutions
from bookkit.points import DEFAULT_DIFFICULTY, POINTS

ROOT = Path(__file__).resolve().parents[2]  # tools/bookkit/ -> the repository
NBGRADER_SCHEMA = 3
_EXERCISE_LABEL = re.compile(r"^```\{exercise\}.*?^:label: (?P<label>[\w-]+)", re.MULTILINE | re.DOTALL)
_SOLUTION_START = re.compile(r"\{solution-start\}\s+(?P<label>[\w-]+)")

NBGRADER_CONFIG = '''\
# nbgrader configuration of the course generated from "Position in Attention" (make assignments).
c = get_config()  # noqa: F821 (provided by nbgrader)
c.CourseDirectory.course_id = "position-in-attention"
c.CourseDirectory.root = __file__.rsplit("/", 1)[0]
# The chapters run their figures and checks top to bottom: allow a slow cell.
c.ExecutePreprocessor.timeout = 300
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}
'''


@dataclass(frozen=True)
class GradedExercise:
    """One coding exercise turned into an answer cell and a test cell."""

    label: str
    function: str
    checker_call: str
    points: int
    imports: str = ""
    """The test cell's import of its checker (the starter cell that imported it is replaced)."""


def _nbgrader(grade_id: str, *, solution: bool, grade: bool, points: int | None = None) -> dict:
    metadata = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": NBGRADER_SCHEMA,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        metadata["points"] = points
    return metadata


def _starter_parts(source: str, label: str) -> tuple[ast.FunctionDef, str]:
    """The function the starter asks for and its checker call (as written in the starter)."""
    tree = ast.parse(source)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    calls = [
        node for node in tree.body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name) and node.value.func.id.startswith("check_")
    ]
    if len(functions) != 1 or len(calls) != 1:
        raise ValueError(f"{label}: the starter cell must define one function and call one checker")
    return functions[0], ast.get_source_segment(source, calls[0]) or ""


def _solution_body(sources: list[str], starter: ast.FunctionDef, checker: str, label: str) -> str:
    """The solution as the body of the starter's function, dedented.

    Either the body of ``def <function>`` in the solution cells (without its docstring) or, when
    the solution instead shows that a function of the chapter passes the checker (its last
    call of the same checker), a call of that function with the starter's arguments.
    """
    function = starter.name
    for source in sources:
        tree = ast.parse(source)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == function:
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]  # the starter's docstring is kept instead
                lines = source.splitlines()
                return textwrap.dedent("\n".join(lines[body[0].lineno - 1 : node.end_lineno]))
    passing = [
        node.args[0].id
        for source in sources
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == checker
        and node.args and isinstance(node.args[0], ast.Name)
    ]
    if not passing:
        reference = reference_body(checker, starter)
        if reference is None:
            raise ValueError(f"{label}: no solution cell defines {function}() or checks a function with {checker}")
        return reference
    arguments = ", ".join(argument.arg for argument in starter.args.args)
    return f"return {passing[-1]}({arguments})"


def reference_body(checker: str, starter: ast.FunctionDef) -> str | None:
    """The body of the checker's reference implementation, for an exercise whose solution is prose.

    The newer checkers of :mod:`posenc.exercises` compare with a function ``reference_<name>`` of
    their family module (``check_cross_attention`` with ``reference_cross_attention``); its body,
    with the imports it needs and its parameters renamed to the starter's, is the model answer.
    None if there is no such function or its parameters do not line up with the starter's.
    """
    import importlib
    import inspect
    import pkgutil

    import posenc.exercises

    name = "reference_" + checker.removeprefix("check_")
    for module_info in pkgutil.iter_modules(posenc.exercises.__path__):
        module = importlib.import_module(f"posenc.exercises.{module_info.name}")
        reference = getattr(module, name, None)
        if reference is None:
            continue
        source = textwrap.dedent(inspect.getsource(reference))
        node = ast.parse(source).body[0]
        if not isinstance(node, ast.FunctionDef) or len(node.args.args) != len(starter.args.args):
            return None
        body = node.body[1:] if isinstance(node.body[0], ast.Expr) else node.body  # without the docstring
        lines = source.splitlines()
        code = textwrap.dedent("\n".join(lines[body[0].lineno - 1 : node.end_lineno]))
        renames = [
            f"{ours.arg} = {theirs.arg}"
            for ours, theirs in zip(node.args.args, starter.args.args, strict=True) if ours.arg != theirs.arg
        ]
        return "\n".join(["import math", "", "import torch", "", *renames, code])
    return None


def answer_source(starter: str, solution_body: str, label: str) -> str:
    """The answer cell: the starter's signature and docstring, the solution between the markers."""
    function, _ = _starter_parts(starter, label)
    lines = starter.splitlines()
    body = function.body
    header_end = body[0].end_lineno if isinstance(body[0], ast.Expr) and isinstance(
        body[0].value, ast.Constant
    ) else function.lineno
    indent = " " * (function.col_offset + 4)
    header = "\n".join(lines[function.lineno - 1 : header_end])
    solution = textwrap.indent(solution_body, indent)
    return f"{header}\n{indent}### BEGIN SOLUTION\n{solution}\n{indent}### END SOLUTION"


def test_source(exercise: GradedExercise) -> str:
    """The test cell: the checker's report, then the points earned as the cell's value.

    nbgrader takes a number shown by a test cell as partial credit: here the points times the
    share of the checker's hidden cases passed (:attr:`posenc.exercises.CheckResult.score`).
    """
    return (
        f"# Autograded: {exercise.label}, {exercise.points} point(s), in proportion to the\n"
        "# hidden cases passed. The report below says what went wrong.\n"
        + (f"{exercise.imports}\n" if exercise.imports else "")
        + f"report = {exercise.checker_call}\n"
        "print(report)\n"
        f"{exercise.points} * report.score"
    )


def assignment_notebook(
    path: Path, difficulties: dict[str, int | None]
) -> tuple[nbformat.NotebookNode, list[GradedExercise]]:
    """The chapter at ``path`` as an nbgrader source notebook, and the exercises it grades."""
    notebook = nbformat.read(path, as_version=4)
    current: str | None = None  # the label of the exercise whose cells follow
    solutions: dict[str, list[str]] = {}
    starters: dict[int, str] = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            # The exercise whose work follows: the last exercise or gated solution opened here.
            events = [(m.start(), m.group("label")) for m in _SOLUTION_START.finditer(cell.source)]
            events += [(m.start(), m.group("label")) for m in _EXERCISE_LABEL.finditer(cell.source)]
            if events:
                current = max(events)[1]
        elif STARTER_TAG in cell.metadata.get("tags", []) and current and "check_" in cell.source:
            starters[index] = current
        elif SOLUTION_TAG in cell.metadata.get("tags", []) and current:
            solutions.setdefault(current, []).append(cell.source)

    stripped, _ = strip_solutions(notebook)
    graded: list[GradedExercise] = []
    cells = []
    starter_sources = {notebook.cells[index].source: label for index, label in starters.items()}
    for cell in stripped.cells:
        label = starter_sources.get(cell.source) if cell.cell_type == "code" else None
        if label is None:
            cells.append(cell)
            continue
        function, call = _starter_parts(cell.source, label)
        difficulty = difficulties.get(label) or DEFAULT_DIFFICULTY
        checker_name = call.split("(", 1)[0]
        imports = f"from posenc.exercises import {checker_name}"  # the starter's import is not kept
        exercise = GradedExercise(label, function.name, call, POINTS[difficulty], imports)
        checker = call.split("(", 1)[0]
        body = _solution_body(solutions.get(label, []), function, checker, label)
        answer = nbformat.v4.new_code_cell(
            answer_source(cell.source, body, label),
            metadata={"nbgrader": _nbgrader(f"{label}-answer", solution=True, grade=False)},
        )
        test = nbformat.v4.new_code_cell(
            test_source(exercise),
            metadata={"nbgrader": _nbgrader(f"{label}-test", solution=False, grade=True, points=exercise.points)},
        )
        cells += [answer, test]
        graded.append(exercise)
    stripped.cells = cells
    for cell in stripped.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return stripped, graded


def write_kernel(course: Path, python: Path) -> Path:
    """A ``python3`` kernel spec running ``python`` (the book's environment), for nbgrader.

    nbgrader runs in its own environment; with ``JUPYTER_PATH`` set to the returned directory it
    executes the notebooks with the book's Python, where posenc, torch and the chapters' packages are.
    """
    kernel_dir = course / "jupyter" / "kernels" / "python3"
    kernel_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Position in Attention)",
        "language": "python",
    }
    (kernel_dir / "kernel.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    return course / "jupyter"


def build_course(course: Path) -> dict[str, list[GradedExercise]]:
    """Write ``course/source/<chapter>/<chapter>.ipynb`` for every chapter with graded exercises."""
    source_dir = course / "source"
    if course.exists():
        shutil.rmtree(course)
    source_dir.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(NBGRADER_CONFIG, encoding="utf-8")
    assignments = {}
    for chapter in read_book(ROOT, ROOT / "_toc.yml"):
        if not any(exercise.checkers for exercise in chapter.exercises):
            continue
        difficulties = {exercise.label: exercise.difficulty for exercise in chapter.exercises}
        notebook, graded = assignment_notebook(ROOT / f"{chapter.docname}.ipynb", difficulties)
        if not graded:
            continue
        name = Path(chapter.docname).name
        (source_dir / name).mkdir()
        nbformat.write(notebook, source_dir / name / f"{name}.ipynb")
        assignments[name] = graded
    return assignments


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("course", type=Path, help="the nbgrader course directory to write")
    parser.add_argument("--kernel-python", type=Path, default=Path(sys.executable),
                        help="the Python that runs the notebooks (default: this one)")
    args = parser.parse_args()
    assignments = build_course(args.course.resolve())
    write_kernel(args.course.resolve(), args.kernel_python.absolute())
    for name, graded in assignments.items():
        points = sum(exercise.points for exercise in graded)
        print(f"{name}: {', '.join(exercise.label for exercise in graded)} ({points} point{'s' * (points != 1)})")
    (args.course / "assignments.txt").write_text(" ".join(assignments) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
