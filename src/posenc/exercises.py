r"""Auto-checkers for the coding exercises: run a student's function, diagnose its mistakes.

Each ``check_*`` function takes *your own* implementation of an exercise, runs it on hidden cases
(random inputs drawn from a private, seeded :class:`torch.Generator`, so the checker never touches
the global random state), compares it with the reference implementation of :mod:`posenc` and
tests properties the result must have. It returns a :class:`CheckResult`: true when everything
passed, and in every case a list of specific messages. A failed check says on which input your
function went wrong, what was expected and what it returned, and recognises the typical mistakes
(for instance sine and cosine swapped, a mask convention inverted or a rotation in the wrong
direction). The checker never raises because of your function: an exception inside it is
reported like a wrong answer.

In a notebook::

    from posenc.exercises import check_sinusoidal

    def my_encoding(seq_len, dim, base=10000.0):
        raise NotImplementedError  # replace this line with your code

    check_sinusoidal(my_encoding)        # displays the report
    assert check_sinusoidal(my_encoding)  # for autograding

Checkers:

- :func:`check_attention`: scaled dot-product attention with a boolean mask
- :func:`check_padded_positions`: RoBERTa-style position ids of a padded batch
- :func:`check_sinusoidal`: the sinusoidal encoding table
- :func:`check_t5_bucket`: T5's relative position buckets
- :func:`check_alibi_slopes`: ALiBi's per-head slopes
- :func:`check_apply_rope`: rotary position embedding
"""

from __future__ import annotations

import itertools
import math
import os
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ._validation import check_choice, check_int
from .attention import attention_weights
from .relative import alibi_slopes, t5_relative_position_bucket
from .rotary import ROPE_LAYOUTS, apply_rope

__all__ = [
    "CheckResult",
    "check_alibi_slopes",
    "check_apply_rope",
    "check_attention",
    "check_padded_positions",
    "check_sinusoidal",
    "check_t5_bucket",
]

_SEED = 20240611
"""Seed of the private generator of every checker: the hidden cases are the same at every run."""

_EPS32 = torch.finfo(torch.float32).eps
_MAX_MESSAGES = 4
"""At most this many distinct problems are listed; the rest are counted."""


# --------------------------------------------------------------------------- the result


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
    """

    exercise: str
    passed: bool
    feedback: tuple[str, ...]
    cases: int

    def __bool__(self) -> bool:
        return self.passed

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


_LIBRARIES = (os.path.dirname(torch.__file__), os.path.dirname(__file__))


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
            raise _Problem(
                f"raised {type(error).__name__}",
                f"{call} raised {type(error).__name__}: {_short(str(error))}{_where_raised(error)}",
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

    def result(self, verified: Sequence[str]) -> CheckResult:
        if not self.problems:
            return CheckResult(self.exercise, True, (*verified, *self.notes.values()), self.cases)
        messages = list(self.problems.values())
        shown = messages[:_MAX_MESSAGES]
        if len(messages) > _MAX_MESSAGES:
            shown.append(f"... and {len(messages) - _MAX_MESSAGES} more kinds of problem: fix the ones above first")
        shown.append(f"failed {self.failed_cases} of {self.cases} hidden cases")
        return CheckResult(self.exercise, False, (*shown, *self.notes.values()), self.cases)


def _run_checker(exercise: str, fn: Callable[..., Any], body: Callable[[_Session], list[str]]) -> CheckResult:
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
            f"{call} returned {what} of shape {tuple(tensor.shape)}; expected shape {shape}{hint}",
        )


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
            "the usual dtype of indices",
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


# --------------------------------------------------------------------------- attention


def _attention_reference(
    q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None, *, scale: float, dim: int = -1
) -> torch.Tensor:
    scores = (q.double() @ k.double().transpose(-2, -1)) / scale
    if dim == -1:
        return attention_weights(scores, mask=mask)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=dim).nan_to_num(0.0)


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol))


def _first_difference(got: torch.Tensor, expected: torch.Tensor, atol: float = 1e-5) -> tuple[int, ...]:
    difference = (got.double() - expected.double()).abs().nan_to_num(float("inf"))
    index = int(torch.argmax((difference > atol).flatten().to(torch.uint8)))
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(index), got.shape))


def _attention_cases(generator: torch.Generator) -> list[dict[str, Any]]:
    def randn(*shape: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        return torch.randn(*shape, generator=generator, dtype=dtype)

    def random_mask(rows: int, cols: int) -> torch.Tensor:
        # Every row allows at least one key and masks at least one, so no row is fully masked,
        # whichever convention the student uses.
        mask = torch.rand(rows, cols, generator=generator) < 0.6
        for row in range(rows):
            allowed, blocked = torch.randperm(cols, generator=generator)[:2].tolist()
            mask[row, allowed], mask[row, blocked] = True, False
        return mask

    padding = torch.ones(2, 1, 1, 6, dtype=torch.bool)
    padding[0, ..., 4:] = False
    padding[1, ..., 5:] = False
    return [
        {"q": randn(4, 12), "k": randn(7, 12), "v": randn(7, 5), "mask": None, "tags": {"2-D"}},
        {
            "q": randn(2, 3, 4, 8),
            "k": randn(2, 3, 6, 8),
            "v": randn(2, 3, 6, 3),
            "mask": random_mask(4, 6),
            "tags": {"batch"},
        },
        {"q": randn(6, 8), "k": randn(6, 8), "v": randn(6, 8), "mask": torch.ones(6, 6, dtype=torch.bool).tril()},
        {
            "q": randn(2, 2, 5, 10, dtype=torch.float32),
            "k": randn(2, 2, 6, 10, dtype=torch.float32),
            "v": randn(2, 2, 6, 4, dtype=torch.float32),
            "mask": padding,
            "tags": {"batch"},
        },
        {
            "q": randn(5, 16, dtype=torch.float32),
            "k": randn(5, 16, dtype=torch.float32),
            "v": randn(5, 16, dtype=torch.float32),
            "mask": random_mask(5, 5),
        },
    ]


def _diagnose_weights(
    got: torch.Tensor, expected: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    mask: torch.Tensor | None, call: str,
) -> _Problem:
    d, dv, q_len, k_len = q.shape[-1], v.shape[-1], q.shape[-2], k.shape[-2]
    got = got.double().nan_to_num(0.0)
    full_mask = None if mask is None else mask.expand(expected.shape)
    if full_mask is not None:
        support = got.abs() > 1e-7
        rows = (~full_mask).any(-1)
        if bool(rows.any()) and bool((support == ~full_mask)[rows].all()):
            index = tuple(int(i) for i in rows.nonzero()[0])
            allowed = full_mask[index].nonzero().flatten().tolist()
            blocked = (~full_mask[index]).nonzero().flatten().tolist()
            return _Problem(
                "mask inverted",
                f"mask convention inverted: in {call}, query {index[-1]} may attend to keys {allowed} "
                f"(mask True) but your weights are nonzero exactly at the masked keys {blocked}. In posenc, "
                "as in torch.nn.functional.scaled_dot_product_attention, True means \"may attend\": "
                "fill the scores with -inf where the mask is False (masked_fill(~mask, -inf))",
            )
        if _close(got, _attention_reference(q, k, None, scale=math.sqrt(d))):
            index = tuple(int(i) for i in (~full_mask).nonzero()[0])
            return _Problem(
                "mask ignored",
                f"the mask is ignored: in {call}, query {index[-2]} must not attend to key {index[-1]} "
                f"(mask False), but its weight is {_num(float(got[index]))}; your weights equal the "
                "unmasked softmax. Set the masked scores to -inf before the softmax",
            )
    row_sums = got.sum(-1)
    bad_rows = (row_sums - 1).abs() > 1e-4
    if _close(got, _attention_reference(q, k, mask, scale=math.sqrt(d), dim=-2)) or (
        bool(bad_rows.any()) and bool(((got.sum(-2) - 1).abs() < 1e-4).all())
    ):
        index = tuple(int(i) for i in bad_rows.nonzero()[0])
        return _Problem(
            "softmax axis",
            f"softmax over the wrong axis: in {call}, row {index[-1]} of the weights (query {index[-1]}) sums "
            f"to {_num(float(row_sums[index]))} over the keys, while every column sums to 1: you normalised "
            "over the queries. Each query's weights must sum to 1 over the keys: softmax(scores, dim=-1)",
        )
    scalings = [
        (1.0, "your weights equal softmax(q kᵀ) without scaling: divide the scores by sqrt(d) = "
         f"sqrt({d}) ≈ {_num(math.sqrt(d))} before the softmax"),
        (float(d), f"you scale the scores by d = {d}; the scale is sqrt(d) = sqrt({d}) ≈ {_num(math.sqrt(d))}"),
        (math.sqrt(dv), f"you scale by sqrt(dv) = sqrt({dv}), the value dimension v.shape[-1]; the scale is "
         f"sqrt(d) = sqrt({d}), with d = q.shape[-1] the query/key dimension"),
        (float(dv), f"you scale by dv = {dv}, the value dimension; the scale is sqrt(d) = sqrt({d}), with d = "
         "q.shape[-1] the query/key dimension"),
        (math.sqrt(k_len), f"you scale by sqrt(Lk) = sqrt({k_len}), the number of keys k.shape[-2]; the scale is "
         f"sqrt(d) = sqrt({d}) with d = q.shape[-1], the last axis"),
        (math.sqrt(q_len), f"you scale by sqrt(Lq) = sqrt({q_len}), the number of queries q.shape[-2]; the scale "
         f"is sqrt(d) = sqrt({d}) with d = q.shape[-1], the last axis"),
        (1 / math.sqrt(d), f"you multiply the scores by sqrt(d) = sqrt({d}); divide by it instead"),
    ]
    for scale, message in scalings:
        if not math.isclose(scale, math.sqrt(d)) and _close(got, _attention_reference(q, k, mask, scale=scale)):
            return _Problem(f"scale {message[:20]}", f"wrong scaling in {call}: {message}")
    if bool(bad_rows.any()):
        index = tuple(int(i) for i in bad_rows.nonzero()[0])
        scores = q.double() @ k.double().transpose(-2, -1)
        unnormalised = _close(got, scores / math.sqrt(d)) or _close(got, scores)
        return _Problem(
            "row sums",
            f"in {call}, row {index[-1]} of the weights sums to {_num(float(row_sums[index]))}; each query's "
            "weights must sum to 1 over the keys"
            + (": your weights are the raw scores, the softmax is missing" if unnormalised else
               ": apply softmax over the last axis (dim=-1) after masking"),
        )
    if full_mask is not None and bool((got.abs() > 1e-7)[~full_mask].any()):
        index = tuple(int(i) for i in ((got.abs() > 1e-7) & ~full_mask).nonzero()[0])
        return _Problem(
            "masked weight",
            f"in {call}, query {index[-2]} must not attend to key {index[-1]} (mask False) but gets weight "
            f"{_num(float(got[index]))}: masked keys must get weight exactly 0 (fill their scores with -inf, "
            "not with 0, before the softmax)",
        )
    index = _first_difference(got, expected)
    should, was = _distinct(float(expected[index]), float(got[index]))
    return _Problem(
        "weights",
        f"in {call}, the weight of query {index[-2]} on key {index[-1]} should be {should}, "
        f"got {was}; the weights are softmax(q kᵀ / sqrt(d)) over the keys, with masked "
        "scores set to -inf",
    )


def _diagnose_output(
    got: torch.Tensor, expected: torch.Tensor, weights: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
    v: torch.Tensor, call: str,
) -> _Problem:
    got = got.double()
    v64, k64 = v.double(), k.double()
    variants: list[tuple[Callable[[], torch.Tensor], str]] = [
        (lambda: weights.transpose(-2, -1) @ v64, "your output is weightsᵀ @ v: multiply the weights, not their "
         "transpose, by the values (output = weights @ v)"),
        (lambda: weights @ k64, "your output is weights @ k: the output mixes the values v, not the keys"),
        (lambda: (q.double() @ k64.transpose(-2, -1) / math.sqrt(q.shape[-1])) @ v64,
         "your output mixes the values with the raw scores: use the weights (after the softmax)"),
    ]
    for variant, message in variants:
        try:
            candidate = variant()
        except RuntimeError:
            continue
        if _close(got, candidate):
            return _Problem(
                f"output {message[:24]}", f"the weights are right but the output is not, in {call}: {message}"
            )
    index = _first_difference(got, expected)
    should, was = _distinct(float(expected[index]), float(got[index]))
    return _Problem(
        "output",
        f"the weights are right but the output is not, in {call}: query {index[-2]}, feature {index[-1]} "
        f"should be {should} (as torch.nn.functional.scaled_dot_product_attention gives), "
        f"got {was}; the output is weights @ v, of shape (..., Lq, dv)",
    )


def check_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's scaled dot-product attention ``fn(q, k, v, mask=None) -> (output, weights)``.

    The function must take ``q (..., Lq, d)``, ``k (..., Lk, d)``, ``v (..., Lk, dv)`` and an
    optional boolean ``mask`` broadcastable to ``(..., Lq, Lk)`` (True = may attend, the posenc
    convention), and return ``output (..., Lq, dv)`` and ``weights (..., Lq, Lk)``. It is run on
    hidden 2-D and batched inputs, float32 and float64, with ``d != dv``, random, causal and
    padding masks (never a fully masked row). The weights are compared with
    :func:`posenc.attention.attention_weights` and the outputs with
    :func:`torch.nn.functional.scaled_dot_product_attention`.

    Diagnosed mistakes: softmax over the wrong axis; missing ``1/sqrt(d)`` scaling, or scaling by
    ``d``, ``sqrt(dv)``, ``dv`` or a sequence length; mask convention inverted; mask ignored;
    masked keys with nonzero weight; output not ``weights @ v``; outputs swapped; wrong shapes or
    dtype; inputs modified in place; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        for case in _attention_cases(generator):
            session.run(partial(_attention_case, session, case), case.get("tags", ()))
        return [
            f"weights match posenc.attention_weights and outputs match "
            f"torch.nn.functional.scaled_dot_product_attention on {session.cases} hidden cases: 2-D and batched "
            "(batch, heads) inputs, d ≠ dv, float32 and float64",
            "each query's weights sum to 1 over the keys (softmax over the last axis); scores are scaled by "
            "1/sqrt(d) with d = q.shape[-1]",
            "masked keys (mask False) get weight 0, with random, causal and broadcast padding masks",
            "returns (output, weights) with the right shapes and dtype, and leaves its inputs unchanged",
        ]

    return _run_checker("scaled dot-product attention", fn, body)


def _attention_case(session: _Session, case: dict[str, Any]) -> None:
    q, k, v, mask = case["q"], case["k"], case["v"], case["mask"]
    given = {"q": q.clone(), "k": k.clone(), "v": v.clone()}
    arguments = f"{_describe('q', q)}, {_describe('k', k)}, {_describe('v', v)}"
    if mask is None:
        call = f"fn({arguments})"
        returned = session.call(call, given["q"], given["k"], given["v"])
    else:
        given["mask"] = mask.clone()
        call = f"fn({arguments}, mask of shape {tuple(mask.shape)})"
        returned = session.call(call, given["q"], given["k"], given["v"], mask=given["mask"])
    originals = {"q": q, "k": k, "v": v} | ({} if mask is None else {"mask": mask})
    _unchanged(session, originals, given, call)
    if isinstance(returned, torch.Tensor) or not isinstance(returned, (tuple, list)) or len(returned) != 2:
        raise _Problem(
            "return pair",
            f"{call} returned {_type_name(returned)}; expected a pair (output, weights): end with "
            "`return output, weights`",
        )
    output = _expect_tensor(returned[0], "output", call)
    weights = _expect_tensor(returned[1], "weights", call)
    batch = tuple(torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    output_shape = (*batch, q.shape[-2], v.shape[-1])
    weights_shape = (*batch, q.shape[-2], k.shape[-2])
    if output_shape != weights_shape and (tuple(output.shape), tuple(weights.shape)) == (weights_shape, output_shape):
        raise _Problem(
            "swapped",
            f"{call} returned (weights, output) in this order: return (output, weights), output first",
        )
    _expect_shape(output, output_shape, "output", call, " = (..., Lq, dv)")
    _expect_shape(weights, weights_shape, "weights", call, " = (..., Lq, Lk)")
    for name, tensor in (("output", output), ("weights", weights)):
        if tensor.dtype != q.dtype:
            session.problem(
                f"dtype {name}",
                f"{call} returned {name} of dtype {_dtype(tensor.dtype)}; expected {_dtype(q.dtype)}, the dtype "
                "of the inputs",
            )
    _expect_floating(weights, "weights", call, "floating-point weights")
    _expect_floating(output, "output", call, "a floating-point output")
    _expect_finite(
        weights, "weights", call, "no query row is fully masked in these cases, so every weight must be a finite "
        "number (masked keys get -inf scores, but softmax turns them into 0)",
    )
    _expect_finite(output, "output", call, "every output entry must be a finite number")
    expected_weights = _attention_reference(q, k, mask, scale=math.sqrt(q.shape[-1]))
    if not _close(weights, expected_weights):
        raise _diagnose_weights(weights, expected_weights, q, k, v, mask, call)
    expected_output = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)
    if not _close(output, expected_output):
        raise _diagnose_output(output, expected_output, expected_weights, q, k, v, call)


# --------------------------------------------------------------------------- padded positions


def _padded_reference(input_ids: torch.Tensor, mask_idx: int, offset_idx: int) -> torch.Tensor:
    real = input_ids.ne(mask_idx).long()
    return torch.cumsum(real, dim=-1) * real + offset_idx


def _padding_kind(row: torch.Tensor, padding_idx: int) -> str:
    real = row.ne(padding_idx)
    count = int((~real).sum())
    if count == 0:
        return "no padding"
    if count == row.numel():
        return "all padding"
    first, last = int(real.nonzero()[0]), int(real.nonzero()[-1])
    if not bool(real[first : last + 1].all()):
        return "padding inside"
    if first > 0 and last == row.numel() - 1:
        return f"left padding: {count} padding token{'s' if count > 1 else ''} first"
    if first == 0:
        return f"right padding: {count} padding token{'s' if count > 1 else ''} at the end"
    return "padding on both sides"


def _padded_batch(
    generator: torch.Generator, lengths: Sequence[int], seq_len: int, sides: Sequence[str], padding_idx: int,
    plant: int | None = None,
) -> torch.Tensor:
    ids = torch.randint(2, 60, (len(lengths), seq_len), generator=generator)
    ids = torch.where(ids == padding_idx, ids + 7, ids)
    if plant is not None and plant != padding_idx:
        ids[:, ::3] = plant  # a real token whose id is some other padding_idx
    for row, (length, side) in enumerate(zip(lengths, sides, strict=True)):
        if side == "left":
            ids[row, : seq_len - length] = padding_idx
        else:
            ids[row, length:] = padding_idx
    return ids


def check_padded_positions(fn: Callable[..., Any], padding_idx: int = 1) -> CheckResult:
    """Check a student's RoBERTa-style position ids ``fn(input_ids, padding_idx=1) -> LongTensor``.

    For a batch ``input_ids`` of shape ``(batch, seq_len)`` in which padding tokens have the id
    ``padding_idx``, real tokens must get the positions ``padding_idx + 1, padding_idx + 2, ...``,
    counting only real tokens, and padding tokens the position ``padding_idx`` (as in Hugging
    Face's ``create_position_ids_from_input_ids``). The hidden batches pad on the right, on the
    left, not at all, and mix these in one batch; some use other values of ``padding_idx`` (0 and
    ``padding_idx + 3``) and one relies on the default ``padding_idx=1``.

    Diagnosed mistakes: counting slots instead of real tokens (right padding works, left padding
    does not); padding tokens not set to ``padding_idx``; positions off by one (starting at
    ``padding_idx`` or ``padding_idx + 2``); the ``padding_idx`` argument ignored; wrong shape or
    dtype; input modified in place; exceptions.

    Args:
        fn: the student's function.
        padding_idx: the padding id of the main hidden cases (>= 0).

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable or ``padding_idx`` is not an integer.
        ValueError: if ``padding_idx < 0``.
    """
    _check_callable(fn)
    main = check_int("padding_idx", padding_idx, minimum=0)
    others = [main + 3, 0 if main != 0 else 2]

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        cases: list[tuple[torch.Tensor, int, bool, set[str]]] = [
            (_padded_batch(generator, [8, 5, 2], 8, ["left"] * 3, main), main, True, {"left"}),
            (_padded_batch(generator, [7, 4, 2], 7, ["right"] * 3, main), main, True, {"right"}),
            (_padded_batch(generator, [6, 6], 6, ["right"] * 2, main), main, True, {"none"}),
            (_padded_batch(generator, [9, 4, 6, 3], 9, ["right", "left", "left", "right"], main), main, True, set()),
            (_padded_batch(generator, [3], 6, ["left"], main), main, True, {"left"}),
            (_padded_batch(generator, [5, 3, 2], 6, ["right", "left", "left"], 1), 1, False, {"default"}),
        ]
        for other in others:
            plant = 1 if other != 1 else None
            ids = _padded_batch(generator, [5, 3, 6], 7, ["left", "right", "left"], other, plant=plant)
            cases.append((ids, other, True, {"other"}))
        for ids, pad, explicit, tags in cases:
            session.run(partial(_padded_case, session, ids, pad, explicit), tags)
        values = ", ".join(str(value) for value in sorted({main, *others}))
        return [
            f"matches the reference (cumulative count of real tokens + padding_idx) on {session.cases} hidden "
            "batches: right padding, left padding, no padding, and rows padded differently in one batch",
            "real tokens are numbered padding_idx + 1, padding_idx + 2, ... counting only real tokens; padding "
            "tokens get padding_idx",
            f"the padding_idx argument is used, for padding detection and numbering (tested with padding_idx = "
            f"{values}, and through the default padding_idx=1)",
        ]

    return _run_checker("padded positions", fn, body)


def _padded_case(session: _Session, ids: torch.Tensor, pad: int, explicit: bool) -> None:
    given = ids.clone()
    call = f"fn(input_ids of shape {tuple(ids.shape)}, padding_idx={pad})" if explicit else (
        f"fn(input_ids of shape {tuple(ids.shape)}) (default padding_idx=1)"
    )
    returned = session.call(call, given, padding_idx=pad) if explicit else session.call(call, given)
    _unchanged(session, {"input_ids": ids}, {"input_ids": given}, call)
    got = _expect_tensor(returned, "positions", call)
    _expect_shape(got, tuple(ids.shape), "positions", call, " (the shape of input_ids)")
    _expect_integer(session, got, "positions", call)
    got = got.long()
    expected = _padded_reference(ids, pad, pad)
    if torch.equal(got, expected):
        return
    real = ids.ne(pad)
    bad_rows = (got != expected).any(-1).nonzero().flatten().tolist()
    row = bad_rows[0]

    def where(row: int) -> str:
        return f"row {row} of input_ids = {ids[row].tolist()} ({_padding_kind(ids[row], pad)})"

    def rows(row: int) -> str:
        return f"expected {expected[row].tolist()}, got {got[row].tolist()}"

    slots = torch.arange(ids.shape[-1]).expand_as(ids) + pad + 1
    if not torch.equal(got[real], expected[real]):
        difference = (got - expected)[real]
        shift = int(difference[0]) if bool((difference == difference[0]).all()) else None
        # With padding_idx=0, starting one too high and ignoring padding_idx look alike: a shift
        # already seen with the main padding_idx decides.
        seen_shift = shift is not None and f"off by {shift}" in session.problems
        ignored = [
            (_padded_reference(ids, 1, pad), "detects padding with the id 1 instead of padding_idx"),
            (_padded_reference(ids, pad, 1), "numbers tokens from 1 + 1 = 2 instead of padding_idx + 1"),
            (_padded_reference(ids, 1, 1), "behaves as if padding_idx were 1"),
        ]
        if torch.equal(got[real], slots[real]):
            session.problem(
                "slots",
                f"counts slots instead of real tokens: {where(row)}: {rows(row)}. Your positions are the column "
                "numbers + padding_idx + 1, which is right only when padding comes last; in a left-padded row the "
                f"first real token must get padding_idx + 1 = {pad + 1}. Count the real tokens instead: a "
                "cumulative sum along the row of the mask input_ids != padding_idx",
            )
        elif pad != 1 and not seen_shift and any(torch.equal(got[real], variant[real]) for variant, _ in ignored):
            what = next(text for variant, text in ignored if torch.equal(got[real], variant[real]))
            session.problem(
                "padding_idx ignored",
                f"the padding_idx argument is ignored: with padding_idx={pad}, your function {what}. {where(row)}: "
                f"{rows(row)}. Use the argument, not the constant 1",
            )
        elif shift is not None:
            start = pad + 1 + shift
            if shift > 0:
                hint = "the cumulative sum of the mask already counts from 1, so add padding_idx to it, not more"
            else:
                hint = "add padding_idx to a count of real tokens that starts at 1 (a cumulative sum of the mask)"
            session.problem(
                f"off by {shift}",
                f"off by {'one' if abs(shift) == 1 else abs(shift)} ({shift:+d}): {where(row)}: {rows(row)}. The "
                f"first real token must get padding_idx + 1 = {pad + 1}, you start at {start}"
                + (" = padding_idx, which is reserved for padding" if start == pad else "")
                + f": {hint}",
            )
        else:
            column = int((got[row] != expected[row]).nonzero()[0])
            session.problem(
                "real tokens",
                f"{where(row)}: {rows(row)}; the first difference is at column {column}. Real tokens count "
                f"{pad + 1}, {pad + 2}, ... in order, skipping padding tokens",
            )
    padding_values = got[~real]
    if padding_values.numel() and not bool((padding_values == pad).all()):
        index = tuple(int(i) for i in ((got != pad) & ~real).nonzero()[0])
        counted = torch.cumsum(real.long(), -1) + pad
        hint = (
            ": multiply the cumulative count by the mask so that padding tokens get 0 before adding padding_idx"
            if torch.equal(got[~real], counted[~real]) or torch.equal(got[~real], slots[~real])
            else ""
        )
        if pad != 1 and int(got[index]) == 1:
            hint = ": 1 is only the default padding_idx; use the argument"
        session.problem(
            "padding values",
            f"padding tokens are not set to padding_idx: {where(index[0])}: column {index[1]} is padding (id {pad}), "
            f"so its position must be padding_idx = {pad}, got {int(got[index])}{hint}",
        )
    if not session.case_failed:  # a difference the diagnoses above did not name
        session.problem("positions", f"{where(row)}: {rows(row)}")


# --------------------------------------------------------------------------- sinusoidal encoding


@dataclass(frozen=True)
class _SinusoidVariant:
    """One way of building the table: the reference, or the reference with typical deviations."""

    concatenated: bool = False
    cos_first: bool = False
    pair_exponent: bool = False  # theta_k = base^(-k/dim) instead of base^(-2k/dim)
    base: float | None = None  # None: the base asked for
    offset: int = 0  # row i encodes position i + offset

    def table(self, seq_len: int, dim: int, base: float) -> torch.Tensor:
        base = self.base if self.base is not None else base
        positions = torch.arange(seq_len, dtype=torch.float64) + self.offset
        k = torch.arange(dim // 2, dtype=torch.float64)
        theta = float(base) ** (-(k if self.pair_exponent else 2 * k) / dim)
        phase = positions[:, None] * theta[None, :]
        first, second = (phase.cos(), phase.sin()) if self.cos_first else (phase.sin(), phase.cos())
        if self.concatenated:
            return torch.cat((first, second), dim=-1)
        return torch.stack((first, second), dim=-1).flatten(-2)

    def entry(self, row: int, column: int, dim: int) -> str:
        """The formula of entry ``(row, column)``, e.g. ``cos(3·θ_2)``."""
        if self.concatenated:
            k, second = column % (dim // 2), column >= dim // 2
        else:
            k, second = column // 2, bool(column % 2)
        function = ("sin", "cos")[second != self.cos_first]
        theta = "θ'" if self.pair_exponent or self.base is not None else "θ"
        return f"{function}({row + self.offset}·{theta}_{k})"

    def deviations(self) -> int:
        return sum((self.concatenated, self.cos_first, self.pair_exponent, self.base is not None, self.offset != 0))


def _sinusoid_bound(seq_len: int, offset: int = 0) -> torch.Tensor:
    """Per-row tolerance: float32 rounding, plus the error of angles i·θ_k formed in float32."""
    positions = (torch.arange(seq_len, dtype=torch.float64) + offset).abs()
    return (2e-6 + 8 * _EPS32 * positions)[:, None]


def _explain_sinusoid(variant: _SinusoidVariant, base: float) -> str:
    parts = []
    if variant.concatenated:
        parts.append(
            "your table is in the concatenated layout (all sines, then all cosines"
            + (", cosines first" if variant.cos_first else "")
            + "); this exercise asks for the interleaved layout P[i, 2k] = sin(i·θ_k), P[i, 2k+1] = cos(i·θ_k): "
            "stack sin and cos on a new last axis and flatten, or fill the columns 0::2 and 1::2"
        )
    elif variant.cos_first:
        parts.append(
            "sine and cosine are swapped — check the parity of your column indices: even columns 2k hold "
            "sin(i·θ_k), odd columns 2k+1 hold cos(i·θ_k)"
        )
    if variant.pair_exponent:
        parts.append(
            "your frequencies are θ'_k = base^(-k/dim) instead of θ_k = base^(-2k/dim): the exponent uses the pair "
            "index k where it needs the column index 2k, as in torch.arange(0, dim, 2) / dim"
        )
    if variant.base is not None:
        wrong = variant.base
        if base != 10000.0 and wrong == 10000.0:
            parts.append(
                f"your function ignores its base argument: called with base={base:g} it returns the table for "
                "base 10000 (θ'_k = 10000^(-2k/dim))"
            )
        elif wrong == 1000.0 and base == 10000.0:
            parts.append(
                "your table fits base 1000 instead of 10000 (θ'_k = 1000^(-2k/dim)) — the \"1000 vs 10000\" bug: "
                "check the constant in your frequencies, or use the base argument"
            )
        else:
            parts.append(
                f"your table fits base {_num(wrong)} instead of {base:g} (θ'_k = {_num(wrong)}^(-2k/dim)): check how "
                "you use the base argument"
            )
    if variant.offset:
        parts.append(
            f"your positions start at {variant.offset} instead of 0: row i must encode position i (row 0 is "
            "sin 0 = 0, cos 0 = 1 alternating)"
        )
    return "; ".join(parts)


def _estimate_base(got: torch.Tensor, dim: int) -> float | None:
    """The base that makes ``got[1, 2] = sin(θ_1)`` with ``θ_1 = base^(-2/dim)``, if it is meaningful."""
    if got.shape[0] < 2 or dim < 4:
        return None
    value = float(got[1, 2])
    if not 0 < value < 1:
        return None
    estimate = math.asin(value) ** (-dim / 2)
    return estimate if math.isfinite(estimate) and 1 < estimate < 1e12 else None


def check_sinusoidal(fn: Callable[..., Any]) -> CheckResult:
    r"""Check a student's sinusoidal encoding ``fn(seq_len, dim, base=10000.0) -> (seq_len, dim)``.

    The table must be :func:`posenc.absolute.sinusoidal_encoding`: ``P[i, 2k] = sin(i θ_k)`` and
    ``P[i, 2k+1] = cos(i θ_k)`` with ``θ_k = base^(-2k/dim)``, in float32 or float64. The hidden
    cases use lengths from 1 to 2048, widths from 2 to 64, the default base and others (100, 500
    and a random one).

    Angles formed in float32 (as d2l does) are accepted, with a precision note when their error
    at far positions is visible; errors beyond that fail.

    Diagnosed mistakes: sine and cosine swapped; concatenated layout instead of interleaved;
    wrong base (the one the table fits is named, e.g. 1000 instead of 10000) or the base argument
    ignored; exponent ``k/dim`` instead of ``2k/dim``; positions starting at 1; precision lost at
    far positions; transposed or otherwise wrong shape; wrong dtype; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        random_len = int(torch.randint(20, 60, (1,), generator=generator))
        random_dim = 2 * int(torch.randint(3, 12, (1,), generator=generator))
        random_base = round(float(torch.empty(1).uniform_(200.0, 2000.0, generator=generator)), 1)
        cases: list[tuple[int, int, float | None]] = [
            (6, 4, None),
            (11, 6, 10000.0),
            (9, 8, 500.0),
            (25, 12, 100.0),
            (16, 32, None),
            (1, 2, None),
            (random_len, random_dim, random_base),
            (2048, 64, None),
        ]
        for seq_len, dim, base in cases:
            tags = {"far"} if seq_len > 100 else set()
            session.run(partial(_sinusoidal_case, session, seq_len, dim, base), tags)
        if session.only_failed_with("far"):
            session.problem(
                "far hint",
                "only the long table (positions up to 2047) failed: build it without Python loops and form the "
                "angles i·θ_k in float64 (or at least float32)",
            )
        verified = [
            f"matches posenc.sinusoidal_encoding on {session.cases} hidden cases: lengths 1 to 2048, widths 2 to "
            f"64, the default base 10000 and bases 100, 500 and {random_base:g}",
            "interleaved layout: even columns 2k hold sin(i·θ_k), odd columns 2k+1 hold cos(i·θ_k), with "
            "θ_k = base^(-2k/dim)",
        ]
        if "precision" not in session.notes:
            verified.append("far positions (up to 2047) are exact to float32 rounding")
        return verified

    return _run_checker("sinusoidal encoding", fn, body)


def _sinusoidal_case(session: _Session, seq_len: int, dim: int, base: float | None) -> None:
    if base is None:
        call = f"fn({seq_len}, {dim})"
        returned = session.call(call, seq_len, dim)
        base = 10000.0
    else:
        call = f"fn({seq_len}, {dim}, base={base:g})"
        returned = session.call(call, seq_len, dim, base=base)
    got = _expect_tensor(returned, f"a ({seq_len}, {dim}) table", call)
    expected = _SinusoidVariant().table(seq_len, dim, base)
    if tuple(got.shape) == (dim, seq_len) and seq_len != dim:
        hint = " (rows are positions, columns features)"
        if got.is_floating_point() and _close(got.double().T, expected):
            hint = ": your table is transposed — rows must be positions and columns the features"
        raise _Problem(
            "transposed", f"{call} returned a table of shape {(dim, seq_len)}; expected {(seq_len, dim)}{hint}"
        )
    _expect_shape(got, (seq_len, dim), "a table", call, " = (seq_len, dim)")
    if got.dtype not in (torch.float32, torch.float64):
        raise _Problem(
            "dtype", f"{call} returned dtype {_dtype(got.dtype)}; expected a float32 (or float64) table",
        )
    got = got.double()
    if not bool(torch.isfinite(got).all()):
        index = tuple(int(i) for i in (~torch.isfinite(got)).nonzero()[0])
        raise _Problem(
            "not finite",
            f"{call}: position {index[0]}, column {index[1]} is {_num(float(got[index]))}; every entry must be a "
            "finite number between -1 and 1",
        )
    error = (got - expected).abs()
    bound = _sinusoid_bound(seq_len)
    if bool((error <= bound).all()):
        if float(error.max()) > 1e-6:  # a float32 table with float64 angles is within 6e-8
            row, column = _first_difference(got, expected, atol=float(error.max()) * 0.999)
            session.note(
                "precision",
                f"precision note: your table differs from the float64 reference by up to {float(error.max()):.1e} "
                f"(position {row}, column {column}), an error that grows with the position: the angles i·θ_k seem "
                "to be formed in float32. This is accepted (d2l does the same), but forming them in float64 and "
                "casting the table at the end makes far positions exact to float32 rounding",
            )
        return
    raise _diagnose_sinusoid(got, expected, seq_len, dim, base, call)


def _diagnose_sinusoid(
    got: torch.Tensor, expected: torch.Tensor, seq_len: int, dim: int, base: float, call: str
) -> _Problem:
    bases: list[float | None] = [None]
    # A base near sqrt(base) is the exponent k/dim mistake, which has its own variant.
    for candidate in (10000.0, 1000.0, _estimate_base(got, dim)):
        if candidate is not None and all(
            not math.isclose(candidate, other, rel_tol=1e-3)
            for other in (*(other or base for other in bases), math.sqrt(base))
        ):
            bases.append(candidate)
    variants = [
        _SinusoidVariant(concatenated, cos_first, pair_exponent, wrong_base, offset)
        for concatenated, cos_first, pair_exponent, wrong_base, offset in itertools.product(
            (False, True), (False, True), (False, True), bases, (0, 1)
        )
    ]
    variants = sorted(variants[1:], key=lambda variant: variant.deviations())
    reference = _SinusoidVariant()

    def located(variant: _SinusoidVariant | None) -> str:
        difference = (got - expected).abs() > _sinusoid_bound(seq_len)
        later = difference[1:].nonzero()
        row, column = (int(later[0][0]) + 1, int(later[0][1])) if len(later) else tuple(
            int(i) for i in difference.nonzero()[0]
        )
        should, was = _distinct(float(expected[row, column]), float(got[row, column]))
        text = (
            f"{call}: position {row}, column {column}: expected {reference.entry(row, column, dim)} = {should}, "
            f"got {was}"
        )
        return text + (f" = {variant.entry(row, column, dim)}" if variant is not None else "")

    for variant in variants:
        table = variant.table(seq_len, dim, base)
        if bool(((got - table).abs() <= _sinusoid_bound(seq_len, variant.offset)).all()):
            base_kind = "" if variant.base is None else "10000" if variant.base == 10000.0 else "other"
            flags = (variant.concatenated, variant.cos_first, variant.pair_exponent, base_kind, variant.offset)
            key = f"sinusoid {flags}"
            return _Problem(key, f"{located(variant)}: {_explain_sinusoid(variant, base)}")
    error = (got - expected).abs()
    rows_error = error.max(dim=-1).values
    near = rows_error[: min(seq_len, 16)]
    row = int(torch.argmax(rows_error))
    if seq_len > 16 and bool((near <= 1e-5).all()) and float(rows_error.max()) < 0.5:
        return _Problem(
            "precision",
            f"{call}: your table matches the reference at small positions but drifts at far ones (error "
            f"{float(rows_error[row]):.1e} at position {row}), more than float32 angles explain: the angles i·θ_k lose "
            "precision — form them in float64 (or at least float32) and cast the table at the end",
        )
    if bool((near <= 1e-2).all()):
        return _Problem(
            "precision",
            f"{located(None)}: your table is close to the reference but not accurate enough (error up to "
            f"{float(rows_error[row]):.1e}, at position {row}), far beyond float32 rounding: compute the angles and "
            "their sines and cosines in float64 (or at least float32), not in half precision",
        )
    return _Problem(
        "sinusoid values",
        f"{located(None)}. Check the formula P[i, 2k] = sin(i·θ_k), P[i, 2k+1] = cos(i·θ_k) with "
        "θ_k = base^(-2k/dim)",
    )


# --------------------------------------------------------------------------- T5 buckets


def _t5_variant(
    relative_position: torch.Tensor,
    bidirectional: bool,
    num_buckets: int,
    max_distance: int,
    *,
    sign: int = 1,
    exact_shift: int = 0,
    cap: bool = True,
    rounding: str = "floor",
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """T5's buckets with knobs for the typical deviations (the reference when all are default)."""
    relative_position = relative_position.long() * sign
    buckets = torch.zeros_like(relative_position)
    per_direction = num_buckets
    if bidirectional:
        per_direction //= 2
        buckets = buckets + (relative_position > 0).long() * per_direction
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)
    max_exact = max(per_direction // 2 + exact_shift, 1)
    ratio = (
        torch.log(distance.clamp(min=1).to(dtype) / max_exact)
        / math.log(max_distance / max_exact)
        * (per_direction - max_exact)
    )
    if rounding == "round":
        ratio = ratio.round()
    elif rounding == "ceil":
        ratio = ratio.ceil()
    large = max_exact + ratio.long()
    if cap:
        large = large.clamp(max=per_direction - 1)
    return buckets + torch.where(distance < max_exact, distance, large)


def _t5_matches(got: torch.Tensor, relative_position: torch.Tensor, *args: Any, **kwargs: Any) -> bool:
    """Whether ``got`` equals the variant, computed in float32 or float64 (entry by entry)."""
    single = _t5_variant(relative_position, *args, **kwargs)
    double = _t5_variant(relative_position, *args, **kwargs, dtype=torch.float64)
    return bool(((got == single) | (got == double)).all())


def _t5_region(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> str:
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    if not bidirectional and offset > 0:
        return "a future key, which the causal setting puts in bucket 0"
    distance = abs(offset)
    side = ("key after the query" if offset > 0 else "key before the query") if offset else "the query itself"
    if distance < max_exact:
        return f"{side}, exact range: distance {distance} < max_exact = {max_exact}"
    if distance < max_distance:
        return f"{side}, logarithmic range: max_exact = {max_exact} <= distance {distance} < max_distance"
    return f"{side}, distance {distance} >= max_distance = {max_distance}: last bucket of its direction"


def check_t5_bucket(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's T5 bucketing ``fn(relative_position, bidirectional=True, num_buckets=32, max_distance=128)``.

    ``relative_position`` holds ``j - i`` (key minus query); the result must be the tensor of
    buckets of :func:`posenc.relative.t5_relative_position_bucket` (integers of the same shape). The hidden
    cases use 1-D and 2-D offsets up to ±1000, bidirectional and causal settings, the default
    ``num_buckets=32, max_distance=128`` and other values. Buckets computed with a float64
    logarithm are accepted where they differ from T5's float32 at exact bucket boundaries.

    Diagnosed mistakes: sign convention ``i - j`` (past and future swapped); ``bidirectional``
    ignored; ``num_buckets`` or ``max_distance`` ignored; exact range off by one; no cap at the last
    bucket beyond ``max_distance``; rounding (or ceiling) instead of flooring the logarithmic part;
    wrong shape or dtype; exceptions. Each message names the setting, the offset, the expected and
    the returned bucket.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        span = torch.arange(-160, 161)
        cases: list[tuple[torch.Tensor, dict[str, Any]]] = [
            (span, {}),
            (torch.randint(-400, 401, (6, 25), generator=generator), {"bidirectional": True}),
            (span, {"bidirectional": False}),
            (torch.arange(-120, 121), {"bidirectional": True, "num_buckets": 16, "max_distance": 50}),
            (torch.arange(-120, 121), {"bidirectional": False, "num_buckets": 12, "max_distance": 40}),
            (torch.randint(-1000, 1001, (3, 30), generator=generator),
             {"bidirectional": True, "num_buckets": 64, "max_distance": 256}),
            (torch.arange(-30, 31).reshape(1, 61), {"bidirectional": False, "num_buckets": 32, "max_distance": 20}),
        ]
        for relative_position, kwargs in cases:
            session.run(partial(_t5_case, session, relative_position, kwargs))
        return [
            f"matches posenc.t5_relative_position_bucket on {session.cases} hidden cases: bidirectional and causal, "
            "num_buckets from 12 to 64, max_distance from 20 to 256, offsets up to ±1000, 1-D and 2-D inputs",
            "sign convention j - i (keys after the query go to the upper half), exact buckets for small distances, "
            "floored logarithmic buckets, and the last bucket for every distance beyond max_distance",
        ]

    return _run_checker("T5 relative position buckets", fn, body)


def _t5_case(session: _Session, relative_position: torch.Tensor, kwargs: dict[str, Any]) -> None:
    bidirectional = kwargs.get("bidirectional", True)
    num_buckets = kwargs.get("num_buckets", 32)
    max_distance = kwargs.get("max_distance", 128)
    shown = ", ".join(f"{name}={value}" for name, value in kwargs.items())
    given = relative_position.clone()
    call = f"fn(relative_position of shape {tuple(relative_position.shape)}{', ' + shown if shown else ''})"
    returned = session.call(call, given, **kwargs)
    _unchanged(session, {"relative_position": relative_position}, {"relative_position": given}, call)
    got = _expect_tensor(returned, "buckets", call)
    _expect_shape(got, tuple(relative_position.shape), "buckets", call, " (the shape of relative_position)")
    _expect_integer(session, got, "buckets", call)
    got = got.long()
    setting = (bidirectional, num_buckets, max_distance)
    if _t5_matches(got, relative_position, *setting):
        return
    expected = t5_relative_position_bucket(relative_position, *setting)
    setting_text = f"bidirectional={bidirectional}, num_buckets={num_buckets}, max_distance={max_distance}"
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2

    accepted = (got == expected) | (got == _t5_variant(relative_position, *setting, dtype=torch.float64))

    def showcase() -> str:
        wrong = (~accepted).flatten()
        offsets = relative_position.flatten()[wrong].tolist()
        offset = min(offsets, key=lambda value: (abs(value), value))
        index = int((relative_position.flatten() == offset).logical_and(wrong).nonzero()[0])
        region = _t5_region(offset, bidirectional, num_buckets, max_distance)
        expected_bucket, got_bucket = int(expected.flatten()[index]), int(got.flatten()[index])
        return (
            f"setting {setting_text}: offset j - i = {offset} ({region}): expected bucket {expected_bucket}, "
            f"got {got_bucket}"
        )

    text = showcase()
    variants: list[tuple[tuple[Any, ...], dict[str, Any], str, str]] = []
    if bidirectional:
        sign_text = (
            "past and future are swapped: you seem to use i - j, but relative_position is already j - i (key "
            f"minus query): positive offsets are keys after the query and go to the upper half of the buckets "
            f"(from num_buckets // 2 = {num_buckets // 2} on)"
        )
    else:
        sign_text = (
            "past and future are swapped: you seem to use i - j, but relative_position is already j - i (key "
            "minus query): in the causal setting the distance is max(-(j - i), 0), so past keys (negative "
            "offsets) get distance buckets and every future key bucket 0"
        )
    variants.append(((bidirectional, num_buckets, max_distance), {"sign": -1}, "sign", sign_text))
    variants.append((
        (not bidirectional, num_buckets, max_distance), {}, "bidirectional",
        f"the bidirectional argument is ignored: called with bidirectional={bidirectional}, your buckets are "
        f"those of bidirectional={not bidirectional} (bidirectional: half the buckets for each direction; causal: "
        "all buckets for the past, bucket 0 for every future key)",
    ))
    for wrong_buckets, wrong_distance, name in (
        (32, max_distance, "num_buckets"), (num_buckets, 128, "max_distance"), (32, 128, "num_buckets and max_distance")
    ):
        if (wrong_buckets, wrong_distance) != (num_buckets, max_distance):
            defaults = " and ".join(
                f"{argument}={value}" for argument, value, asked in
                (("num_buckets", 32, num_buckets), ("max_distance", 128, max_distance)) if argument in name
                and value != asked
            )
            variants.append((
                (bidirectional, wrong_buckets, wrong_distance), {}, f"ignored {name}",
                f"the {name} argument{'s are' if ' and ' in name else ' is'} ignored: your buckets are those for "
                f"the default {defaults}",
            ))
    for shift in (1, -1):
        variants.append((
            setting, {"exact_shift": shift}, "exact range",
            f"the exact range is off by one: distances 0 .. max_exact - 1 get a bucket each, with max_exact = "
            f"n // 2 = {max_exact} (n = {per_direction} buckets per direction); yours ends at "
            f"{max_exact + shift - 1} instead of {max_exact - 1} (is_small = distance < max_exact)",
        ))
    variants.append((
        setting, {"cap": False}, "cap",
        f"the last bucket is not capped: every distance beyond max_distance = {max_distance} must share the last "
        f"bucket of its direction (n - 1 = {per_direction - 1}, n = buckets per direction); clamp the logarithmic "
        "bucket with .clamp(max=n - 1) or torch.min",
    ))
    for rounding in ("round", "ceil"):
        variants.append((
            setting, {"rounding": rounding}, "rounding",
            f"you {'round' if rounding == 'round' else 'take the ceiling of'} the logarithmic part; T5 floors it "
            "(truncates with .long() / .to(torch.long)), so some distances land one bucket too high",
        ))
    for args, knobs, key, explanation in variants:
        if _t5_matches(got, relative_position, *args, **knobs):
            session.problem(key, f"{text}: {explanation}")
            return
    difference = got - expected
    mismatch = ~accepted
    distance = (relative_position.abs() if bidirectional else (-relative_position).clamp(min=0))
    in_log_range = (distance >= max_exact) & (distance < max_distance)
    if bool((difference[mismatch] == 1).all()) and bool(in_log_range[mismatch].all()):
        session.problem(
            "rounding",
            f"{text}: one bucket too high at some distances in the logarithmic range: T5 floors (truncates) the "
            "logarithmic part, max_exact + floor(log(distance / max_exact) / log(max_distance / max_exact) * "
            "(n - max_exact))",
        )
    elif bool(((got < 0) | (got >= num_buckets)).any()):
        session.problem(
            "out of range",
            f"{text}: buckets must lie in [0, num_buckets) = [0, {num_buckets}); check the cap at the last bucket "
            "and the offset of the upper half",
        )
    else:
        session.problem(
            "buckets",
            f"{text}. Check the three ranges: exact buckets below max_exact, logarithmic buckets up to "
            "max_distance, the last bucket beyond",
        )


# --------------------------------------------------------------------------- ALiBi slopes


def _alibi_variant(
    num_heads: int, *, factor: float = 8.0, first: int = 1, construction: str = "reference", reverse: bool = False
) -> list[float]:
    """ALiBi slopes with knobs for the typical deviations (the reference when all are default)."""

    def geometric(count: int) -> list[float]:
        return [2.0 ** (-factor * (head + first) / count) for head in range(count)]

    power = 2 ** math.floor(math.log2(num_heads))
    if construction == "geometric":
        slopes = geometric(num_heads)
    elif construction == "truncated":
        slopes = geometric(2 ** math.ceil(math.log2(num_heads)))[:num_heads]
    else:
        extra = geometric(2 * power)[1::2] if construction == "odd" else geometric(2 * power)[0::2]
        slopes = geometric(power) + extra[: num_heads - power]
    return slopes[::-1] if reverse else slopes


def _power_text(slope: float) -> str:
    return f"{_num(slope)} = 2^({_num(math.log2(slope))})" if slope > 0 else _num(slope)


def check_alibi_slopes(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's ALiBi slopes ``fn(num_heads) -> (num_heads,)`` tensor (or list).

    The slopes must be those of :func:`posenc.relative.alibi_slopes`: for ``n`` a power of two, the
    geometric sequence ``2^(-8h/n)``, ``h = 1 .. n``; otherwise the slopes of the largest power of
    two ``m < n`` followed by every other slope of ``2m`` heads. Powers of two are checked first,
    then ``n`` = 3, 5, 6, 12, 20, 24 and a random one.

    Diagnosed mistakes: the plain geometric sequence for a non-power of two; the first ``n`` slopes
    of the next power of two; the odd-indexed instead of even-indexed slopes of ``2m`` heads; slopes
    in reverse order; ``2^(-h/n)`` (factor 8 missing); heads numbered from 0; wrong length or type;
    exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        random_heads = int(torch.randint(33, 64, (1,), generator=generator))
        powers = [8, 1, 2, 4, 16, 32]
        others = [6, 3, 12, 5, 20, 24, random_heads]
        for heads in powers + others:
            tags = {"power"} if heads in powers else {"non-power"}
            session.run(partial(_alibi_case, session, heads), tags)
        if session.only_failed_with("non-power"):
            session.problem(
                "non-power hint",
                "your slopes are right for powers of two but not for the other head counts: for n heads, n not a "
                "power of two, take the m slopes of the largest power of two m < n, then every other slope "
                "([0::2]) of 2m heads, n - m of them",
            )
        return [
            f"matches posenc.alibi_slopes for num_heads = {', '.join(map(str, powers + others))} "
            f"({session.cases} hidden cases)",
            "powers of two: the geometric sequence 2^(-8h/n), h = 1 .. n; other head counts: the slopes of the "
            "largest power of two below, then every other slope of twice as many heads",
        ]

    return _run_checker("ALiBi slopes", fn, body)


def _alibi_case(session: _Session, num_heads: int) -> None:
    call = f"fn({num_heads})"
    returned = session.call(call, num_heads)
    if isinstance(returned, torch.Tensor):
        got = returned.detach().cpu()
        if got.dim() != 1:
            raise _Problem(
                "shape", f"{call} returned a tensor of shape {tuple(got.shape)}; expected a 1-D tensor of "
                f"{num_heads} slopes, shape ({num_heads},)",
            )
        if not got.is_floating_point():
            raise _Problem("dtype", f"{call} returned dtype {_dtype(got.dtype)}; slopes are real numbers: use float32")
        got = got.double()
    elif isinstance(returned, (list, tuple, np.ndarray)):
        try:
            got = torch.tensor([float(value) for value in returned], dtype=torch.float64)
        except (TypeError, ValueError):
            raise _Problem(
                "type", f"{call} returned a {type(returned).__name__} whose items are not all numbers",
            ) from None
    else:
        raise _Problem(
            "type", f"{call} returned {_type_name(returned)}; expected a 1-D tensor (or list) of {num_heads} slopes",
        )
    if got.numel() != num_heads:
        raise _Problem("length", f"{call} returned {got.numel()} slopes; expected one per head, {num_heads}")
    expected = alibi_slopes(num_heads).double()
    if bool(torch.allclose(got, expected, rtol=1e-5, atol=0.0)):
        return

    def shown(slopes: torch.Tensor) -> str:
        return _values(slopes, limit=num_heads if num_heads <= 8 else 6)

    head = int(_first_difference(got, expected, atol=1e-6 * float(expected.min()))[0])
    text = (
        f"num_heads = {num_heads}: expected {shown(expected)}, got {shown(got)} (first difference at head {head + 1} "
        f"of {num_heads}: expected {_power_text(float(expected[head]))}, got {_power_text(float(got[head]))})"
    )
    power = 2 ** math.floor(math.log2(num_heads))
    explanations = {
        "reverse": "your slopes are in reverse order: the first head gets the largest slope 2^(-8/n) and the last "
        "head the smallest",
        "factor": "your slopes look like 2^(-h/n): the exponent is missing the factor 8 (the slopes for n heads "
        "go from 2^(-8/n) down to 2^(-8))",
        "first": "your heads are numbered from 0, so your first slope is 2^0 = 1; ALiBi numbers heads h = 1 .. n: "
        "the first slope is 2^(-8/n) and the last 2^(-8)",
        "geometric": f"for {num_heads} heads, not a power of two, you used the geometric sequence 2^(-8h/n) "
        f"directly; ALiBi takes the {power} slopes of {power} heads, then every other slope of {2 * power} heads "
        f"([0::2]), {num_heads - power} of them",
        "truncated": f"for {num_heads} heads you took the first {num_heads} slopes of "
        f"{2 ** math.ceil(math.log2(num_heads))} heads; ALiBi takes the {power} slopes of {power} heads, then every "
        f"other slope of {2 * power} heads ([0::2]), {num_heads - power} of them",
        "odd": f"for {num_heads} heads you added the odd-indexed slopes [1::2] of {2 * power} heads, which repeat "
        f"those of {power} heads; take the even-indexed ones, [0::2]",
    }
    knobs: list[tuple[dict[str, Any], list[str]]] = []
    for reverse, factor, first, construction in itertools.product(
        (False, True), (8.0, 1.0), (1, 0), ("reference", "geometric", "truncated", "odd")
    ):
        keys = (["reverse"] if reverse else []) + (["factor"] if factor != 8 else []) + (
            ["first"] if first != 1 else []
        ) + ([construction] if construction != "reference" else [])
        if keys:
            knobs.append(({"reverse": reverse, "factor": factor, "first": first, "construction": construction}, keys))
    for kwargs, keys in sorted(knobs, key=lambda item: len(item[1])) if num_heads > 1 else ():
        candidate = torch.tensor(_alibi_variant(num_heads, **kwargs), dtype=torch.float64)
        if bool(torch.allclose(got, candidate, rtol=1e-5, atol=0.0)):
            raise _Problem(" + ".join(keys), f"{text}: " + "; ".join(explanations[key] for key in keys))
    raise _Problem(
        "slopes",
        f"{text}. For n heads, n a power of two, the slopes are 2^(-8h/n) for h = 1 .. n; otherwise the m slopes of "
        "the largest power of two m < n come first, then every other slope of 2m heads",
    )


# --------------------------------------------------------------------------- RoPE


def _rope_bound(positions: torch.Tensor, strict: bool = False) -> torch.Tensor:
    """Per-token tolerance relative to the norm of the token: float32 rounding (+ float32 angles)."""
    if strict:  # float32 rounding of the result only: about 1e-7 of the norm
        return torch.full(positions.shape, 1e-6, dtype=torch.float64)
    return 1e-5 + 8 * _EPS32 * positions.double().abs()


def _token_errors(got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Error of every token relative to its norm, reduced to one value per position: ``(L,)``."""
    relative = (got - expected).norm(dim=-1) / x.double().norm(dim=-1).clamp(min=1e-12)
    return relative.reshape(-1, x.shape[-2]).max(dim=0).values.nan_to_num(float("inf"))


def _rope_cases(generator: torch.Generator) -> list[dict[str, Any]]:
    def randn(*shape: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        return torch.randn(*shape, generator=generator, dtype=dtype)

    shuffled = torch.randperm(16, generator=generator)[:4]
    real = torch.tensor([0.5, 1.25, 2.0, 7.5, -3.0], dtype=torch.float64)
    return [
        {"x": randn(6, 8), "positions": None, "base": None, "tags": set()},
        {"x": randn(2, 3, 5, 16, dtype=torch.float32), "positions": None, "base": None, "tags": {"batch"}},
        {"x": randn(4, 8), "positions": shuffled, "base": None, "tags": set()},
        {"x": randn(5, 6), "positions": None, "base": 500.0, "tags": set()},
        {"x": randn(3, 2, 5, 4), "positions": real, "base": 500.0, "tags": {"batch", "real"}},
        {"x": randn(5, 10), "positions": real.float(), "base": None, "tags": {"real"}},
        {"x": randn(1, 8, 32, dtype=torch.float32), "positions": torch.arange(4000, 4008), "base": None,
         "tags": {"batch", "far"}},
    ]


def check_apply_rope(fn: Callable[..., Any], layout: str = "interleaved") -> CheckResult:
    """Check a student's rotary embedding ``fn(x, positions=None, base=10000.0) -> tensor like x``.

    ``x`` has shape ``(..., L, d)``; ``positions`` is an optional 1-D tensor of ``L`` positions
    (integers or real numbers, default ``arange(L)``). The result must equal
    ``posenc.apply_rope(x, positions, base=base, layout=layout)``, keep the shape and dtype of
    ``x`` and leave ``x`` unchanged. The hidden cases include float32 and float64, leading batch
    and head dimensions, shuffled, real-valued and far positions and base 500; two properties are
    tested as well: norms are preserved, and scores between rotated queries and keys depend only
    on the offset of their positions. Angles formed in float32 are accepted, with a precision note.

    Diagnosed mistakes: not a rotation (norms change, e.g. evens and odds paired with
    ``cat(freqs, freqs)``); rotation in the wrong direction; the other layout; ``positions`` or
    ``base`` ignored; real positions truncated to integers; exponent ``k/d`` instead of ``2k/d``;
    scores not relative; failure with leading dimensions or real-valued positions; dtype or shape
    changed; ``x`` modified in place; exceptions.

    Args:
        fn: the student's function.
        layout: the layout the exercise asks for: ``"interleaved"`` (pairs ``(2k, 2k+1)``) or
            ``"half"`` (pairs ``(k, k + d/2)``).

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
        ValueError: if ``layout`` is not one of :data:`posenc.rotary.ROPE_LAYOUTS`.
    """
    _check_callable(fn)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        for case in _rope_cases(generator):
            session.run(partial(_rope_case, session, case, layout), case["tags"])
        q, k = (torch.randn(8, generator=generator, dtype=torch.float64) for _ in range(2))
        session.run(partial(_rope_relative_case, session, q, k))
        if session.only_failed_with("batch") and not any("batch" in tags for tags in session.passed_tags):
            session.problem(
                "batch hint",
                "your function works on (L, d) inputs but not with leading batch and head dimensions: read "
                "seq_len, dim = x.shape[-2:], index coordinates with x[..., 0::2], and let the (L, d/2) angle "
                "table broadcast against (..., L, d/2)",
            )
        elif session.only_failed_with("far"):
            session.problem(
                "far hint",
                "only the case with far positions (4000 and beyond) failed: form the angles m·θ_k in float64 (or at "
                "least float32) before taking cosines and sines, and cast only the result to the dtype of x",
            )
        elif session.only_failed_with("real"):
            session.problem(
                "real hint",
                "only the cases with real-valued positions (such as 0.5 or -3.0) failed: positions may be real "
                "numbers, for instance interpolated ones; do not convert them to integers or use them as indices, "
                "form the angles as positions.to(torch.float64)[:, None] * theta[None, :]",
            )
        pairs = "(2k, 2k+1)" if layout == "interleaved" else "(k, k + d/2)"
        verified = [
            f"matches posenc.apply_rope(layout={layout!r}, pairs {pairs}) on {session.cases - 1} hidden cases: "
            "float32 and float64, with batch and head dimensions, shuffled, real-valued and far positions, base 500",
            "preserves norms (it is a rotation); scores between rotated queries and keys depend only on the offset",
            "keeps the shape and dtype of x and leaves x unchanged",
        ]
        return verified

    return _run_checker(f"rotary position embedding ({layout} layout)", fn, body)


def _rope_call(session: _Session, x: torch.Tensor, positions: torch.Tensor | None, base: float | None) -> tuple[
    Any, str, torch.Tensor
]:
    given = x.clone()
    parts = [_describe("x", x)]
    args: list[Any] = [given]
    kwargs: dict[str, Any] = {}
    if positions is not None:
        kind = "real-valued" if positions.is_floating_point() else "integers"
        parts.append(f"positions={_values(positions, limit=5)} ({kind}, {_dtype(positions.dtype)})")
        args.append(positions.clone())
    if base is not None:
        parts.append(f"base={base:g}")
        kwargs["base"] = base
    call = f"fn({', '.join(parts)})"
    returned = session.call(call, *args, **kwargs)
    _unchanged(session, {"x": x}, {"x": given}, call)
    return returned, call, given


def _rope_case(session: _Session, case: dict[str, Any], layout: str) -> None:
    x, positions, base = case["x"], case["positions"], case["base"]
    returned, call, _ = _rope_call(session, x, positions, base)
    got = _expect_tensor(returned, "a tensor like x", call)
    _expect_shape(got, tuple(x.shape), "a tensor", call, " (the shape of x)")
    if got.dtype != x.dtype:
        session.problem(
            "dtype",
            f"{call} returned dtype {_dtype(got.dtype)}; expected {_dtype(x.dtype)}, the dtype of x: RoPE must "
            "not change the dtype (compute the angles in float64 if you like, then cast back with .to(x.dtype))",
        )
    _expect_floating(got, "a tensor", call, f"{_dtype(x.dtype)}, the dtype of x")
    _expect_finite(got, "a tensor", call, "every rotated coordinate must be a finite number")
    got = got.double()
    actual_base = 10000.0 if base is None else base
    actual_positions = torch.arange(x.shape[-2]) if positions is None else positions
    expected = apply_rope(x.double(), actual_positions, base=actual_base, layout=layout)
    errors = _token_errors(got, expected, x)
    if bool((errors <= _rope_bound(actual_positions)).all()):
        if not bool((errors <= _rope_bound(actual_positions, strict=True)).all()):
            worst = int(torch.argmax(errors))
            session.note(
                "precision",
                f"precision note: at position {_num(float(actual_positions[worst]))} your rotated vectors differ from "
                f"the reference by {float(errors[worst]):.1e} of their norm, an error that grows with the position: "
                "the angles seem to be formed in float32. This is accepted, but forming the angles in float64 and "
                "casting cos and sin to the dtype of x makes far positions exact to float32 rounding",
            )
        return
    if float(errors.max()) < 1e-2:
        worst = int(torch.argmax(errors))
        raise _Problem(
            "precision",
            f"in {call}: your result is close to the reference but not accurate enough: at position "
            f"{_num(float(actual_positions[worst]))} the rotated vector is off by {float(errors[worst]):.1e} of its "
            "norm, far beyond float32 rounding: compute the angles, their cosines and sines in float64 (or at least "
            "float32), not in half precision, and cast only the result to the dtype of x",
        )
    norms_before = x.double().norm(dim=-1)
    ratio = got.norm(dim=-1) / norms_before.clamp(min=1e-12)
    if not bool(((ratio - 1).abs() < 1e-3).all()):
        index = tuple(int(i) for i in (~((ratio - 1).abs() < 1e-3)).nonzero()[0])
        position = float(actual_positions[index[-1]])
        raise _Problem(
            "norms",
            f"your function does not preserve norms, so it is not a rotation: in {call}, the token at position "
            f"{_num(position)} has norm {_num(float(norms_before[index]))} before and "
            f"{_num(float(got.norm(dim=-1)[index]))} after: check which coordinates you pair with which angle "
            "(pair k is "
            + ("(2k, 2k+1), rotated by m·θ_k)" if layout == "interleaved" else "(k, k + d/2), rotated by m·θ_k)"),
        )
    raise _diagnose_rope(got, expected, x, actual_positions, actual_base, positions is not None, base is not None,
                         layout, call)


def _diagnose_rope(
    got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor, positions: torch.Tensor, base: float,
    positions_given: bool, base_given: bool, layout: str, call: str,
) -> _Problem:
    other = "half" if layout == "interleaved" else "interleaved"
    pairs = {"interleaved": "interleaved pairs (2k, 2k+1)", "half": "pairs (k, k + d/2) of the half layout"}
    explanations = {
        "layout": f"you implemented the {other} layout, but this exercise asks for {pairs[layout]}",
        "direction": "you rotate the wrong way: your output equals RoPE at position -m (R_mᵀ instead of R_m); the "
        "rotation by φ maps the pair (a, b) to (a cos φ - b sin φ, a sin φ + b cos φ)",
        "base": f"your function ignores its base argument: called with base={base:g}, it uses base 10000",
        "positions": "your function ignores its positions argument: it rotates token t by t·θ_k instead of by "
        "positions[t]·θ_k",
        "truncated": "real-valued positions are truncated to integers (for instance 0.5 is treated as 0): keep "
        "them real, form the angles as positions.to(torch.float64)[:, None] * theta[None, :]",
        "exponent": "your frequencies are base^(-k/d) instead of θ_k = base^(-2k/d): the exponent needs the "
        "column index 2k, as in torch.arange(0, d, 2) / d",
    }
    position_options: list[tuple[str | None, torch.Tensor]] = [(None, positions)]
    if positions_given:
        position_options.append(("positions", torch.arange(x.shape[-2])))
    if positions.is_floating_point() and not torch.equal(positions.trunc(), positions):
        position_options.append(("truncated", positions.trunc()))
    base_options: list[tuple[str | None, float]] = [(None, base)]
    if base_given and base != 10000.0:
        base_options.append(("base", 10000.0))
    candidates = []
    for (layout_key, variant_layout), (sign_key, sign), (position_key, variant_positions), (base_key, variant_base), (
        exponent_key, root
    ) in itertools.product(
        ((None, layout), ("layout", other)), ((None, 1), ("direction", -1)), position_options, base_options,
        ((None, False), ("exponent", True)),
    ):
        keys = [key for key in (layout_key, sign_key, position_key, base_key, exponent_key) if key is not None]
        if keys:
            candidates.append((keys, variant_layout, sign, variant_positions, variant_base, root))
    candidates.sort(key=lambda candidate: len(candidate[0]))
    for keys, variant_layout, sign, variant_positions, variant_base, root in candidates:
        candidate = apply_rope(
            x.double(),
            sign * variant_positions,
            base=math.sqrt(variant_base) if root else variant_base,
            layout=variant_layout,
        )
        if bool((_token_errors(got, candidate, x) <= _rope_bound(variant_positions)).all()):
            return _Problem(" + ".join(keys), f"in {call}: " + "; ".join(explanations[key] for key in keys))
    index = _first_difference(got, expected, atol=1e-5 * float(x.double().abs().max()))
    should, was = _distinct(float(expected[index]), float(got[index]))
    return _Problem(
        "rope values",
        f"in {call}: the token at position {_num(float(positions[index[-2]]))}, coordinate {index[-1]} should be "
        f"{should}, got {was}; pair k = {pairs[layout]} is rotated by the angle m·θ_k with θ_k = base^(-2k/d)",
    )


def _rope_relative_case(session: _Session, q: torch.Tensor, k: torch.Tensor) -> None:
    seq_len = 8
    queries, keys = q.expand(seq_len, -1).clone(), k.expand(seq_len, -1).clone()
    description = f"x of shape ({seq_len}, {q.numel()}) (float64) holding the same vector at every position"
    rotated = []
    for x in (queries, keys):
        call = f"fn({description})"
        returned = session.call(call, x)
        got = _expect_tensor(returned, "a tensor like x", call)
        _expect_shape(got, (seq_len, q.numel()), "a tensor", call, " (the shape of x)")
        _expect_floating(got, "a tensor", call, "float64, the dtype of x")
        _expect_finite(got, "a tensor", call, "every rotated coordinate must be a finite number")
        rotated.append(got.double())
    scores = rotated[0] @ rotated[1].T
    shifted_gap = (scores[1:, 1:] - scores[:-1, :-1]).abs()
    scale = 1 + float(scores.abs().max())
    if bool((shifted_gap <= 1e-6 * scale).all()):
        return
    if float(shifted_gap.max()) < 1e-2 * scale and "precision" in session.problems:
        return  # the imprecision already reported, not a mistake in the formula
    m, n = (int(i) for i in (shifted_gap == shifted_gap.max()).nonzero()[0])
    session.problem(
        "relative",
        "scores are not relative: with the same query vector q at every position and the same key vector k at "
        f"every position, the score of (query position {m}, key position {n}) is {_num(float(scores[m, n]))} but "
        f"that of ({m + 1}, {n + 1}) is {_num(float(scores[m + 1, n + 1]))}, with the same offset {n - m}. With "
        "RoPE, (R_m q)ᵀ(R_n k) = qᵀ R_(n-m) k depends on the positions only through n - m: rotate every pair of "
        "coordinates by the angle m·θ_k, linear in the position m",
    )
