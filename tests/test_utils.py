"""Tests of posenc.utils.show_error: what it prints, what it accepts, and when it fails."""

from __future__ import annotations

import pytest

from posenc import show_error


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
