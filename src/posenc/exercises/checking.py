"""The machinery every checker shares: running student code, collecting problems, reporting.

A checker (one per family module: :mod:`posenc.exercises.attention`,
:mod:`posenc.exercises.sinusoidal`, :mod:`posenc.exercises.relative`,
:mod:`posenc.exercises.rotary`, :mod:`posenc.exercises.heads`,
:mod:`posenc.exercises.scaling`) describes its hidden cases and how to diagnose a wrong answer;
this module does the rest, the same way for all of them:

- the result, :class:`~posenc.exercises.CheckResult`: a verdict that is true only when every case
  passed, and a readable report (printed, or displayed in a notebook);
- running the student's function on one hidden case: a ``NotImplementedError`` means "not
  started yet", any other exception is reported with the line of the student's code that raised
  it (a shape error from PyTorch also with the sizes that met and what usually makes them meet),
  and identical diagnoses from several cases are reported once, at most four of them;
- a private, seeded random generator per checker, so the hidden cases are the same at every run
  and the global random state is never touched;
- checks of what the student returned (a tensor, its shape, dtype, finiteness, inputs left
  unchanged) and short formatting of numbers and tensors for the messages.

Comparing an answer with a reference and naming the mistake that explains it is the subject of
:mod:`posenc.exercises.comparing`. Nothing here is meant to be called from a notebook: import the
checkers from :mod:`posenc.exercises`.
"""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import torch

__all__ = ["CheckResult"]


_PUBLIC_MODULE = "posenc.exercises"
_Public = TypeVar("_Public", bound=Callable[..., Any])


def _public(obj: _Public) -> _Public:
    """Mark ``obj`` as defined in :mod:`posenc.exercises`, the path it is imported from.

    The checkers live in family modules, but their reports, reprs and the API reference name
    them where readers import them (as NumPy's ``set_module`` does).
    """
    obj.__module__ = _PUBLIC_MODULE
    return obj


_SEED = 20240611
"""Seed of the private generator of every checker: the hidden cases are the same at every run."""

_DIAGNOSIS = {"on": True}
"""Whether a failed check is diagnosed (its mistake named); off only inside :func:`_verdicts_only`."""


@contextmanager
def _verdicts_only() -> Iterator[None]:
    """Decide pass or fail without diagnosing failures: for a test that needs only the verdicts of many checks.

    The verdict is the same (the hidden cases and their comparison do not change); the naming of a mistake, the
    readings of the catalogue and the probes of the student's function are skipped.
    """
    _DIAGNOSIS["on"] = False
    try:
        yield
    finally:
        _DIAGNOSIS["on"] = True


_EPS32 = torch.finfo(torch.float32).eps
_MAX_MESSAGES = 4
"""At most this many distinct problems are listed; the rest are counted."""


# --------------------------------------------------------------------------- the result


@_public
@dataclass(frozen=True, repr=False)
class CheckResult:
    """The outcome of one checker: a verdict and specific feedback.

    It is true exactly when every check passed, so ``assert check_sinusoidal(fn)`` works in an
    autograder, and it prints (and displays in a notebook) as a readable report.

    Attributes:
        exercise: name of the exercise, e.g. ``"sinusoidal encoding"``.
        passed: whether every hidden case and property check passed.
        feedback: specific messages. On failure: what was wrong, on which input, and a hint.
            On success: what was verified (and possibly notes, e.g. on precision).
        cases: number of hidden cases run.
        failed: number of those cases that failed.
    """

    exercise: str
    passed: bool
    feedback: tuple[str, ...]
    cases: int
    failed: int = 0

    def __bool__(self) -> bool:
        return self.passed

    @property
    def score(self) -> float:
        """Share of the hidden cases passed, 1.0 exactly when the check passed and below 1 otherwise.

        An autograder can give it as partial credit (the nbgrader assignments of the book do).
        A failed check that counted no failed case (the function was not implemented yet) scores 0.
        """
        if self.passed:
            return 1.0
        if self.cases == 0 or self.failed == 0:
            return 0.0
        return (self.cases - self.failed) / self.cases

    def __str__(self) -> str:
        if self.passed:
            lines = [f"✔ {self.exercise}: all {self.cases} checks passed"]
        else:
            plural = "" if self.cases == 1 else "s"
            lines = [f"✘ {self.exercise}: not passed yet ({self.cases} hidden case{plural} run)"]
        for message in self.feedback:
            first, *rest = message.splitlines() or [""]
            lines.append(f"  - {first}")
            lines.extend(f"    {line}" for line in rest)
        return "\n".join(lines)

    __repr__ = __str__


# --------------------------------------------------------------------------- running student code


class _NotImplementedYet(Exception):
    """The student's function raised :class:`NotImplementedError`."""


class _Problem(Exception):
    """A problem that ends the current hidden case; ``key`` groups identical diagnoses."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def _check_callable(fn: object) -> None:
    if not callable(fn):
        shown = repr(fn)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TypeError(
            f"fn must be your function (a callable), got {type(fn).__name__} {shown}; pass the function "
            "itself without calling it: check(my_function), not check(my_function(...))"
        )


# Frames in torch or in posenc (this package's parent) are not the student's code.
_LIBRARIES = (os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _where_raised(error: BaseException) -> str:
    """`` (in my_function, line 7: code)``: the last line of the student's own code in the traceback."""
    frames = [
        frame for frame in traceback.extract_tb(error.__traceback__)
        if not os.path.abspath(frame.filename).startswith(_LIBRARIES)
    ]
    if not frames:
        return ""
    frame = frames[-1]
    code = f": {_short(frame.line, 80)}" if frame.line else ""
    return f" (in {frame.name}, line {frame.lineno}{code})"


_BROADCAST = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton "
                        r"dimension (\d+)")
_PRODUCTS = (  # PyTorch's messages for a product whose inner sizes differ, and which groups are those sizes
    (re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)"), (2, 3)),
    (re.compile(r"size mismatch, got input \((\d+)\), mat \((\d+)x(\d+)\), vec \((\d+)\)"), (3, 4)),
    (re.compile(r"inconsistent tensor size, expected tensor \[(\d+)\] and src \[(\d+)\]"), (1, 2)),
)


_OUT_OF_BOUNDS = re.compile(r"index (\d+) is out of bounds for dimension \d+ with size (\d+)")
_AXIS_RANGE = re.compile(r"Dimension out of range \(expected to be in range of \[-\d+, \d+\], but got -?\d+\)")


def _explain_error(text: str) -> str:
    """What a shape error from PyTorch says about the slip: which sizes met, and what usually makes them meet."""
    products = ((pattern.search(text), groups) for pattern, groups in _PRODUCTS)
    if (match := _BROADCAST.search(text)) is not None:
        sizes = int(match[1]), int(match[2])
        what = (f"a broadcast lined up an axis of size {sizes[0]} with one of size {sizes[1]} (dimension "
                f"{match[3]} of the result): broadcasting aligns axes from the right, so a tensor that lacks an axis "
                "needs an explicit size-1 axis where the other has it (x[:, None], unsqueeze) for each axis to meet "
                "its own")
    elif (found := next(((m, groups) for m, groups in products if m is not None), None)) is not None:
        product, (left, right) = found
        sizes = int(product[left]), int(product[right])
        what = (f"a product met inner sizes {sizes[0]} and {sizes[1]}, which must be equal: one factor runs over "
                "another axis than you meant (a transpose, or a tensor of the wrong length)")
    elif "must be a 3D tensor" in text or _AXIS_RANGE.search(text) is not None:
        return ("an axis counted from the start on a tensor with another number of axes (torch.bmm and "
                "transpose(1, 2) assume exactly (batch, L, d)): the inputs here have any number of leading axes, so "
                "use @ (torch.matmul) and count axes from the end, transpose(-2, -1), dim=-1")
    elif (match := _OUT_OF_BOUNDS.search(text)) is not None and match[1] == match[2]:
        return (f"an index equal to the size ({match[1]}): the last valid index is {int(match[2]) - 1}; an index "
                "computed as floor(x) + 1 at the last point, or a range that includes its end, reads one past it: "
                "clamp it (.clamp(max=size - 1)) or stop the range one earlier")
    elif "view size is not compatible with input tensor's size and stride" in text:
        return ("view needs a tensor laid out contiguously in memory, and expand or transpose gives one that is not: "
                "use reshape (which copies when it must), or call .contiguous() before .view")
    elif "upper bound and lower bound inconsistent with step sign" in text:
        return ("torch.arange(start, end) got an end below its start: its second argument is where the range stops "
                "(exclusive), not how many values it holds; torch.arange(a, a + n) gives the n values a, ..., "
                "a + n - 1")
    elif "step must be greater than zero" in text:
        return ("PyTorch tensors take no negative step: x[::-1] is not allowed; reverse with x.flip(0) or index with "
                "torch.arange(L - 1, -1, -1)")
    else:
        return ""
    small, large = sorted(sizes)
    if small and large == 2 * small:
        what += (f"; {large} is twice {small}: if one side counts the d coordinates and the other the d/2 pairs, "
                 "make both count the same (a ladder of frequencies has one entry per pair, d/2 in a dimension d)")
    return f"a shape mismatch: {what}"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Session:
    """Runs the hidden cases of one checker and collects problems, notes and counts."""

    def __init__(self, exercise: str, fn: Callable[..., Any]) -> None:
        self.exercise = exercise
        self.fn = fn
        self.cases = 0
        self.failed_cases = 0
        self.problems: dict[str, str] = {}
        self.notes: dict[str, str] = {}
        self.failed_tags: list[frozenset[str]] = []
        self.passed_tags: list[frozenset[str]] = []
        self.case_failed = False

    def call(self, call: str, *args: Any, **kwargs: Any) -> Any:
        """Call the student's function; its exceptions become problems naming the ``call``."""
        try:
            return self.fn(*args, **kwargs)
        except NotImplementedError:
            raise _NotImplementedYet from None
        except Exception as error:  # the student's bug, reported rather than raised
            explained = _explain_error(str(error))
            raise _Problem(
                f"raised {type(error).__name__}",
                f"{call} raised {type(error).__name__}: {_short(str(error))}{_where_raised(error)}"
                + (f"\n{explained}" if explained else ""),
            ) from None

    def problem(self, key: str, message: str) -> None:
        """Record a problem of the current case without ending it."""
        self.case_failed = True
        self.problems.setdefault(key, message)

    def note(self, key: str, message: str) -> None:
        """Record a remark that does not fail the check (e.g. on precision)."""
        self.notes.setdefault(key, message)

    def run(self, case: Callable[[], None], tags: Iterable[str] = ()) -> bool:
        """Run one hidden case; return whether it passed."""
        self.cases += 1
        self.case_failed = False
        try:
            case()
        except _NotImplementedYet:
            raise
        except _Problem as problem:
            self.problem(problem.key, problem.message)
        except Exception as error:  # an output the checker cannot read: still a report, not a crash
            self.problem(
                f"unreadable {type(error).__name__}",
                f"the checker could not analyse what your function returned ({type(error).__name__}: "
                f"{_short(str(error))}); check the type and shape of your return value",
            )
        (self.failed_tags if self.case_failed else self.passed_tags).append(frozenset(tags))
        if self.case_failed:
            self.failed_cases += 1
        return not self.case_failed

    def only_failed_with(self, tag: str) -> bool:
        """Whether some case failed and every failed case has ``tag``."""
        return bool(self.failed_tags) and all(tag in tags for tags in self.failed_tags)

    def failed_exactly_with(self, tag: str) -> bool:
        """Whether the failed cases are exactly those with ``tag``: a hint about ``tag`` is then safe."""
        return self.only_failed_with(tag) and not any(tag in tags for tags in self.passed_tags)

    def result(self, verified: Sequence[str]) -> CheckResult:
        if not self.problems:
            return CheckResult(self.exercise, True, (*verified, *self.notes.values()), self.cases)
        messages = list(self.problems.values())
        shown = messages[:_MAX_MESSAGES]
        if len(messages) > _MAX_MESSAGES:
            shown.append(f"... and {len(messages) - _MAX_MESSAGES} more kinds of problem: fix the ones above first")
        shown.append(f"failed {self.failed_cases} of {self.cases} hidden cases")
        return CheckResult(self.exercise, False, (*shown, *self.notes.values()), self.cases, self.failed_cases)


def _run_checker(
    exercise: str, fn: Callable[..., Any], body: Callable[[_Session], list[str]],
    reading: tuple[Sequence[str], Callable[[], str | None]] | None = None,
) -> CheckResult:
    """Run ``body`` on a new session and report; ``reading`` is ``(generic keys, read)`` for a checker's own diagnosis.

    When a problem under one of the generic keys remains (a report of the first wrong entry, no mistake named),
    ``read()`` (a reading of :mod:`posenc.exercises._transforms` on the checker's probe inputs) is said before it.
    """
    _check_callable(fn)
    session = _Session(exercise, fn)
    try:
        verified = body(session)
    except _NotImplementedYet:
        message = (
            "not implemented yet: your function raised NotImplementedError. Replace the "
            "`raise NotImplementedError` line with your code, then run the check again."
        )
        return CheckResult(exercise, False, (message,), session.cases)
    if reading is not None and _DIAGNOSIS["on"] and (
            key := next((key for key in reading[0] if key in session.problems), None)):
        try:
            said = reading[1]()
        except Exception:  # noqa: BLE001 (a reading is a help, never a reason to fail differently)
            said = None
        if said:
            session.problems[key] = f"{said}\n{session.problems[key]}"
    return session.result(verified)


# --------------------------------------------------------------------------- formatting and outputs


def _num(value: float) -> str:
    return f"{value:.4g}"


def _distinct(expected: float, got: float) -> tuple[str, str]:
    """Format two numbers with enough digits to show that they differ."""
    for digits in range(4, 11):
        shown = f"{expected:.{digits}g}", f"{got:.{digits}g}"
        if shown[0] != shown[1]:
            break
    return shown


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _runs_text(indices: list[int]) -> str:
    """Increasing indices written as runs: ``[0, 1, 2, 5]`` -> ``"0..2, 5"``."""
    runs: list[list[int]] = []
    for index in indices:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return ", ".join(f"{run[0]}" if len(run) == 1 else f"{run[0]}..{run[-1]}" for run in runs)


def _type_name(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} ({_dtype(value.dtype)})"
    if value is None:
        return "None (did you forget the return statement?)"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _describe(name: str, tensor: torch.Tensor) -> str:
    return f"{name} of shape {tuple(tensor.shape)} ({_dtype(tensor.dtype)})"


def _values(tensor: torch.Tensor, limit: int = 8) -> str:
    items = tensor.flatten().tolist()
    shown = ", ".join(_num(item) if isinstance(item, float) else str(item) for item in items[:limit])
    return f"[{shown}{', ...' if len(items) > limit else ''}]"


def _expect_tensor(value: object, what: str, call: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise _Problem("return type", f"{call} returned {_type_name(value)}; expected {what} (a torch.Tensor)")
    return value.detach().cpu()


def _expect_shape(tensor: torch.Tensor, shape: tuple[int, ...], what: str, call: str, hint: str = "") -> None:
    if tuple(tensor.shape) != shape:
        raise _Problem(
            f"shape of {what}",
            f"{call} returned {what} of shape {tuple(tensor.shape)}; expected shape {shape}{hint}"
            f"{_shape_hint(tuple(tensor.shape), shape)}",
        )


def _shape_hint(got: tuple[int, ...], expected: tuple[int, ...]) -> str:
    """What a wrong shape says about the slip: axes in another order, one missing or extra, one too long."""
    if sorted(got) == sorted(expected) and len(got) > 1:
        return ": the same sizes in another order, so your axes are permuted (check which axis each index runs over)"
    if len(got) == len(expected) - 1 and any(got == expected[:i] + expected[i + 1:] for i in range(len(expected))):
        return ": one axis is missing (a reduction or an indexing that drops it, or a broadcast that never added it)"
    if len(got) == len(expected) + 1 and any(got[:i] + got[i + 1:] == expected for i in range(len(got))):
        return ": one axis too many (an unsqueeze, a stack or a broadcast that should have been merged or summed)"
    if len(got) == len(expected):
        wrong = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
        steps = {got[i] - expected[i] for i in wrong}
        if len(steps) == 1 and abs(next(iter(steps))) == 1 and len({expected[i] for i in wrong}) == 1:
            step = next(iter(steps))
            how = "one too many" if step > 0 else "one too few"
            return (f": every axis of size {expected[wrong[0]]} has {got[wrong[0]]}, {how} (a range that includes its "
                    "end, arange(n + 1) or linspace, or one that stops one short)")
        ratios = {got[i] / expected[i] for i in wrong if expected[i]}
        if len(wrong) >= 2 and len(wrong) == len(expected) and len(ratios) == 1 and next(iter(ratios)) in (2, 0.5):
            how = "twice" if next(iter(ratios)) == 2 else "half"
            return (f": every axis is {how} as long as expected, so a count behind all of them is {how} as large "
                    "(blocks or pairs counted with d // 2 where d // 4 belongs, or the reverse)")
        if len(wrong) == 1:
            axis = wrong[0] - len(expected)
            return (f": only axis {axis} differs ({got[wrong[0]]} instead of {expected[wrong[0]]}), the size of "
                    "something you count, repeat or project along that axis")
    return ""


def _expect_floating(tensor: torch.Tensor, what: str, call: str, expected: str) -> None:
    if not tensor.is_floating_point():
        raise _Problem(
            f"dtype of {what}",
            f"{call} returned {what} of dtype {_dtype(tensor.dtype)}; expected {expected}",
        )


def _expect_integer(session: _Session, tensor: torch.Tensor, what: str, call: str) -> None:
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        raise _Problem(
            f"dtype of {what}",
            f"{call} returned {what} of dtype {_dtype(tensor.dtype)}; expected integers of dtype int64 "
            "(torch.long), the dtype of indices into an embedding table: use integer arithmetic or .long()",
        )
    if tensor.dtype != torch.long:
        session.note(
            "long",
            f"note: your function returns {_dtype(tensor.dtype)}; the reference returns int64 (torch.long), "
            "the usual dtype of indices. Another integer dtype is accepted: embedding lookups and indexing take "
            "int32 as well; a float or boolean dtype is the mistake",
        )


def _expect_finite(tensor: torch.Tensor, what: str, call: str, hint: str) -> None:
    finite = torch.isfinite(tensor)
    if not bool(finite.all()):
        index = tuple(int(i) for i in (~finite).nonzero()[0])
        raise _Problem(
            f"not finite {what}",
            f"{call} returned {what} with {float(tensor[index])} at index {index}; {hint}",
        )


def _unchanged(
    session: _Session, originals: dict[str, torch.Tensor], given: dict[str, torch.Tensor], call: str
) -> None:
    for name, original in originals.items():
        if not torch.equal(original, given[name]):
            session.problem(
                f"in place {name}",
                f"{call} modified its input {name} in place; a function should leave its inputs "
                f"unchanged (an in-place operation such as {name} /= ..., {name}[...] = ... or "
                f"{name}.mul_(...) changes the caller's tensor): work on a new tensor instead",
            )


# --------------------------------------------------------------------------- comparing tensors


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol))


def _first_difference(got: torch.Tensor, expected: torch.Tensor, atol: float = 1e-5) -> tuple[int, ...]:
    difference = (got.double() - expected.double()).abs().nan_to_num(float("inf"))
    index = int(torch.argmax((difference > atol).flatten().to(torch.uint8)))
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(index), got.shape))
