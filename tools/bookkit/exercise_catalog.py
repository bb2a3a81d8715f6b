"""The book's exercises, read from the chapter notebooks.

One parser serves three users:

- the ``{exercise-index}`` directive (the exercise index page): every exercise by chapter, with
  its number, title, kind and auto-checker;
- the ``{study-plan}`` directive (the instructor guide): per chapter, the amount of prose and
  code, the exercises by kind and a suggested study time computed from a stated rule;
- the ``{checked-exercises}`` directive (the instructor guide): every exercise with a checker, with
  its difficulty and its points in the nbgrader course;
- :mod:`bookkit.student_edition`: :func:`strip_solutions` removes every solution from a
  notebook, so the student edition contains the exercises but no solution text.

Conventions the chapters follow (``tests/test_notebooks.py`` checks them):

- an exercise is a fenced ``{exercise}`` directive with a ``:label:`` and a line
  ``*Kind: proof · Difficulty: ★★*`` (kinds: proof, code, find-the-bug, conceptual, joined by
  "and"; difficulty one to three stars, see :data:`DIFFICULTIES`);
- a solution is a fenced ``{solution}`` directive, or a gated one: a ``{solution-start}`` block,
  the solution's cells, then a ``{solution-end}`` block; every code cell of a gated solution is
  tagged ``solution``;
- a code cell tagged ``exercise-starter`` (placed after its exercise, before the solution) holds
  the stub a student fills in, and usually calls a checker of :mod:`posenc.exercises`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nbformat
import yaml

from bookkit.points import DEFAULT_DIFFICULTY, POINTS

KINDS = ("proof", "code", "find-the-bug", "conceptual")
#: Difficulty levels, by number of stars.
DIFFICULTIES = {
    1: "routine: applies the chapter directly",
    2: "needs thought: combines ideas or adds a step the chapter did not take",
    3: "hard or open-ended: a new argument, or an experiment to design",
}
#: Practice time of an exercise relative to a two-star one of the same kind.
DIFFICULTY_TIME_FACTOR = {1: 0.5, 2: 1.0, 3: 2.0}
SOLUTION_TAG = "solution"
STARTER_TAG = "exercise-starter"

#: The rule behind the suggested study times of the instructor guide.
PROSE_WORDS_PER_MINUTE = 100
CODE_LINES_PER_MINUTE = 8
MINUTES_PER_EXERCISE = {"proof": 30, "code": 25, "find-the-bug": 20, "conceptual": 15}

#: Why a coding exercise has no auto-checker: its answer is not a function or a number.
NO_CHECKER_REASONS = {
    "ex-abs-3": "no checker: a prediction and a figure from a training run, read by the student",
    "ex-trained-4": "no checker: a prediction and a training experiment, compared by the student",
}
#: What the answer of an exercise without a checker is, by its first kind.
_ANSWER_BY_KIND = {
    "proof": "no checker: a proof, on paper",
    "conceptual": "no checker: an argument in words",
    "find-the-bug": "no checker: the bug is found and explained in words",
    "code": "no checker",
}

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}[ \t]*(?P<argument>.*)$")
_KIND = re.compile(
    r"^\*Kind: (?P<kinds>[^*·]+?)\.?(?:\s*·\s*Difficulty:\s*(?P<stars>★{1,3})\.?)?\*\s*$"
)
_CHECKER_CALL = re.compile(r"\b(check_\w+)\(")
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)


class CatalogError(ValueError):
    """A chapter does not follow the exercise conventions described in this module."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: where it is, what it is called and what kind of work it asks for."""

    docname: str
    label: str
    title: str
    kinds: tuple[str, ...]
    checkers: tuple[str, ...]
    difficulty: int | None = None

    @property
    def stars(self) -> str:
        return "★" * self.difficulty if self.difficulty else "–"


@dataclass(frozen=True)
class Chapter:
    """A chapter notebook with its exercises and the size of its teaching part."""

    docname: str
    title: str
    exercises: tuple[Exercise, ...]
    prose_words: int
    code_lines: int
    #: Its number on the site (Jupyter Book numbers the chapters of the numbered parts, across
    #: parts); None for a notebook in an unnumbered part, such as the tour, which has no exercises.
    number: int | None = None

    def count(self, kind: str) -> int:
        return sum(kind in exercise.kinds for exercise in self.exercises)

    def suggested_minutes(self) -> int:
        reading = self.prose_words / PROSE_WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE
        practice = sum(
            MINUTES_PER_EXERCISE[kind] * DIFFICULTY_TIME_FACTOR[exercise.difficulty or 2]
            for exercise in self.exercises
            for kind in exercise.kinds
        )
        return 5 * math.ceil((reading + practice) / 5)


# ---- fenced directives -----------------------------------------------------------------------


def _closing_line(lines: Sequence[str], start: int, fence: str) -> int:
    """Index of the line closing the fence opened at ``lines[start]`` (CommonMark's rule)."""
    char = fence[0]
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if len(stripped) >= len(fence) and set(stripped) == {char}:
            return index
    raise CatalogError(f"the fence opened by {lines[start]!r} is never closed")


def _fenced_blocks(lines: Sequence[str]) -> Iterator[tuple[str, str, list[str]]]:
    """Top-level fenced directives of a Markdown cell as ``(name, argument, body lines)``."""
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        end = _closing_line(lines, index, match["fence"])
        yield match["name"], match["argument"].strip(), list(lines[index + 1 : end])
        index = end + 1


def _option(body: Sequence[str], name: str) -> str | None:
    for line in body:
        if not line.startswith(":"):
            break
        if line.startswith(f":{name}:"):
            return line[len(name) + 2 :].strip()
    return None


def _kinds(body: Sequence[str], label: str) -> tuple[tuple[str, ...], int | None]:
    """The kinds and the difficulty (number of stars, None if not given) of an exercise."""
    for line in body:
        match = _KIND.match(line.strip())
        if match:
            kinds = tuple(kind.strip() for kind in re.split(r",| and ", match["kinds"]) if kind.strip())
            unknown = [kind for kind in kinds if kind not in KINDS]
            if unknown:
                raise CatalogError(f"exercise {label}: unknown kind(s) {unknown}, expected some of {KINDS}")
            return kinds, len(match["stars"]) if match["stars"] else None
    raise CatalogError(f"exercise {label} has no '*Kind: ...*' line (kinds: {', '.join(KINDS)})")


# ---- chapters --------------------------------------------------------------------------------


def _title(notebook: Any) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise CatalogError("the notebook has no '# Title' heading")


def read_chapter(path: Path, docname: str) -> Chapter:
    """Read the exercises of one chapter notebook and measure its teaching part.

    Raises:
        CatalogError: if an exercise has no label or no kind, or a fence is not closed.
    """
    notebook = nbformat.read(path, as_version=4)
    exercises: list[dict[str, Any]] = []
    prose_words = code_lines = 0
    in_exercises = False
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":
            if re.search(r"^## Exercises\s*$", cell.source, re.MULTILINE):
                in_exercises = True
            for name, argument, body in _fenced_blocks(cell.source.splitlines()):
                if name == "exercise":
                    label = _option(body, "label")
                    if not label:
                        raise CatalogError(f"{docname}: exercise {argument!r} has no :label:")
                    kinds, difficulty = _kinds(body, label)
                    exercises.append(
                        {"label": label, "title": argument, "kinds": kinds, "difficulty": difficulty, "checkers": []}
                    )
            if not in_exercises:
                prose_words += len(_DISPLAY_MATH.sub(" ", cell.source).split())
        elif cell.cell_type == "code":
            if STARTER_TAG in tags:
                if not exercises:
                    raise CatalogError(f"{docname}: a cell tagged {STARTER_TAG!r} comes before any exercise")
                exercises[-1]["checkers"].extend(_CHECKER_CALL.findall(cell.source))
            elif not in_exercises and "remove-cell" not in tags:
                code_lines += sum(bool(line.strip()) for line in cell.source.splitlines())
    return Chapter(
        docname=docname,
        title=_title(notebook),
        exercises=tuple(
            Exercise(
                docname,
                entry["label"],
                entry["title"],
                entry["kinds"],
                tuple(dict.fromkeys(entry["checkers"])),
                entry["difficulty"],
            )
            for entry in exercises
        ),
        prose_words=prose_words,
        code_lines=code_lines,
    )


def chapter_docnames(toc_path: Path) -> list[str]:
    """Docnames of the notebooks listed in a Jupyter Book table of contents, in reading order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    docnames: list[str] = []

    def visit(entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            if "file" in entry and entry["file"].startswith("notebooks/"):
                docnames.append(entry["file"].removesuffix(".ipynb"))
            for key in ("parts", "chapters", "sections"):
                visit(entry.get(key, []))

    visit([toc])
    return docnames


def chapter_numbers(toc_path: Path) -> dict[str, int]:
    """Docname -> number of every notebook in a numbered part of a table of contents.

    Jupyter Book numbers the chapters of the parts marked ``numbered: true`` in one sequence
    across parts; a notebook in an unnumbered part (the tour, in "Getting started") has none.
    """
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    numbers: dict[str, int] = {}
    count = 0
    for part in toc.get("parts", []):
        if not part.get("numbered"):
            continue
        for entry in part.get("chapters", []):
            count += 1
            if entry.get("file", "").startswith("notebooks/"):
                numbers[entry["file"].removesuffix(".ipynb")] = count
    return numbers


def read_book(root: Path, toc_path: Path) -> list[Chapter]:
    """Every notebook of the book at ``root``, in the order of its table of contents, numbered."""
    numbers = chapter_numbers(toc_path)
    return [
        replace(read_chapter(root / f"{docname}.ipynb", docname), number=numbers.get(docname))
        for docname in chapter_docnames(toc_path)
    ]


def _chapter_name(chapter: Chapter) -> str:
    """``chapter 3, {doc}`/notebooks/03_sinusoidal``` (no number for an unnumbered notebook)."""
    number = f"chapter {chapter.number}, " if chapter.number is not None else ""
    return f"{number}{{doc}}`/{chapter.docname}`"


# ---- the student edition -------------------------------------------------------------------------


def strip_solutions(notebook: Any) -> tuple[Any, list[str]]:
    """Return a copy of ``notebook`` without solutions, and the labels of the removed solutions.

    Plain ``{solution}`` blocks are cut out of their Markdown cells; a gated solution is removed
    from its ``{solution-start}`` block to its ``{solution-end}`` block, with every cell between.
    Text after the end block (usually the next exercise) is kept. Cells left empty are dropped.

    Raises:
        CatalogError: if a gated solution is not closed, a code cell inside one is not tagged
            ``solution``, or a cell tagged ``solution`` lies outside every solution.
    """
    stripped = nbformat.from_dict(nbformat.v4.new_notebook(metadata=notebook.metadata))
    removed: list[str] = []
    open_solution: str | None = None
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "markdown":
            if open_solution is None and SOLUTION_TAG in tags:
                raise CatalogError(f"a cell tagged {SOLUTION_TAG!r} lies outside every solution:\n{cell.source}")
            if open_solution is not None and SOLUTION_TAG not in tags:
                raise CatalogError(
                    f"a code cell of the gated solution {open_solution} is not tagged {SOLUTION_TAG!r}:\n"
                    f"{cell.source}"
                )
            if open_solution is None:
                stripped.cells.append(nbformat.from_dict(cell))
            continue
        lines = cell.source.splitlines()
        kept: list[str] = []
        index = 0
        while index < len(lines):
            match = _FENCE.match(lines[index])
            if open_solution is not None:
                if match and match["name"] == "solution-end":
                    index = _closing_line(lines, index, match["fence"]) + 1
                    open_solution = None
                else:
                    index += 1
                continue
            if match and match["name"] in ("solution", "solution-start"):
                end = _closing_line(lines, index, match["fence"])
                removed.append(_option(lines[index + 1 : end], "label") or match["argument"])
                if match["name"] == "solution-start":
                    open_solution = match["argument"]
                index = end + 1
                continue
            kept.append(lines[index])
            index += 1
        source = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
        if source:
            new_cell = nbformat.from_dict(cell)
            new_cell.source = source
            stripped.cells.append(new_cell)
    if open_solution is not None:
        raise CatalogError(f"the gated solution {open_solution} has no {{solution-end}}")
    return stripped, removed


# ---- directives ------------------------------------------------------------------------------------


def _kind_text(kinds: Sequence[str]) -> str:
    return ", ".join(kinds)


def checker_text(exercise: Exercise) -> str:
    """The index's auto-check column: the checkers, or why there is none."""
    if exercise.checkers:
        return ", ".join(f"`{name}`" for name in exercise.checkers)
    if exercise.label in NO_CHECKER_REASONS:
        return NO_CHECKER_REASONS[exercise.label]
    kind = "code" if "code" in exercise.kinds else exercise.kinds[0]
    return _ANSWER_BY_KIND[kind]


def coverage(chapters: Sequence[Chapter]) -> tuple[int, int]:
    """(coding exercises with a checker, coding exercises): an exercise of kind code counts."""
    coding = [exercise for chapter in chapters for exercise in chapter.exercises if "code" in exercise.kinds]
    return sum(bool(exercise.checkers) for exercise in coding), len(coding)


def _hours(minutes: int) -> str:
    return f"{minutes // 60} h {minutes % 60:02d} min"


def exercise_index_markdown(chapters: Sequence[Chapter]) -> str:
    """The exercise index: one table per chapter."""
    total = sum(len(chapter.exercises) for chapter in chapters)
    counts = ", ".join(
        f"{sum(chapter.count(kind) for chapter in chapters)} {kind}" for kind in KINDS
    )
    by_difficulty = ", ".join(
        f"{sum(exercise.difficulty == stars for chapter in chapters for exercise in chapter.exercises)} "
        f"{'★' * stars}"
        for stars in DIFFICULTIES
    )
    legend = "; ".join(f"{'★' * stars} {meaning}" for stars, meaning in DIFFICULTIES.items())
    checked, coding = coverage(chapters)
    all_checked = sum(bool(exercise.checkers) for chapter in chapters for exercise in chapter.exercises)
    with_exercises = [chapter for chapter in chapters if chapter.exercises]  # not the tour
    parts = [
        f"The book has {total} exercises in {len(with_exercises)} chapters. By kind: {counts} "
        f"(an exercise of two kinds is counted under both). By difficulty: {by_difficulty} "
        f"({legend}). Auto-checkers: {checked} of the {coding} exercises with code have one, and "
        f"{all_checked} exercises in all (some find-the-bug exercises ask for a fixed function)."
    ]
    for chapter in with_exercises:
        rows = [
            "| Exercise | Label | Title | Kind | Difficulty | Auto-check |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for exercise in chapter.exercises:
            rows.append(
                f"| {{ref}}`{exercise.label}` | `{exercise.label}` | {exercise.title} | "
                f"{_kind_text(exercise.kinds)} | {exercise.stars} | {checker_text(exercise)} |"
            )
        parts.append(_captioned_table(f"The exercises of {_chapter_name(chapter)}.", rows))
    return "\n\n".join(parts)


def checked_exercises_markdown(chapters: Sequence[Chapter]) -> str:
    """The instructor guide's table: every exercise with a checker, its stars and its nbgrader points."""
    rows = ["| exercise | checker | difficulty | points |", "| --- | --- | --- | --- |"]
    for chapter in chapters:
        for exercise in chapter.exercises:
            for checker in exercise.checkers:
                points = POINTS[exercise.difficulty or DEFAULT_DIFFICULTY]
                rows.append(f"| {{ref}}`{exercise.label}` | `{checker}` | {exercise.stars} | {points} |")
    return "\n".join([":::{table} The exercises with an automatic checker", ":name: tab-guide-checkers", *rows, ":::"])


def _captioned_table(caption: str, rows: Sequence[str]) -> str:
    """A Markdown table inside a ``{table}`` directive: the page shows it with a numbered caption.

    A colon fence, as the caption may hold roles (a backtick fence's first line cannot hold backticks).
    """
    return "\n".join([f":::{{table}} {caption}", *rows, ":::"])


def study_plan_markdown(chapters: Sequence[Chapter]) -> str:
    """The instructor guide's table: workload per numbered chapter and a suggested time.

    The tour (an unnumbered notebook without exercises) is left out: it is read before a course
    starts, and its code is the hidden drawing of its figures, which the rule would count as reading.
    """
    chapters = [chapter for chapter in chapters if chapter.number is not None]
    rule = (
        f"Suggested times follow one rule: prose at {PROSE_WORDS_PER_MINUTE} words per minute, code at "
        f"{CODE_LINES_PER_MINUTE} lines per minute, and per exercise "
        + ", ".join(f"{minutes} min for {kind}" for kind, minutes in MINUTES_PER_EXERCISE.items())
        + " at two stars, "
        + ", ".join(f"×{factor:g} at {'★' * stars}" for stars, factor in DIFFICULTY_TIME_FACTOR.items() if stars != 2)
        + " (an exercise of two kinds counts both), rounded up to 5 minutes. Treat them as a "
        "starting point for planning, not as a measurement."
    )
    rows = [
        "| Chapter | Prose (words) | Code (lines) | Exercises | Difficulty | Suggested time |",
        "| --- " * 6 + "|",
    ]
    minutes = [chapter.suggested_minutes() for chapter in chapters]
    for chapter, chapter_minutes in zip(chapters, minutes, strict=True):
        exercises = ", ".join(f"{chapter.count(kind)} {kind}" for kind in KINDS if chapter.count(kind))
        levels = [exercise.difficulty for exercise in chapter.exercises]
        difficulty = ", ".join(f"{levels.count(stars)} {'★' * stars}" for stars in DIFFICULTIES if stars in levels)
        number = f"{chapter.number}. " if chapter.number is not None else ""
        rows.append(
            f"| {number}{{doc}}`/{chapter.docname}` | {chapter.prose_words:,} | {chapter.code_lines} | "
            f"{exercises or '–'} | {difficulty or '–'} | {_hours(chapter_minutes)} |"
        )
    rows.append(f"| **Whole book** | | | | | **{_hours(sum(minutes))}** |")
    caption = "Each chapter's reading and exercises, and a suggested time for both."
    return rule + "\n\n" + _captioned_table(caption, rows)


def setup(app: Any) -> dict[str, Any]:
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    class _CatalogDirective(SphinxDirective):
        has_content = False
        render: Any = None

        def run(self) -> list[Any]:
            root = Path(self.env.srcdir)
            toc_path = root / self.config.external_toc_path  # an absolute path replaces root
            self.env.note_dependency(str(toc_path))
            chapters = read_book(root, toc_path)
            for chapter in chapters:
                self.env.note_dependency(str(root / f"{chapter.docname}.ipynb"))
            container = nodes.container(classes=["exercise-catalog"])
            markdown = type(self).render(chapters)
            self.state.nested_parse(
                StringList(markdown.splitlines(), source=self.env.docname), self.content_offset, container
            )
            return [container]

    class ExerciseIndex(_CatalogDirective):
        render = staticmethod(exercise_index_markdown)

    class StudyPlan(_CatalogDirective):
        render = staticmethod(study_plan_markdown)

    class CheckedExercises(_CatalogDirective):
        render = staticmethod(checked_exercises_markdown)

    app.add_directive("exercise-index", ExerciseIndex)
    app.add_directive("checked-exercises", CheckedExercises)
    app.add_directive("study-plan", StudyPlan)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
