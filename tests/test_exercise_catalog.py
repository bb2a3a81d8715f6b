"""The exercises of the chapters, and the student edition built from them.

The first part needs only the committed notebooks: the conventions of ``bookkit.exercise_catalog``
hold in every chapter, and removing the solutions removes all of them and nothing else.

The last part checks a built student edition and runs when ``STUDENT_DIR`` names one
(``make student-test`` sets it): its pages contain no solution text but every exercise, and its
handout notebooks are the ones the build executed. With ``STUDENT_ZH_SITE`` (``make
student-zh-test``), the same for the Chinese student site, whose solutions' evidence is their
Chinese text, and that its pages are the Chinese of the student notebooks.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from bookkit import exercise_catalog as catalog
from bookkit import i18n, i18n_notebooks, student_edition

ROOT = Path(__file__).resolve().parent.parent

CHAPTERS = catalog.read_book(ROOT, ROOT / "_toc.yml")
STUDENT_DIR = os.environ.get("STUDENT_DIR")
STUDENT_ZH_SITE = os.environ.get("STUDENT_ZH_SITE")


def _notebook(cells: list[tuple[str, str, list[str]]]) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    for kind, source, tags in cells:
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        notebook.cells.append(make(source, metadata={"tags": tags} if tags else {}))
    return notebook


def _sources(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells]


# ---- strip_solutions on small notebooks ------------------------------------------------------------

EXERCISE = "```{exercise} Title\n:label: ex-a-1\n\n*Kind: code.*\n\nDo it.\n```"


def test_a_plain_solution_is_cut_out_of_its_cell() -> None:
    notebook = _notebook(
        [("markdown", f"Intro.\n\n{EXERCISE}\n\n```{{solution}} ex-a-1\n:label: sol-a-1\n\nSecret.\n```\n\nAfter.", [])]
    )
    stripped, removed = catalog.strip_solutions(notebook)
    assert removed == ["sol-a-1"]
    assert _sources(stripped) == [f"Intro.\n\n{EXERCISE}\n\nAfter."]


def test_a_gated_solution_loses_its_cells_and_keeps_what_follows() -> None:
    notebook = _notebook(
        [
            ("markdown", f"{EXERCISE}\n\n```{{solution-start}} ex-a-1\n:label: sol-a-1\n```\n\nSecret prose.", []),
            ("code", "secret_code = 1", ["solution"]),
            ("markdown", "More secret prose.", []),
            ("code", "more_secret_code = 2", ["solution", "hide-input"]),
            ("markdown", "Last secret.\n\n```{solution-end}\n```\n\nNext exercise.", []),
            ("code", "kept = 3", []),
        ]
    )
    stripped, removed = catalog.strip_solutions(notebook)
    assert removed == ["sol-a-1"]
    assert _sources(stripped) == [EXERCISE, "Next exercise.", "kept = 3"]


def test_a_solution_fenced_with_four_backticks_may_contain_code_fences() -> None:
    body = "````{solution} ex-a-1\n:label: sol-a-1\n\n```python\nsecret = 1\n```\n\nSecret.\n````"
    stripped, removed = catalog.strip_solutions(_notebook([("markdown", f"{EXERCISE}\n\n{body}\n\nKept.", [])]))
    assert removed == ["sol-a-1"]
    assert _sources(stripped) == [f"{EXERCISE}\n\nKept."]


def test_starter_cells_stay() -> None:
    notebook = _notebook(
        [("markdown", EXERCISE, []), ("code", "def f():\n    raise NotImplementedError", ["exercise-starter"])]
    )
    stripped, removed = catalog.strip_solutions(notebook)
    assert removed == [] and _sources(stripped) == _sources(notebook)


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        (
            [("markdown", "```{solution-start} ex-a-1\n```", []), ("code", "x = 1", []),
             ("markdown", "```{solution-end}\n```", [])],
            "is not tagged 'solution'",
        ),
        ([("code", "x = 1", ["solution"])], "outside every solution"),
        ([("markdown", "```{solution-start} ex-a-1\n```\n\ntext", [])], "has no {solution-end}"),
        ([("markdown", "```{solution} ex-a-1\nnever closed", [])], "is never closed"),
    ],
    ids=["untagged code in a gated solution", "tagged code outside", "unclosed gate", "unclosed fence"],
)
def test_malformed_solutions_are_reported(cells: list[tuple[str, str, list[str]]], message: str) -> None:
    with pytest.raises(catalog.CatalogError, match=re.escape(message)):
        catalog.strip_solutions(_notebook(cells))


def test_an_exercise_without_kind_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "chapter.ipynb"
    chapter = "# A chapter\n\n```{exercise} T\n:label: ex-b-1\n\nNo kind.\n```"
    nbformat.write(_notebook([("markdown", chapter, [])]), path)
    with pytest.raises(catalog.CatalogError, match="has no '\\*Kind: ...\\*' line"):
        catalog.read_chapter(path, "chapter")


@pytest.mark.parametrize(
    ("kind_line", "kinds", "difficulty"),
    [
        ("*Kind: proof.*", ("proof",), None),
        ("*Kind: code · Difficulty: ★*", ("code",), 1),
        ("*Kind: proof and code · Difficulty: ★★.*", ("proof", "code"), 2),
        ("*Kind: find-the-bug. · Difficulty: ★★★*", ("find-the-bug",), 3),
    ],
)
def test_kind_and_difficulty_are_read(tmp_path: Path, kind_line: str, kinds: tuple[str, ...], difficulty: int) -> None:
    path = tmp_path / "chapter.ipynb"
    chapter = f"# A chapter\n\n## Exercises\n\n```{{exercise}} T\n:label: ex-b-1\n\n{kind_line}\n\nDo it.\n```"
    nbformat.write(_notebook([("markdown", chapter, [])]), path)
    (exercise,) = catalog.read_chapter(path, "chapter").exercises
    assert (exercise.kinds, exercise.difficulty) == (kinds, difficulty)


def test_difficulty_weighs_the_suggested_time() -> None:
    def chapter(*levels: int) -> catalog.Chapter:
        exercises = tuple(catalog.Exercise("c", f"ex-{n}", "T", ("code",), (), level) for n, level in enumerate(levels))
        return catalog.Chapter("c", "C", exercises, prose_words=0, code_lines=0, number=1)

    code = catalog.MINUTES_PER_EXERCISE["code"]
    assert chapter(2).suggested_minutes() == 5 * -(-code // 5)
    assert chapter(1, 1).suggested_minutes() == chapter(2).suggested_minutes()
    assert chapter(3).suggested_minutes() == chapter(2, 2).suggested_minutes()
    assert "1 ★, 1 ★★★" in catalog.study_plan_markdown([chapter(1, 3)])


def test_the_student_configuration_names_the_edition_and_drops_launch_buttons() -> None:
    config = student_edition.student_config((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "(student edition)" in config
    assert "launch_buttons" not in config and "colab" not in config
    # the language links lead to the Chinese student site (make student-zh), as the full sites' do
    assert yaml.safe_load(config)["sphinx"]["config"].get("language_links", True) is True


def test_the_chinese_student_configuration_is_the_student_one_in_chinese(tmp_path: Path) -> None:
    config = yaml.safe_load(student_edition.student_config((ROOT / "_config.yml").read_text(encoding="utf-8")))
    chinese = i18n.chinese_config(config, tmp_path, tmp_path / "cache", student=True)
    assert chinese["title"] == f"{i18n.TITLE}（{i18n.STUDENT_NOTE}）"
    assert chinese["sphinx"]["config"]["language"] == i18n.LANGUAGE
    assert chinese["execute"]["cache"] == str((tmp_path / "cache").resolve())
    assert "launch_buttons" not in chinese


# ---- the chapters ------------------------------------------------------------------------------------


def test_the_catalog_lists_every_chapter_in_order() -> None:
    assert [chapter.docname for chapter in CHAPTERS] == sorted(
        f"notebooks/{path.stem}" for path in (ROOT / "notebooks").glob("*.ipynb")
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda chapter: chapter.docname)
def test_every_exercise_has_a_difficulty(chapter: catalog.Chapter) -> None:
    unlabelled = [exercise.label for exercise in chapter.exercises if exercise.difficulty is None]
    assert not unlabelled, f"add '· Difficulty: ★…' to the Kind line of {unlabelled}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda chapter: chapter.docname)
def test_every_exercise_has_exactly_one_solution_with_the_matching_label(chapter: catalog.Chapter) -> None:
    notebook = nbformat.read(ROOT / f"{chapter.docname}.ipynb", as_version=4)
    _, removed = catalog.strip_solutions(notebook)
    expected = [exercise.label.replace("ex-", "sol-", 1) for exercise in chapter.exercises]
    assert removed == expected
    solution_targets = re.findall(r"\{solution(?:-start)?\}\s+(\S+)", "\n".join(_sources(notebook)))
    assert solution_targets == [exercise.label for exercise in chapter.exercises]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda chapter: chapter.docname)
def test_the_student_notebook_keeps_everything_but_the_solutions(chapter: catalog.Chapter) -> None:
    notebook = nbformat.read(ROOT / f"{chapter.docname}.ipynb", as_version=4)
    stripped, _ = catalog.strip_solutions(notebook)
    text = "\n".join(_sources(stripped))
    assert "{solution" not in text and "sol-" not in text
    for exercise in chapter.exercises:
        assert f":label: {exercise.label}\n" in text
    kept_code = [cell.source for cell in notebook.cells if cell.cell_type == "code" and "solution" not in
                 cell.metadata.get("tags", [])]
    assert [cell.source for cell in stripped.cells if cell.cell_type == "code"] == kept_code


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda chapter: chapter.docname)
def test_starter_cells_call_a_checker_that_exists(chapter: catalog.Chapter) -> None:
    import posenc.exercises

    for exercise in chapter.exercises:
        for checker in exercise.checkers:
            assert checker in posenc.exercises.__all__, f"{exercise.label} calls an unknown checker {checker}"


def test_the_index_and_the_study_plan_cover_every_exercise() -> None:
    index = catalog.exercise_index_markdown(CHAPTERS)
    labels = [exercise.label for chapter in CHAPTERS for exercise in chapter.exercises]
    assert re.findall(r"\{ref\}`(ex-[\w-]+)`", index) == labels
    plan = catalog.study_plan_markdown(CHAPTERS)
    numbered = [chapter for chapter in CHAPTERS if chapter.number is not None]
    assert all(f"{{doc}}`/{chapter.docname}`" in plan for chapter in numbered)
    assert all(f"{{doc}}`/{chapter.docname}`" not in plan for chapter in CHAPTERS if chapter.number is None)


# ---- a built student edition ---------------------------------------------------------------------------

needs_student_build = pytest.mark.skipif(STUDENT_DIR is None, reason="set STUDENT_DIR to a built student edition")


def _page_text(page: Path) -> str:
    """The text of an HTML page, tags removed, so highlighted code reads as written."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def _solution_lines(chapter: catalog.Chapter) -> list[str]:
    """Lines that occur only in the chapter's solutions: the evidence a leak would leave."""
    notebook = nbformat.read(ROOT / f"{chapter.docname}.ipynb", as_version=4)
    stripped, _ = catalog.strip_solutions(notebook)
    kept = "\n".join(_sources(stripped))
    lines = {line.strip() for line in "\n".join(_sources(notebook)).splitlines()}
    return sorted(
        line for line in lines
        if len(line) >= 40 and line not in kept and "$" not in line and "{" not in line and "`" not in line
    )


@needs_student_build
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda chapter: chapter.docname)
def test_student_pages_have_the_exercises_and_no_solution(chapter: catalog.Chapter) -> None:
    site = Path(STUDENT_DIR) / "_build" / "html"
    page = site / f"{chapter.docname}.html"
    source = page.read_text(encoding="utf-8")
    for exercise in chapter.exercises:
        assert f'id="{exercise.label}"' in source, f"{exercise.label} is missing from the student page"
    assert 'class="solution' not in source and "solution-title" not in source
    text = _page_text(page)
    evidence = _solution_lines(chapter)
    assert len(evidence) >= len(chapter.exercises), "too little solution text to test for leaks"
    leaked = [line for line in evidence if line in text]
    assert leaked == [], f"solution text on the student page: {leaked[:3]}"


@needs_student_build
def test_no_student_page_mentions_a_solution_label() -> None:
    site = Path(STUDENT_DIR) / "_build" / "html"
    for page in site.rglob("*.html"):
        assert not re.search(r'id="sol-', page.read_text(encoding="utf-8")), page


@needs_student_build
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda chapter: chapter.docname)
def test_handout_notebooks_are_the_executed_student_notebooks(chapter: catalog.Chapter) -> None:
    name = Path(chapter.docname).name + ".ipynb"
    handout = nbformat.read(Path(STUDENT_DIR) / "notebooks" / name, as_version=4)
    built = nbformat.read(Path(STUDENT_DIR) / "source" / "notebooks" / name, as_version=4)
    assert _sources(handout) == _sources(built)
    assert all(not cell.get("outputs") for cell in handout.cells if cell.cell_type == "code")
    assert not any("solution" in cell.metadata.get("tags", []) for cell in handout.cells)


# ---- a built Chinese student edition (make student-zh-test) -------------------------------------------

needs_chinese_student_build = pytest.mark.skipif(
    STUDENT_ZH_SITE is None, reason="set STUDENT_ZH_SITE to a built Chinese student site"
)
# A run of Chinese text between markup, code, formulas and numbers: what a page shows as written.
CHINESE_RUN = re.compile(r"[\u3400-\u9fff，。、；：（）“”！？]{12,}")


def _chinese_runs(notebook: nbformat.NotebookNode) -> set[str]:
    return {run for source in _sources(notebook) for run in CHINESE_RUN.findall(source)}


def _chinese_chapter(chapter: catalog.Chapter) -> tuple[set[str], set[str]]:
    """The Chinese runs of the chapter's student notebook, and those that occur only in its solutions."""
    po = i18n.LOCALE_DIR / i18n.LANGUAGE / "LC_MESSAGES" / f"{chapter.docname}.po"
    notebook = ROOT / f"{chapter.docname}.ipynb"
    translated = i18n_notebooks.translate_notebook(notebook, i18n_notebooks.translations(po)).notebook
    stripped, _ = catalog.strip_solutions(translated)
    kept = _chinese_runs(stripped)
    kept_text = "\n".join(_sources(stripped))
    return kept, {run for run in _chinese_runs(translated) - kept if run not in kept_text}


@needs_chinese_student_build
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda chapter: chapter.docname)
def test_chinese_student_pages_are_chinese_with_the_exercises_and_no_solution(chapter: catalog.Chapter) -> None:
    page = Path(STUDENT_ZH_SITE or "") / f"{chapter.docname}.html"
    source = page.read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in source
    for exercise in chapter.exercises:
        assert f'id="{exercise.label}"' in source, f"{exercise.label} is missing from the Chinese student page"
    assert 'class="solution' not in source and "solution-title" not in source and 'id="sol-' not in source
    text = _page_text(page)
    kept, evidence = _chinese_chapter(chapter)
    assert len(evidence) >= len(chapter.exercises), "too little Chinese solution text to test for leaks"
    leaked = sorted(run for run in evidence if run in text)
    assert leaked == [], f"Chinese solution text on the Chinese student page: {leaked[:3]}"
    # The page is the Chinese of the student notebook: its Chinese text is there (measured: every
    # run of every chapter; and every run of the evidence is on the full Chinese site's page).
    shown = sum(run in text for run in kept)
    assert shown >= 0.9 * len(kept), f"only {shown} of the {len(kept)} Chinese runs of the notebook are on the page"
    for solution_line in _solution_lines(chapter):
        assert solution_line not in text, f"English solution text on the Chinese student page: {solution_line!r}"


@needs_chinese_student_build
def test_every_chinese_student_page_is_chinese_and_the_two_student_sites_link_to_each_other() -> None:
    site = Path(STUDENT_ZH_SITE or "")
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= len(CHAPTERS)
    for page in pages:
        source = page.read_text(encoding="utf-8")
        assert not re.search(r'id="sol-', source), page
        if page.name in ("index.html", "search.html", "genindex.html") or "<article" not in source:
            continue
        assert '<html lang="zh-CN"' in source, page
        assert f"{i18n.TITLE}（{i18n.STUDENT_NOTE}）" in source, page
        # the language link leads to the same page of the English student site, one folder up
        english = Path(os.path.relpath(page, site)).as_posix()
        href = "../" * english.count("/") + "../" + english
        assert f'hreflang="en" href="{href}"' in source, page
        assert (site.parent / english).is_file(), f"{english} is not in the English student site"
        # and the English student page links back to it
        back = "../" * english.count("/") + f"zh/{english}"
        assert f'hreflang="zh-CN" href="{back}"' in (site.parent / english).read_text(encoding="utf-8"), english


# ---- checker coverage and the wiring of checker cells ----------------------------------------------------


def test_the_index_says_which_exercises_have_a_checker_and_why_not() -> None:
    from bookkit.wire_checkers import STARTERS

    index = catalog.exercise_index_markdown(CHAPTERS)
    checked, coding = catalog.coverage(CHAPTERS)
    assert f"Auto-checkers: {checked} of the {coding} exercises with code have one" in index
    for chapter in CHAPTERS:
        for exercise in chapter.exercises:
            text = catalog.checker_text(exercise)
            assert (text.startswith("`check_") if exercise.checkers else text.startswith("no checker")), text
            if "code" in exercise.kinds and not exercise.checkers:  # to be wired, or said why not
                assert exercise.label in catalog.NO_CHECKER_REASONS or exercise.label in {
                    starter.label for starter in STARTERS}, f"say why {exercise.label} has no checker"


def _wired_notebook(text: str) -> dict:
    return {"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": text.splitlines(keepends=True)}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_wiring_inserts_the_starter_after_the_exercise_and_splits_its_cell() -> None:
    import json

    from bookkit.wire_checkers import STARTERS, wire

    starter = next(s for s in STARTERS if s.label == "ex-ropec-1")
    exercise = "```{exercise} Period\n:label: ex-ropec-1\n\n*Kind: code · Difficulty: ★*\n\nDo it.\n```"
    notebook = _wired_notebook(
        f"## Exercises\n\n{exercise}\n\n```{{solution-start}} ex-ropec-1\n:label: s\n```\n\n"
        "A.\n\n```{solution-end}\n```"
    )
    assert wire(notebook, starter) == "inserted (exercise cell split)"
    kinds = [(cell["cell_type"], "".join(cell["source"])[:14]) for cell in notebook["cells"]]
    assert kinds == [("markdown", "## Exercises\n\n"), ("code", "from posenc.ex"), ("markdown", "```{solution-s")]
    assert "".join(notebook["cells"][0]["source"]).endswith(exercise)
    assert notebook["cells"][1]["metadata"]["tags"] == ["exercise-starter", "remove-output"]
    before = [dict(cell) for cell in notebook["cells"]]
    assert wire(notebook, starter) == "present"  # idempotent
    assert notebook["cells"] == before
    # The student edition keeps the starter, and the catalogue finds its checker.
    chapter_notebook = nbformat.reads(json.dumps(notebook), as_version=4)
    stripped, removed = catalog.strip_solutions(chapter_notebook)
    assert removed == ["s"] and any("check_slowest_wavelength(" in cell.source for cell in stripped.cells)


def test_wiring_reports_a_missing_label_and_goes_on(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    from bookkit.wire_checkers import main

    exercise = "```{exercise} Period\n:label: ex-ropec-1\n\n*Kind: code.*\n\nDo it.\n```"
    (tmp_path / "07.ipynb").write_text(json.dumps(_wired_notebook(exercise), indent=1) + "\n", encoding="utf-8")
    assert main(["--notebooks", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ex-ropec-1" in out and "inserted" in out
    assert "ex-perm-2" in out and "WARNING: no exercise with this label" in out
    wired = (tmp_path / "07.ipynb").read_text(encoding="utf-8")
    assert main(["--notebooks", str(tmp_path)]) == 0
    assert (tmp_path / "07.ipynb").read_text(encoding="utf-8") == wired
    assert main(["--check", "--notebooks", str(tmp_path)]) == 1  # other labels are missing here


def test_every_wired_starter_is_short_valid_and_not_implemented_yet() -> None:
    import ast

    from bookkit.wire_checkers import STARTERS, WIDTH

    import posenc.exercises

    for starter in STARTERS:
        source = starter.source()
        assert max(len(line) for line in source.splitlines()) <= WIDTH, starter.label
        namespace: dict = {}
        exec(compile(ast.parse(source), starter.label, "exec"), namespace)  # noqa: S102 (our own stub)
        result = getattr(posenc.exercises, starter.checker)(namespace[starter.function])
        assert not result and "not implemented yet" in str(result)
