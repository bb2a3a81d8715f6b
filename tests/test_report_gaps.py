"""posenc.report_gaps: the chapters' checker for a block of "these computations agree" claims."""

from __future__ import annotations

import pytest

from posenc import report_gaps


def test_report_gaps_prints_every_row_and_passes_when_all_are_below(capsys: pytest.CaptureFixture[str]) -> None:
    report_gaps({"first": 1e-9, "second": 0.0}, below=1e-6, width=10)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{'first':<10}{1e-9:>10.1e}", f"{'second':<10}{0.0:>10.1e}"]


def test_report_gaps_names_every_gap_that_is_not_below(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(AssertionError, match=r"not below 1\.0e-06: b = 1\.0e-06; c = 2\.0e\+00") as failure:
        report_gaps({"a": 1e-7, "b": 1e-6, "c": 2.0}, below=1e-6)
    assert "a =" not in str(failure.value)
    assert len(capsys.readouterr().out.splitlines()) == 3  # printed before the check


@pytest.mark.parametrize(
    ("gaps", "below", "error", "message"),
    [
        ([("a", 1.0)], 1.0, TypeError, "mapping"),
        ({}, 1.0, ValueError, "empty"),
        ({"a": 1.0}, 0.0, ValueError, "positive"),
        ({"a": 1.0}, True, ValueError, "positive"),
        ({1: 1.0}, 1.0, TypeError, "strings"),
        ({"a": "1"}, 1.0, TypeError, "real number"),
        ({"a": -1.0}, 1.0, ValueError, "non-negative"),
        ({"a": float("nan")}, 1.0, ValueError, "non-negative"),
    ],
)
def test_report_gaps_validates_its_arguments(gaps: object, below: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        report_gaps(gaps, below)  # type: ignore[arg-type]
