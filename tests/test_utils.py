"""Tests of posenc.utils.check_gaps: what it prints, what it accepts, and when it fails."""

from __future__ import annotations

import pytest
import torch

from posenc import check_gaps, report, show_error


def test_prints_one_report_row_per_gap_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    check_gaps({"first": 1e-7, "second": torch.tensor(2e-6)}, 1e-5, width=10)
    printed = capsys.readouterr().out
    report("first", 1e-7, 10)
    report("second", 2e-6, 10)
    assert printed == capsys.readouterr().out
    assert printed.splitlines()[0].startswith("first") and printed.splitlines()[1].endswith("2.0e-06")


def test_fails_naming_every_gap_that_is_not_below_the_tolerance() -> None:
    with pytest.raises(AssertionError, match=r"b = 1\.0e-03; c = 1\.0e-02") as caught:
        check_gaps({"a": 0.0, "b": 1e-3, "c": 1e-2}, 1e-3)
    assert "a =" not in str(caught.value)


@pytest.mark.parametrize(
    ("gaps", "below", "error", "message"),
    [
        ([("a", 0.0)], 1e-5, TypeError, "mapping"),
        ({}, 1e-5, ValueError, "empty"),
        ({1: 0.0}, 1e-5, TypeError, "string"),
        ({"a": "0"}, 1e-5, TypeError, "real number"),
        ({"a": torch.zeros(2)}, 1e-5, TypeError, "real number"),
        ({"a": float("nan")}, 1e-5, ValueError, "NaN"),
        ({"a": 0.0}, 0.0, ValueError, "> 0"),
        ({"a": 0.0}, "1e-5", TypeError, "real number"),
    ],
)
def test_rejects_bad_arguments(gaps: object, below: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        check_gaps(gaps, below)  # type: ignore[arg-type]


def test_show_error_prints_the_first_line_wrapped(capsys: pytest.CaptureFixture[str]) -> None:
    def fails(word: str, *, times: int) -> None:
        raise ValueError(" ".join([word] * times) + "\nsecond line")

    show_error(ValueError, fails, "long", times=30)
    printed = capsys.readouterr().out
    assert printed.startswith("ValueError: long long") and "second" not in printed
    assert max(len(line) for line in printed.splitlines()) <= 79 and len(printed.splitlines()) > 1
    assert printed.split() == ["ValueError:"] + ["long"] * 30


def test_show_error_accepts_a_tuple_and_lets_other_errors_through() -> None:
    show_error((KeyError, IndexError), [].pop)
    with pytest.raises(ZeroDivisionError):
        show_error(ValueError, lambda: 1 / 0)


def test_show_error_fails_when_nothing_is_raised() -> None:
    with pytest.raises(AssertionError, match="raised no ValueError or TypeError"):
        show_error((ValueError, TypeError), print)


@pytest.mark.parametrize(("expected", "function"), [(ValueError, "print"), (int, print), ((), print), ("x", print)])
def test_show_error_rejects_bad_arguments(expected: object, function: object) -> None:
    with pytest.raises(TypeError):
        show_error(expected, function)  # type: ignore[arg-type]
