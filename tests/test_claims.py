"""The claims ledger (posenc.claims) and the tooling that reads it (bookkit.claims, bookkit.seed_shift)."""

from __future__ import annotations

import json
import math

import nbformat
import numpy as np
import pytest
import torch
from bookkit import claims as claims_tool
from bookkit.claims import notebook_sha256
from bookkit.seed_shift import claims_by_run
from hypothesis import given
from hypothesis import strategies as st

from posenc.claims import FRAGILE_MARGIN, ClaimError, Ledger

WORDS = "the words the claim backs"


@pytest.fixture
def ledger() -> Ledger:
    return Ledger("07_rope_long_range")


# ---- the forms hold and fail where their bounds say -------------------------------------------


@given(low=st.floats(-1e6, 1e6), width=st.floats(1e-3, 1e6), share=st.floats(0, 1))
def test_between_holds_inside_with_the_margin_to_the_nearest_bound(low, width, share):
    high = low + width
    value = min(low + share * width, high)
    claim_ledger = Ledger("ch")
    claim_ledger.between("inside", WORDS, value, low, high)
    claim = claim_ledger.claims["inside"]
    assert claim.held
    expected = min(value - low, high - value) / (high - low)
    assert math.isclose(claim.margin, expected, rel_tol=1e-9, abs_tol=1e-9)
    assert 0 <= claim.margin <= 0.5 + 1e-12


@pytest.mark.parametrize("value", [0.0099, 0.0251, -1.0, 10.0])
def test_between_fails_outside_and_the_message_names_claim_words_value_and_bound(ledger, value):
    with pytest.raises(ClaimError) as failure:
        ledger.between("bf16-noise", "bf16 noise is about 1-2 %", value, 0.01, 0.025)
    message = str(failure.value)
    assert "'bf16-noise'" in message and "07_rope_long_range" in message
    assert "bf16 noise is about 1-2 %" in message
    assert f"{value:.6g}" in message and "between 0.01 and 0.025" in message
    assert not ledger.claims["bf16-noise"].held  # recorded before failing


def test_bounds_are_inclusive(ledger):
    ledger.between("low-edge", WORDS, 1.0, 1.0, 2.0)
    ledger.at_least("at-bound", WORDS, 3, 3)
    ledger.at_most("at-top", WORDS, 3, 3)
    assert all(claim.held and claim.margin == 0 for claim in ledger.claims.values())


def test_at_least_and_at_most_margins_are_relative_to_the_bound_or_the_given_scale(ledger):
    ledger.at_least("ratio", WORDS, 6.0, 5.0)
    assert math.isclose(ledger.claims["ratio"].margin, 0.2)
    ledger.at_least("accuracy", WORDS, 0.97, 0.94, scale=0.06)
    assert math.isclose(ledger.claims["accuracy"].margin, 0.5)
    ledger.at_most("gap", WORDS, 1e-9, 1e-6)
    assert ledger.claims["gap"].margin > 0.99
    ledger.at_least("positive", WORDS, 1e-9, 0)
    assert ledger.claims["positive"].margin is None  # a bound of 0 has no width
    with pytest.raises(ClaimError, match="at least 0"):
        ledger.at_least("negative", WORDS, -1e-9, 0)
    with pytest.raises(ClaimError, match="at most 2"):
        ledger.at_most("above", WORDS, 2.5, 2)


def test_close_to_is_between_the_target_plus_or_minus_the_tolerance(ledger):
    ledger.close_to("absolute", WORDS, 1.05, 1.0, abs_tol=0.1)
    assert math.isclose(ledger.claims["absolute"].margin, 0.25)
    ledger.close_to("relative", WORDS, 200.0, 200.0, rel_tol=0.05)
    claim = ledger.claims["relative"]
    assert claim.margin == 0.5 and claim.bounds["tolerance"] == 10.0
    with pytest.raises(ClaimError, match="within 10 of 200"):
        ledger.close_to("too-far", WORDS, 211.0, 200.0, rel_tol=0.05)


def test_several_values_must_each_hold_and_the_worst_is_recorded(ledger):
    per_seed = torch.tensor([0.97, 0.99, 0.95, 1.0])
    ledger.at_least("every-seed", WORDS, per_seed, 0.94, scale=0.06)
    claim = ledger.claims["every-seed"]
    assert claim.count == 4 and math.isclose(claim.value, 0.95, rel_tol=1e-6)
    assert claim.values is not None and len(claim.values) == 4
    assert math.isclose(claim.margin, (0.95 - 0.94) / 0.06, rel_tol=1e-5)
    with pytest.raises(ClaimError, match=r"value 2 of 3"):
        ledger.between("one-seed-out", WORDS, np.array([0.5, 0.6, 0.9]), 0.4, 0.8)


def test_a_nan_value_is_a_failed_claim_that_says_so(ledger):
    with pytest.raises(ClaimError, match="NaN"):
        ledger.at_most("nan", WORDS, float("nan"), 1.0)
    with pytest.raises(ClaimError, match=r"NaN \(value 1 of 2\)"):
        ledger.at_most("nan-in-list", WORDS, [0.1, float("nan")], 1.0)


def test_equals_compares_whole_values_tensors_as_lists(ledger):
    ledger.equals("counts", WORDS, torch.tensor([41, 46, 64]), [41, 46, 64])
    assert ledger.claims["counts"].value == [41, 46, 64] and ledger.claims["counts"].margin is None
    with pytest.raises(ClaimError, match=r"measured \[41, 46\], expected \[41, 47\]"):
        ledger.equals("wrong-counts", WORDS, [41, 46], [41, 47])


def test_holds_records_the_deciding_values_and_accepts_one_element_tensors(ledger):
    low, last = torch.tensor(-3.0), 2.0
    ledger.holds("dips", WORDS, low < 0 < last, low=low, last=last)
    assert ledger.claims["dips"].bounds == {"values": {"low": -3.0, "last": 2.0}}
    ledger.holds("tensor-bool", WORDS, torch.tensor(True))
    assert ledger.claims["tensor-bool"].held
    with pytest.raises(ClaimError, match=r"deciding values \{'peak': 5\}"):
        ledger.holds("no-peak", WORDS, False, peak=5)
    with pytest.raises(TypeError, match="condition must be a bool"):
        ledger.holds("not-bool", WORDS, 1.0)


def test_agree_prints_every_gap_and_claims_each_is_below_the_tolerance(ledger, capsys):
    gaps = {"max |ours - torch|": torch.tensor(3e-8), "max |ours - posenc|": 0.0}
    ledger.agree("match", WORDS, gaps, 1e-6)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("max |ours - torch|") and printed[0].endswith("3.0e-08")
    assert len(printed) == 2
    claim = ledger.claims["match"]
    assert claim.form == "at_most" and claim.count == 2 and math.isclose(claim.value, 3e-8, rel_tol=1e-6)
    with pytest.raises(ClaimError, match="at most 1e-06"):
        ledger.agree("mismatch", WORDS, {"max gap": 2e-6}, 1e-6)
    with pytest.raises(ClaimError, match="NaN"):
        ledger.agree("nan-gap", WORDS, {"max gap": float("nan")}, 1e-6)
    with pytest.raises(TypeError, match="must be a string"):
        ledger.agree("unnamed", WORDS, {1: 0.0}, 1e-6)


# ---- records, margins and fragility -----------------------------------------------------------


def test_a_record_is_json_and_says_everything_the_report_needs(ledger):
    ledger.between("thin", WORDS, 0.0105, 0.01, 0.025)
    record = json.loads(json.dumps(ledger.claims["thin"].to_json()))
    assert record == {
        "chapter": "07_rope_long_range", "label": "thin", "words": WORDS, "form": "between", "value": 0.0105,
        "bounds": {"low": 0.01, "high": 0.025}, "held": True, "margin": pytest.approx(1 / 30), "values": None,
        "count": 1,
    }
    assert ledger.claims["thin"].fragile and ledger.fragile() == [ledger.claims["thin"]]
    ledger.between("comfortable", WORDS, 0.015, 0.01, 0.025)
    assert not ledger.claims["comfortable"].fragile and ledger.failed() == []
    assert FRAGILE_MARGIN == 0.1


def test_glue_accepts_numbers_and_text_only(ledger):
    ledger.glue("crossover", 18478)
    ledger.glue("share", np.float64(0.5))
    with pytest.raises(TypeError, match="one number or a string"):
        ledger.glue("many", [1, 2])


# ---- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda c: c.between("Bad Label", WORDS, 1, 0, 2), ValueError, "lower-case letters"),
        (lambda c: c.between(3, WORDS, 1, 0, 2), TypeError, "label must be a string"),
        (lambda c: c.between("empty-words", "  ", 1, 0, 2), ValueError, "words of claim 'empty-words' are empty"),
        (lambda c: c.between("wrong-order", WORDS, 1, 2, 0), ValueError, "low < high"),
        (lambda c: c.between("infinite", WORDS, 1, 0, math.inf), ValueError, "high must be finite"),
        (lambda c: c.between("boolean", WORDS, True, 0, 2), TypeError, "use holds"),
        (lambda c: c.between("text", WORDS, "1", 0, 2), TypeError, "real number or a sequence"),
        (lambda c: c.between("empty", WORDS, [], 0, 2), ValueError, "value is empty"),
        (lambda c: c.between("complex", WORDS, torch.ones(2, dtype=torch.complex64), 0, 2), TypeError, "real"),
        (lambda c: c.at_least("scale", WORDS, 1, 0.5, scale=0), ValueError, "scale must be > 0"),
        (lambda c: c.close_to("no-tolerance", WORDS, 1, 1), ValueError, "needs a tolerance"),
        (lambda c: c.close_to("negative", WORDS, 1, 1, abs_tol=-1), ValueError, ">= 0"),
        (lambda c: c.agree("empty-gaps", WORDS, {}, 1e-6), ValueError, "gaps is empty"),
        (lambda c: c.agree("tensor-gap", WORDS, {"g": torch.ones(3)}, 1e-6), TypeError, "one number"),
        (lambda c: c.agree("no-tolerance", WORDS, {"g": 0.0}, 0), ValueError, "below must be > 0"),
    ],
)
def test_bad_input_is_refused_with_a_message_that_says_what_is_expected(ledger, call, error, message):
    with pytest.raises(error, match=message):
        call(ledger)


def test_a_label_stated_twice_in_one_run_is_refused(ledger):
    ledger.at_most("once", WORDS, 1, 2)
    with pytest.raises(ValueError, match="stated twice"):
        ledger.at_most("once", WORDS, 1, 2)


@pytest.mark.parametrize(("chapter", "error"), [(7, TypeError), ("", ValueError)])
def test_a_ledger_needs_a_chapter_name(chapter, error):
    with pytest.raises(error, match="chapter must be"):
        Ledger(chapter)


# ---- in a notebook: glued values and records the build collects -------------------------------


def _executed(tmp_path, cells):
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook(cells=cells)
    resources = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(notebook, timeout=60, kernel_name="python3", resources=resources).execute()
    return notebook


def test_in_a_notebook_each_claim_is_glued_and_recorded_and_a_rerun_cell_replaces_it(tmp_path):
    code = nbformat.v4.new_code_cell
    notebook = _executed(tmp_path, [
        code("from posenc import Ledger\nclaims = Ledger('01_t')"),
        code("claims.between('noise', 'noise is small', 0.0153, 0.01, 0.025)\n"
             "claims.at_least('seeds', 'every seed', [0.95, 0.99], 0.9)\nclaims.glue('crossover', 18478)"),
        code("claims.between('noise', 'noise is small', 0.02, 0.01, 0.025)"),  # as if the cell were re-run
        nbformat.v4.new_markdown_cell("Noise {glue:text}`noise:.1%`, from {glue:text}`seeds-min:.2f`; "
                                      "{glue:text}`missing`."),
    ])
    records = claims_tool.claims_of_notebook(notebook)
    assert [(r["chapter"], r["label"]) for r in records] == [("01_t", "noise"), ("01_t", "seeds")]
    assert records[0]["value"] == 0.02 and records[1]["values"] == [0.95, 0.99]
    glued = claims_tool.glued_keys(notebook)
    assert {"noise", "seeds", "seeds-min", "seeds-max", "crossover"} <= glued
    assert set(claims_tool.glue_references(notebook)) - glued == {"missing"}
    # The kernel cannot tell a re-run cell from another cell stating the same label; the executed
    # notebook can, and check reports it (myst-nb would warn of a duplicate glue key and fail the build).
    assert claims_tool.glued_twice(notebook) == ["noise"]
    # A claim ending a cell shows nothing; glued outputs are hidden (myst-nb's no-display prefix)
    # and hold plain numbers.
    assert [o.output_type for o in notebook.cells[2].outputs] == ["display_data"]
    named = [(o.get("metadata", {}).get("scrapbook", {}).get("name"), o) for o in notebook.cells[1].outputs]
    outputs = [output for name, output in named if name == "noise"]
    assert outputs and outputs[0].data == {"application/papermill.record/text/plain": "0.0153"}


def test_a_trial_ledger_records_which_claims_break_without_raising_or_gluing(tmp_path):
    code = nbformat.v4.new_code_cell
    notebook = _executed(tmp_path, [
        code("from posenc import Ledger\ntrial = Ledger('08_t', trial=True)"),
        code("trial.between('noise', 'noise is small', 0.5, 0.01, 0.025)\n"
             "trial.at_least('seeds', 'every seed', [0.95, 0.99], 0.9)\n"
             "trial.holds('kept', 'kept', False)\ntrial.glue('crossover', 1)\n"
             "print(sorted(c.label for c in trial.failed()))"),
    ])
    assert notebook.cells[1].outputs[0].text == "['kept', 'noise']\n"  # nothing else: no glue, no error
    assert claims_tool.glued_keys(notebook) == set() and claims_tool.claims_of_notebook(notebook) == []
    with pytest.raises(TypeError, match="trial must be a bool"):
        Ledger("08_t", trial="yes")  # type: ignore[arg-type]


# ---- the ledger as data: collect, seed runs, report -------------------------------------------


def _record(label, value, margin, held=True, chapter="07_rope_long_range"):
    return {"chapter": chapter, "label": label, "words": WORDS, "form": "between", "value": value,
            "bounds": {"low": 0.0, "high": 1.0}, "held": held, "margin": margin, "values": None, "count": 1}


def test_collect_reads_the_glue_files_of_a_build(tmp_path):
    execute = tmp_path / "jupyter_execute" / "notebooks"
    execute.mkdir(parents=True)
    glue = {"a": {"data": {"text/plain": "0.5"}, "metadata": {"posenc_claim": _record("a", 0.5, 0.5)}},
            "a-min": {"data": {"text/plain": "0.5"}, "metadata": {}}}
    (execute / "07_rope_long_range.glue.json").write_text(json.dumps(glue))
    assert claims_tool.collect(tmp_path) == [_record("a", 0.5, 0.5)]
    with pytest.raises(FileNotFoundError, match="was the book built"):
        claims_tool.collect(tmp_path / "elsewhere")


def test_claims_by_run_and_rows_give_the_smallest_margin_over_build_and_runs(tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    path = notebooks / "07_rope_long_range.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)
    runs = claims_by_run([(path, 1, [_record("a", 0.45, 0.45)]), (path, 2, [_record("a", 0.95, 0.05)])])
    assert runs["07_rope_long_range"]["_sha256"] == notebook_sha256(path)
    assert runs["07_rope_long_range"]["a"] == {"1": {"value": 0.45, "margin": 0.45, "held": True},
                                               "2": {"value": 0.95, "margin": 0.05, "held": True}}
    rows = claims_tool.claim_rows([_record("a", 0.5, 0.5), _record("b", 0.3, 0.3)], runs)
    assert rows[0].smallest_margin == 0.05 and rows[0].fragile and rows[0].run_values == {"1": "0.45", "2": "0.95"}
    assert rows[1].smallest_margin == 0.3 and not rows[1].fragile and rows[1].run_values == {}
    assert claims_tool.current_runs(runs, notebooks) == runs
    path.write_text(path.read_text() + " ")  # the text changed: its runs are stale
    assert claims_tool.current_runs(runs, notebooks) == {}


def test_report_lists_fragile_claims_and_fails_on_a_failed_one(tmp_path, capsys):
    claims_file = tmp_path / "claims.json"
    claims_file.write_text(json.dumps([_record("a", 0.5, 0.5), _record("thin", 0.99, 0.01)]))
    assert claims_tool.report(claims_file, None, tmp_path) == 0
    out = capsys.readouterr().out
    assert "fragile 07_rope_long_range thin" in out and "1 fragile" in out and " a:" not in out
    claims_file.write_text(json.dumps([_record("broken", 1.5, -0.5, held=False)]))
    assert claims_tool.report(claims_file, None, tmp_path) == 1
    assert "FAILED  07_rope_long_range broken" in capsys.readouterr().out


def test_check_reports_what_a_cell_writes_to_stderr():
    """The build turns stderr into a warning (stderr_output: warn) and fails under -W, so check reports it."""
    cell = nbformat.v4.new_code_cell("import warnings; warnings.warn('x')")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="fine\n"),
        nbformat.v4.new_output("stream", name="stderr", text="/tmp/a.py:3: PerformanceWarning: indexing past\n  x\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Text."), cell])
    assert claims_tool.stderr_outputs(notebook) == ["cell 1: /tmp/a.py:3: PerformanceWarning: indexing past x"]
    cell.outputs = cell.outputs[:1]
    assert claims_tool.stderr_outputs(notebook) == []


def test_a_key_glued_twice_by_one_cell_is_reported():
    """myst-nb warns of a duplicate glue key whether one cell or two glue it (a claim's -min and a glue)."""
    def glued(name):
        return nbformat.v4.new_output("display_data", data={"text/plain": "1"},
                                      metadata={"scrapbook": {"name": name, "mime_prefix": ""}})

    cell = nbformat.v4.new_code_cell("claims.at_most('span', ...); claims.glue('span-min', 0)")
    cell.outputs = [glued("span-min"), glued("span-max"), glued("span-min")]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    assert claims_tool.glued_twice(notebook) == ["span-min"]
    cell.outputs = cell.outputs[:2]
    assert claims_tool.glued_twice(notebook) == []


def test_decimals_glue_the_extremes_rounded_outwards(monkeypatch):
    """'2.9x or more' of 2.87 is false once rounded: with decimals the -min is floored, the -max ceiled."""
    import posenc.claims as claims_module

    shown: dict[str, object] = {}
    monkeypatch.setattr(claims_module, "_display", lambda name, value, record: shown.__setitem__(name, value))
    ledger = Ledger("09_t")
    ledger.at_least("slow-down", "slows every turning pair by at least 2.5x", [2.8651, 3.2], 2.5, decimals=1)
    assert shown["slow-down-min"] == 2.8 and shown["slow-down-max"] == 3.2
    ledger.at_most("lookback", "at most 0.9", [0.4, 0.8638], 0.9, decimals=2)
    assert shown["lookback-min"] == 0.4 and shown["lookback-max"] == 0.87
    ledger.at_least("jump", "at least 30 %", [0.418, 0.9], 0.3)  # by default as measured
    assert shown["jump-min"] == 0.418
    with pytest.raises(ValueError, match="decimals must be an integer >= 0"):
        ledger.at_least("other", "words", [1.0, 2.0], 0.5, decimals=-1)
