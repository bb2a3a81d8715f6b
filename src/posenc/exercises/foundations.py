"""Checkers of the coding exercises of Part I that are not about one encoding table.

- :func:`~posenc.exercises.check_cross_attention` (ex-perm-2): cross-attention of queries from one
  sequence over keys and values from another;
- :func:`~posenc.exercises.check_position_recovery` (ex-perm-5): reading the position off the
  output ``1/(i+1)`` of uniform causal attention;
- :func:`~posenc.exercises.check_position_parameter_counts` (ex-abs-1): parameters of a learned
  table and of one-hot positions;
- :func:`~posenc.exercises.check_decayed_rows` (ex-abs-4): rows of a table that AdamW's weight
  decay shrinks and no gradient reaches;
- :func:`~posenc.exercises.check_concatenated_sinusoidal` (ex-sin-6): the sines-then-cosines table
  of tensor2tensor, fairseq and FSMT.

Each compares the student's function with a reference on hidden cases and names the typical
mistake that explains every failed case, with the first input where the answer differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .checking import CheckResult, _dtype, _public
from .comparing import _Case, _Mistake, _simple_checker

__all__ = [
    "check_concatenated_sinusoidal",
    "check_cross_attention",
    "check_decayed_rows",
    "check_position_parameter_counts",
    "check_position_recovery",
]


# --------------------------------------------------------------------------- ex-perm-2


def reference_cross_attention(y, z, w_q, w_k, w_v):
    """softmax(y W_Q (z W_K)^T / sqrt(d_k)) z W_V, with d_k the width of the keys."""
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def _cross(y, z, w_q, w_k, w_v, scale=None, axis=-1, values=None, weights_only=False):
    scale = math.sqrt(w_k.shape[1]) if scale is None else scale
    weights = torch.softmax((y @ w_q) @ (z @ w_k).T / scale, dim=axis)
    if weights_only:
        return weights
    return weights @ ((z if values is None else values) @ w_v)


_CROSS_MISTAKES = [
    _Mistake("cross roles", "your queries come from z and your keys from y: in cross-attention the queries are "
             "the decoder states y (one output row per query) and the keys and values the memory z",
             lambda y, z, q, k, v: torch.softmax((z @ q) @ (y @ k).T / math.sqrt(k.shape[1]), -1) @ (y @ v)),
    _Mistake("cross axis", "your softmax normalises over the queries (dim=0): each query's weights over the "
             "keys must sum to 1, so normalise along the last axis (dim=-1)",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, axis=0)),
    _Mistake("cross no scale", "your scores are not divided by sqrt(d_k): divide y W_Q (z W_K)^T by the square "
             "root of the key width w_k.shape[1]",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, scale=1.0)),
    _Mistake("cross model width", "you divided by the square root of the model width d = y.shape[-1]; the scale "
             "is sqrt(d_k), the width of the projected keys (w_k.shape[1])",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, scale=math.sqrt(y.shape[-1]))),
    _Mistake("cross scale no sqrt", "you divided the scores by d_k instead of sqrt(d_k)",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, scale=k.shape[1])),
    _Mistake("cross values from y", "your values come from y: the values are the memory z projected, z W_V",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, values=y)),
    _Mistake("cross weights", "you returned the attention weights (m, n); the output is the weights times the "
             "values z W_V, of shape (m, d_v)",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, weights_only=True)),
    _Mistake("cross no value projection", "the value projection W_V is not applied: your output averages the rows "
             "of z itself; the values are z W_V (z @ w_v), so the output has the width d_v of w_v",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, weights_only=True) @ z),
    _Mistake("cross keys as values", "your values are the keys z W_K: the weights multiply the values z W_V "
             "(z @ w_v), a projection of their own",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, weights_only=True) @ (z @ k)),
    _Mistake("cross queries as values", "your values are the queries y W_Q: the weights multiply the values of "
             "the memory, z W_V (z @ w_v)",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, weights_only=True) @ (y @ q)),
    _Mistake("cross no projections", "your scores compare y and z directly, without the projections: the scores "
             "are (y W_Q)(z W_K)^T / sqrt(d_k)",
             lambda y, z, q, k, v: torch.softmax(y @ z.T / math.sqrt(k.shape[1]), -1) @ (z @ v)),
    _Mistake("cross scale by d_v", "you divided by sqrt(d_v), the width of the values; the scale is sqrt(d_k), "
             "the width of the keys (w_k.shape[1])",
             lambda y, z, q, k, v: _cross(y, z, q, k, v, scale=math.sqrt(v.shape[1]))),
]


def _cross_scale(weights: torch.Tensor, products: torch.Tensor, d_k: int) -> str | None:
    """The scale of softmax weights over the raw products q·k, read off their log-ratios, when it is not 1/sqrt(d_k).

    Each row is compared with its largest weight; only weights above 1e-4 are used, the smaller ones being read
    back from a float32 output with too few digits.
    """
    top = weights.argmax(dim=-1, keepdim=True)
    usable = (weights > 1e-4) & ((products - products.gather(1, top)).abs() > 0.1)
    if not bool(usable.any()):
        return None
    ratios = (weights.clamp(min=1e-300).log() - weights.gather(1, top).log()) / (products - products.gather(1, top))
    scales = ratios[usable]
    scale = float(scales.median())
    if scale <= 0 or not bool(torch.allclose(scales, torch.full_like(scales, scale), rtol=1e-3)):
        return None
    if math.isclose(scale, 1 / math.sqrt(d_k), rel_tol=1e-3):
        return None
    divisor = 1 / scale
    return (f"your weights are softmax(q·k / {divisor:.4g}): the scores are divided by {divisor:.4g} = "
            f"sqrt({divisor**2:.4g}), where the scale is sqrt(d_k) = sqrt({d_k}) = {math.sqrt(d_k):.4g}, the width "
            "of the projected keys (w_k.shape[1])")


def _cross_weights_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """How the attention weights behind an output are normalised, read back from the output.

    When the memory has no more rows than the values have columns, ``z W_V`` has full row rank and the
    weights are the unique solution of ``weights @ (z W_V) = output``: their sums say which axis the
    softmax normalised (or that there was none).
    """
    y, z, w_q, w_k, w_v = case.args
    values = (z @ w_v).double()
    if values.shape[0] > values.shape[1] or got.shape != expected.shape:
        return None
    weights = torch.linalg.lstsq(values.T, got.double().T).solution.T
    if not bool(torch.allclose(weights @ values, got.double(), atol=1e-6, rtol=1e-5)):
        return None
    rows, total = weights.sum(-1), weights.sum()
    if bool(torch.allclose(rows, torch.ones_like(rows), atol=1e-5)):
        return _cross_scale(weights, (y @ w_q).double() @ (z @ w_k).double().T, w_k.shape[1])
    if math.isclose(float(total), 1.0, abs_tol=1e-5) and weights.shape[0] > 1:
        return ("the weights behind your output sum to 1 over the whole (m, n) matrix, not per query: the softmax "
                "normalised every score at once (a flattened softmax); each query's weights over the keys must "
                "sum to 1, softmax(scores, dim=-1)")
    columns = weights.sum(0)
    if bool(torch.allclose(columns, torch.ones_like(columns), atol=1e-5)):
        return None  # the softmax over the queries, named by its own mistake
    return (f"the weights behind your output do not sum to 1 for each query (row 0 sums to {float(rows[0]):.4g}): "
            "the output must be a weighted average of the values z W_V, each query's weights a softmax over the keys "
            "(dim=-1)")


def _cross_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    # Widths that make shape slips silent: d_k = d_v, d = d_v, m = n (values from the wrong tensor, W_V skipped).
    for m, n, d, d_k, d_v in [(3, 5, 8, 4, 6), (4, 7, 16, 8, 8), (1, 4, 8, 2, 3), (6, 2, 12, 12, 5), (5, 5, 8, 4, 6),
                              (4, 6, 8, 4, 8)]:
        y = torch.randn(m, d, generator=generator)
        z = torch.randn(n, d, generator=generator)
        w_q, w_k = (torch.randn(d, d_k, generator=generator) for _ in range(2))
        w_v = torch.randn(d, d_v, generator=generator)
        shown = f"fn(y: ({m}, {d}), z: ({n}, {d}), w_q: ({d}, {d_k}), w_k: ({d}, {d_k}), w_v: ({d}, {d_v}))"
        cases.append(_Case((y, z, w_q, w_k, w_v), shown))
    return cases


@_public
def check_cross_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(y, z, w_q, w_k, w_v)``: cross-attention of the queries ``y`` over the memory ``z``.

    ``y`` has shape ``(m, d)``, ``z`` shape ``(n, d)``, the projections ``(d, d_k)``, ``(d, d_k)``
    and ``(d, d_v)``; the answer is ``softmax(y W_Q (z W_K)^T / sqrt(d_k)) z W_V``, shape ``(m, d_v)``,
    within 1e-4. Named mistakes: roles of ``y`` and ``z`` swapped, softmax over the queries, no
    scale or the wrong one (``d``, ``d_k``, ``sqrt(d_v)``), values taken from ``y``, weights returned
    instead of outputs, the value projection ``W_V`` skipped, the keys or the queries used as values,
    no projections in the scores, projections read transposed. Some hidden widths agree (``d = d_v``,
    ``d_k = d_v``), so that a skipped projection is not caught by its shape alone. Otherwise the
    weights are read back from the output (when ``n <= d_v``): how they are normalised and by what
    the scores are divided.
    """
    return _simple_checker(
        "cross-attention", fn, _cross_cases, reference_cross_attention, _CROSS_MISTAKES,
        ["cross-attention agrees with softmax(y W_Q (z W_K)^T / sqrt(d_k)) z W_V on 6 hidden shapes"],
        what="the output", properties=[_cross_weights_property], sizes=_cross_sizes,
    )


def _cross_sizes(shape: tuple[int, ...], case: _Case) -> str | None:
    """Which input a wrong number of output rows or columns was taken from."""
    y, z, w_q, w_k, w_v = case.args
    if len(shape) != 2:
        return None
    said = []
    if shape[0] == z.shape[0] != y.shape[0]:
        said.append(f"one row per memory row of z ({z.shape[0]}): the queries come from y, y W_Q, one output row per "
                    f"query ({y.shape[0]})")
    if shape[1] != w_v.shape[1]:
        widths = [(w_k.shape[1], "the keys' width d_k (are your values z W_K?)"),
                  (z.shape[1], "the width of z (is W_V applied?)"), (y.shape[1], "the width of y")]
        matching = [name for width, name in widths if width == shape[1]]
        if len(matching) == 1:  # a width shared by two inputs says nothing about which one was used
            said.append(f"columns of {matching[0]}: the output has the width d_v of the values z W_V")
    return "your output has " + "; and ".join(said) if said else None


# --------------------------------------------------------------------------- ex-perm-5


def reference_position_recovery(outputs):
    """Position i from o_i = 1/(i+1): the nearest integer to 1/o_i - 1, computed in float64."""
    return (1.0 / outputs.double() - 1.0).round().long()


_RECOVERY_MISTAKES = [
    _Mistake("recovery parentheses", "you computed 1/(o - 1): the division comes first, 1/o - 1 = (1 / o) - 1, since "
             "o_i = 1/(i + 1) gives 1/o_i = i + 1",
             lambda o: (1.0 / (o.double() - 1.0)).round().long()),
    _Mistake("recovery low precision", "you computed 1/o - 1 in the dtype of the outputs: convert to float64 "
             "first (outputs.double()), or the rounding of the low-precision division adds to the error",
             lambda o: (1.0 / o - 1.0).round().double()),
    _Mistake("recovery low precision", "you computed 1/o - 1 in the dtype of the outputs: convert to float64 "
             "first (outputs.double()), or the rounding of the low-precision division adds to the error",
             lambda o: (1.0 / o).round() - 1.0),
    _Mistake("recovery truncated", "you truncated 1/o - 1 (int(), .long(), floor) instead of rounding it to the "
             "nearest integer: a value of 4.9999 must give 5",
             lambda o: (1.0 / o.double() - 1.0).floor()),
    _Mistake("recovery ceil", "you rounded 1/o - 1 up (ceil) instead of to the nearest integer",
             lambda o: (1.0 / o.double() - 1.0).ceil()),
    _Mistake("recovery no minus one", "you returned 1/o rounded, which is i + 1: subtract 1, since o_i = 1/(i + 1)",
             lambda o: (1.0 / o.double()).round()),
    _Mistake("recovery not rounded", "your positions are not rounded: return the nearest integer to 1/o - 1",
             lambda o: 1.0 / o.double() - 1.0),
    _Mistake("recovery truncated low precision", "you truncated 1/o - 1 (int(), .long(), floor) in the dtype of "
             "the outputs: round to the nearest integer instead (a value of 4.9999 must give 5), after converting "
             "to float64 (outputs.double())",
             lambda o: (1.0 / o - 1.0).floor().double()),
    _Mistake("recovery plus one", "you added 1 instead of subtracting it: o_i = 1/(i + 1), so i = 1/o_i - 1",
             lambda o: (1.0 / o.double() + 1.0).round()),
]


def _recovery_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    for dtype, length in [(torch.float32, 300), (torch.float16, 3000), (torch.bfloat16, 600)]:
        exact = 1.0 / torch.arange(1, length + 1, dtype=torch.float64)
        noise = 1 - 2e-3 * torch.rand(length, generator=generator, dtype=torch.float64) * (dtype != torch.float32)
        cases.append(_Case(((exact * noise).to(dtype),), f"fn(outputs of length {length}, {str(dtype)[6:]})"))
    return cases


@_public
def check_position_recovery(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(outputs)``: the positions ``round(1/o - 1)`` read off uniform causal attention.

    ``outputs`` is a 1-D tensor (float32, float16 or bfloat16) of values close to ``1/(i+1)``;
    the answer is the nearest integer to ``1/o_i - 1`` computed in float64, exactly. Named
    mistakes: computing in low precision, truncating (in float64 or in low precision) or rounding
    up, forgetting the ``- 1`` or adding 1, not rounding.
    """
    return _simple_checker(
        "position recovery", fn, _recovery_cases, reference_position_recovery, _RECOVERY_MISTAKES,
        ["positions recovered exactly from float32, float16 and bfloat16 outputs"],
        what="the positions", atol=1e-9, rtol=0.0,
    )


# --------------------------------------------------------------------------- ex-abs-1


def reference_position_parameter_counts(positions, width):
    """(learned table, one-hot then a linear map, one-hot into Q, K and V): N d, N d, 3 N d."""
    return (positions * width, positions * width, 3 * positions * width)


_COUNT_MISTAKES = [
    _Mistake("counts whole map", "you counted the whole linear map, (d + N) d weights: only the N d weights that "
             "multiply the one-hot coordinates belong to the positions (and 3 N d for Q, K and V)",
             lambda n, d: (n * d, (d + n) * d, 3 * (d + n) * d)),
    _Mistake("counts no three", "your part 3 counts one projection: queries, keys and values each gain N d "
             "weights, 3 N d in all",
             lambda n, d: (n * d, n * d, n * d)),
    _Mistake("counts added", "you added N and d instead of multiplying: a table of N rows of width d has N d "
             "entries",
             lambda n, d: (n + d, n + d, 3 * (n + d))),
    _Mistake("counts one-hot free", "you counted no parameters for the one-hot code followed by a linear map: the "
             "code itself is free, but the map's N d weights on the one-hot coordinates form a learned table",
             lambda n, d: (n * d, 0, 3 * n * d)),
    _Mistake("counts square", "you counted N x N weights: the one-hot code is N wide, but each of its "
             "coordinates is mapped to d outputs, N d weights",
             lambda n, d: (n * d, n * n, 3 * n * n)),
    _Mistake("counts biases", "you counted biases: a bias does not depend on the position, so it is not a "
             "parameter of the positions; count only the weights that multiply the position coordinates",
             lambda n, d: (n * d, n * d + d, 3 * n * d + 3 * d)),
    _Mistake("counts two projections", "your part 3 counts two projections: queries, keys and values each gain "
             "N d weights, 3 N d in all",
             lambda n, d: (n * d, n * d, 2 * n * d)),
]


def _count_order(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """The three right counts in another order: said before any reading of one count."""
    if got.shape != expected.shape or torch.equal(got, expected):
        return None
    if not torch.equal(got.sort().values, expected.sort().values):
        return None
    # Two of the right counts are equal (N d), so any other order moves exactly two parts: an exchange.
    first, second = (index + 1 for index in range(3) if int(got[index]) != int(expected[index]))
    return (f"your three counts are the right ones in the wrong order (parts {first} and {second} exchanged): return "
            "them as (part 1: the learned table, part 2: one-hot then one linear map, part 3: one-hot concatenated "
            "into Q, K and V) = (N d, N d, 3 N d)")


def _count_parts(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Which of the three counts is wrong, and by how much in terms of N and d."""
    n, d = case.args
    names = ("part 1 (the learned table)", "part 2 (one-hot then one linear map)",
             "part 3 (one-hot concatenated into Q, K and V)")
    extras = {d: "d: a bias vector, or one row too many (N + 1 positions); neither is a parameter of the N "
                 "positions",
              3 * d: "3d: the biases of Q, K and V, which are not parameters of the positions",
              d * d: "d²: the weights on the word embedding, which are not parameters of the positions",
              3 * d * d: "3d²: the weights of Q, K and V on the word embedding, not parameters of the positions",
              -n * d: "-N d: one projection (of Q, K and V) missing",
              n * d: "N d: one projection too many, Q, K and V make three",
              -2 * n * d: "-2 N d: only one projection counted, Q, K and V each have N d weights on the positions"}
    said = []
    for index, name in enumerate(names):
        difference = int(got[index]) - int(expected[index])
        if difference:
            # A reading in N and d is given only when it is the only one with small coefficients: at N = 512,
            # d = 768, 3 d² - 3 N d = d², and a coincidence must not name a mistake.
            why = extras.get(difference) if _in_terms(difference, n, d) is not None else None
            if why is not None and ("Q, K and V" in why) != (index == 2):  # the projections are part 3's alone
                why = None
            why = f"{'+' if difference > 0 else ''}{why}" if why else f"{difference:+,}"
            counted = _in_terms(int(got[index]), n, d)
            shown = f"{int(got[index]):,}" + (f" = {counted}" if counted else "")
            ratio = int(got[index]) / int(expected[index]) if int(expected[index]) else 0.0
            times = f", {ratio:g} times the right count" if ratio in (2.0, 3.0, 4.0, 0.5, 1 / 3, 0.25) else ""
            said.append(f"{name} is {shown} instead of {int(expected[index]):,} ({why}{times})")
    return "; ".join(said) if said else None


_MONOMIALS = (("N d", lambda n, d: n * d), ("d²", lambda n, d: d * d), ("N²", lambda n, d: n * n),
              ("N", lambda n, d: n), ("d", lambda n, d: d))


def _in_terms(value: int, n: int, d: int) -> str | None:
    """``value`` as the only sum of at most two of N d, d², N², N, d with coefficients -4..4, if there is one."""
    readings = []
    for first in range(len(_MONOMIALS)):
        for second in range(first, len(_MONOMIALS)):
            for a in (-4, -3, -2, -1, 1, 2, 3, 4):
                for b in (0, -4, -3, -2, -1, 1, 2, 3, 4) if second > first else (0,):
                    if a * _MONOMIALS[first][1](n, d) + b * _MONOMIALS[second][1](n, d) == value:
                        terms = [(k, name) for k, name in ((a, _MONOMIALS[first][0]), (b, _MONOMIALS[second][0]))
                                 if k]
                        terms.sort(key=lambda term: term[0] < 0)  # a positive term first: d² - N d
                        text = " ".join(f"{'-' if k < 0 else '+'} {'' if abs(k) == 1 else abs(k)}{name}"
                                        for k, name in terms)
                        readings.append(text.removeprefix("+ ").replace("- ", "-", 1 if text[0] == "-" else 0))
    return readings[0] if len(set(readings)) == 1 else None


def _count_cases(generator: torch.Generator) -> list[_Case]:
    return [_Case((n, d), f"fn(positions={n}, width={d})") for n, d in [(1024, 96), (512, 768), (16, 8), (100, 300)]]


@_public
def check_position_parameter_counts(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(positions, width)``: the three parameter counts of ex-abs-1 as a tuple.

    The answer is ``(N d, N d, 3 N d)``: a learned table, the position part of one linear map after
    the one-hot concatenation, and the extra weights of Q, K and V fed the concatenation. Named
    mistakes: the whole map counted, one or two projections instead of three, N + d, a free one-hot
    map, N², biases counted; the right counts in another order. Any other wrong count is said part
    by part, with its difference in terms of N and d.
    """
    return _simple_checker(
        "parameter counts", fn, _count_cases, reference_position_parameter_counts, _COUNT_MISTAKES,
        ["the three counts are right, BERT-base included (393,216, 393,216 and 1,179,648)"],
        what="the three counts", atol=0.0, rtol=0.0, properties=[_count_order, _count_parts],
    )


# --------------------------------------------------------------------------- ex-abs-4


def reference_decayed_rows(initial, lr, weight_decay, steps):
    """A row no gradient reaches after ``steps`` AdamW steps: (1 - lr wd)^T times its start."""
    return initial * (1 - lr * weight_decay) ** steps


_DECAY_MISTAKES = [
    _Mistake("decay steps minus one", "your exponent is T - 1: each of the T steps multiplies by (1 - lr wd), "
             "so the factor is (1 - lr wd)^T",
             lambda x, lr, wd, t: x * (1 - lr * wd) ** (t - 1)),
    _Mistake("decay steps plus one", "your exponent is T + 1: each of the T steps multiplies by (1 - lr wd) once",
             lambda x, lr, wd, t: x * (1 - lr * wd) ** (t + 1)),
    _Mistake("decay no lr", "your factor is (1 - wd)^T: AdamW's decoupled decay is scaled by the learning rate, "
             "θ <- θ - lr wd θ, so the factor is (1 - lr wd)^T",
             lambda x, lr, wd, t: x * (1 - wd) ** t),
    _Mistake("decay no wd", "your factor is (1 - lr)^T: the decay multiplies by (1 - lr wd), the learning rate "
             "times the weight decay",
             lambda x, lr, wd, t: x * (1 - lr) ** t),
    _Mistake("decay exponential", "you used exp(-lr wd T), the continuous approximation: the discrete updates "
             "give exactly (1 - lr wd)^T, which differs when lr wd is not small",
             lambda x, lr, wd, t: x * math.exp(-lr * wd * t)),
    _Mistake("decay linear", "your factor is 1 - T lr wd, linear in T: the decay compounds, (1 - lr wd)^T",
             lambda x, lr, wd, t: x * (1 - t * lr * wd)),
    _Mistake("decay float32", "your factor is computed in float32: with a small lr wd, 1 - lr wd keeps only a few "
             "of its digits in float32, and the power T multiplies that rounding error by T; compute it in float64 "
             "(a Python float, or torch.float64), or as exp(T · log1p(-lr wd))",
             lambda x, lr, wd, t: x * torch.tensor(1 - lr * wd, dtype=torch.float32).double() ** t),
    _Mistake("decay grows", "your factor is (1 + lr wd)^T: the decay shrinks the weights, θ <- θ - lr wd θ, so the "
             "factor is (1 - lr wd)^T",
             lambda x, lr, wd, t: x * (1 + lr * wd) ** t),
    _Mistake("decay one step", "your answer is one step of decay, (1 - lr wd): the T steps compound, (1 - lr wd)^T",
             lambda x, lr, wd, t: x * (1 - lr * wd)),
    _Mistake("decay divided", "you divided by (1 + lr wd)^T: AdamW's decoupled decay multiplies by (1 - lr wd) at "
             "each step, (1 - lr wd)^T in all",
             lambda x, lr, wd, t: x / (1 + lr * wd) ** t),
]


def _decay_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """What a wrong decay factor is, when the answer is one factor times the start: the amount decayed, a
    factor that grows, or the per-step factor and the number of steps it implies."""
    initial, lr, wd, steps = case.args
    start = initial.double()
    big = start.abs() > 1e-3
    if not bool(big.any()) or got.shape != start.shape:
        return None
    ratios = got.double()[big] / start[big]
    factor = float(ratios[0])
    if not bool(torch.allclose(ratios, torch.full_like(ratios, factor), rtol=1e-6, atol=1e-12)):
        return None
    right = (1 - lr * wd) ** steps
    if math.isclose(factor, 1 - right, rel_tol=1e-5):
        return ("you returned the amount removed by the decay, initial · (1 - (1 - lr wd)^T): what remains of a row "
                "is initial · (1 - lr wd)^T")
    if math.isclose(factor, (1 - lr * wd * steps) ** steps, rel_tol=1e-9):
        return ("your factor is (1 - lr wd T)^T: the number of steps is in the per-step factor too; each step removes "
                "lr wd of what remains, so the factor is (1 - lr wd)^T")
    if factor > 1:
        return (f"your rows grow (factor {factor:.6g} > 1): weight decay shrinks them, by (1 - lr wd) at each step")
    if factor <= 0:
        return None
    for half in (torch.float16, torch.bfloat16):  # the per-step factor rounded to half precision, however it is formed
        rounded = {float((1 - torch.tensor(lr * wd, dtype=half)).to(half)),
                   float((1 - torch.tensor(lr, dtype=half) * torch.tensor(wd, dtype=half)).to(half))}
        if any(math.isclose(factor, value ** steps, rel_tol=1e-3) and not math.isclose(value ** steps, right,
                                                                                         rel_tol=1e-4)
               for value in rounded):
            return (f"your per-step factor is 1 - lr wd rounded to {_dtype(half)} (half precision): with lr wd = "
                    f"{lr * wd:.3g}, it keeps about three digits or rounds to 1, and the power T multiplies the error: "
                    "compute it in float64 (a Python float, or torch.float64)")
    per_step = factor ** (1 / steps)
    amounts = {"lr + wd": lr + wd, "lr wd / 2": lr * wd / 2, "lr wd / T":
               lr * wd / steps, "2 lr wd": 2 * lr * wd, "lr² wd": lr * lr * wd,
               "lr wd²": lr * wd * wd, "lr": lr, "wd": wd, "lr / wd": lr / wd, "wd / lr": wd / lr,
               "lr + wd - lr wd, the factors (1 - lr)(1 - wd)": lr + wd - lr * wd}
    powers = {f"({one})^({power})": (1 - a) ** t for one, a in (("1 - lr", lr), ("1 - wd", wd), ("1 - lr wd", lr * wd))
              for power, t in (("lr T", lr * steps), ("wd T", wd * steps), ("lr wd T", lr * wd * steps))
              if 0 < 1 - a}
    formula = [name for name, value in powers.items() if math.isclose(factor, value, rel_tol=1e-9)]
    if len(formula) == 1:
        return (f"your factor is {formula[0]}: the decay multiplies by (1 - lr wd) once per step, so the factor is "
                "(1 - lr wd)^T, with the whole number of steps T as the exponent")
    named = [name for name, amount in amounts.items() if math.isclose(1 - per_step, amount, rel_tol=1e-6)]
    if len(named) == 1 and not math.isclose(lr * wd, amounts[named[0]], rel_tol=1e-6):
        return (f"your rows shrink by 1 - ({named[0]}) = 1 - {1 - per_step:.6g} per step: the decoupled decay removes "
                "lr wd θ at each step, lr times wd, so the factor is (1 - lr wd)^T")
    implied = math.log(factor) / math.log1p(-lr * wd)
    if abs(implied - round(implied)) < 1e-3 and round(implied) != steps:
        return (f"your rows are (1 - lr wd)^{round(implied)} times their start: the exponent is {round(implied)} "
                f"where it must be the number of steps T = {steps}, one factor (1 - lr wd) per step")
    return (f"your rows shrink by the factor {factor:.6g} instead of (1 - lr wd)^T = {right:.6g}: as a per-step "
            f"factor that is 1 - {1 - per_step:.6g} per step, not 1 - lr wd = 1 - {lr * wd:.6g}; each of the T steps "
            "multiplies by exactly (1 - lr wd), so the power must be (1 - lr wd)^T")


def _decay_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    # The last setting is realistic, AdamW's usual lr 1e-4 and weight decay 0.1 over 2 x 10^4 steps: float32 arithmetic
    # is 2.7e-4 off there (1 - 1e-5 rounds to float32 with a relative error of 1.4e-8, raised to the power T), which
    # the tolerance 1e-4 rejects, and a student's step-by-step simulation stays quick (10^5 steps took 5 s).
    for rows, lr, wd, steps in [(4, 0.05, 0.1, 50), (3, 0.1, 0.5, 20), (5, 0.3, 0.5, 7), (2, 0.01, 0.01, 1000),
                                (3, 1e-4, 0.1, 20_000)]:
        initial = torch.randn(rows, 4, generator=generator, dtype=torch.float64)
        cases.append(_Case((initial, lr, wd, steps), f"fn(initial: ({rows}, 4), lr={lr}, "
            f"weight_decay={wd}, steps={steps})"))
    return cases


@_public
def check_decayed_rows(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(initial, lr, weight_decay, steps)``: unused rows after ``steps`` AdamW steps.

    The answer is ``initial * (1 - lr * weight_decay) ** steps`` (relative tolerance 1e-4), on
    hidden settings that include a realistic one (lr 1e-4, weight decay 0.1, 2 x 10^4 steps). Named
    mistakes: exponent off by one either way, the learning rate or the decay missing, the
    exponential approximation, a linear factor, the factor in float32, ``(1 + lr wd)^T``, one
    step only, a division by ``(1 + lr wd)^T``; otherwise the factor is read per step (the amount
    removed instead of what remains, another whole exponent, another per-step factor).
    """
    return _simple_checker(
        "decayed rows", fn, _decay_cases, reference_decayed_rows, _DECAY_MISTAKES,
        ["the unused rows equal (1 - lr wd)^T times their start in 5 hidden settings, one of 2 x 10^4 steps"],
        what="the rows", atol=1e-9, rtol=1e-4, properties=[_decay_property],
    )


# --------------------------------------------------------------------------- ex-sin-6


def reference_concatenated_sinusoidal(seq_len, dim, base=10000.0):
    """tensor2tensor's table: all sines, then all cosines, with θ_ℓ = b^(-ℓ/(d/2 - 1))."""
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def _t2t(seq_len, dim, base, exponent_of=None, layout="concatenated", start=0, first=0, use_base=True, scale=1.0):
    half = dim // 2
    ell = torch.arange(half, dtype=torch.float64) + first
    base = base if use_base else 10000.0
    theta = base ** (-(ell / (half - 1) if exponent_of is None else exponent_of(ell, dim)))
    angles = scale * torch.arange(start, start + seq_len, dtype=torch.float64)[:, None] * theta
    if layout == "interleaved":
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
    if layout == "cos first":
        return torch.cat((angles.cos(), angles.sin()), dim=-1)
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


_T2T_MISTAKES = [
    _Mistake("t2t positions normalised", "your positions are divided by seq_len (they run from 0 to 1): row i encodes "
             "the position i itself, an integer",
             lambda n, d, b=10000.0: _t2t(n, d, b, scale=1 / n)),
    _Mistake("t2t paper ladder", "your frequencies are the paper's b^(-2ℓ/d): tensor2tensor's ladder is "
             "b^(-ℓ/(d/2 - 1)), which ends exactly at 1/b",
             lambda n, d, b=10000.0: _t2t(n, d, b, exponent_of=lambda ell, d: 2 * ell / d)),
    _Mistake("t2t interleaved", "your table interleaves sin and cos (sin, cos, sin, cos, ...): this layout puts "
             "all the sines first, then all the cosines",
             lambda n, d, b=10000.0: _t2t(n, d, b, layout="interleaved")),
    _Mistake("t2t cos first", "your table puts the cosines first: tensor2tensor, fairseq and FSMT put the sines "
             "in the first d/2 columns",
             lambda n, d, b=10000.0: _t2t(n, d, b, layout="cos first")),
    _Mistake("t2t from one", "you counted the pair index ℓ from 1: it runs from 0 to d/2 - 1, so the first "
             "frequency is b^0 = 1",
             lambda n, d, b=10000.0: _t2t(n, d, b, first=1)),
    _Mistake("t2t positions from one", "your positions start at 1: the first row is position 0",
             lambda n, d, b=10000.0: _t2t(n, d, b, start=1)),
    _Mistake("t2t base ignored", "your function ignores its base argument (10000 is used whatever base is given)",
             lambda n, d, b=10000.0: _t2t(n, d, b, use_base=False)),
]


def _t2t_ladder(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """The exponent's denominator, read from the frequencies of position 1 (θ_ℓ = atan2(sine, cosine))."""
    n, d, b = case.args
    half = d // 2
    if got.shape != (n, d) or n < 2 or half < 3:
        return None
    theta = torch.atan2(got[1, :half].double(), got[1, half:].double())
    ell = torch.arange(1, half, dtype=torch.float64)
    if not bool((theta[1:] > 0).all()):
        return None
    denominators = ell * math.log(b) / -theta[1:].log()
    if not bool(torch.allclose(denominators, denominators[:1].expand_as(denominators), rtol=1e-3)):
        return None
    found = float(denominators[0])
    said = {"d/2": half, "d": d, "d - 1": d - 1, "d - 2": d - 2, "d/2 + 1": half + 1, "d/2 - 2": half - 2}
    name = next((text for text, value in said.items() if value != half - 1 and math.isclose(found, value,
                                                                                           rel_tol=1e-3)), None)
    if name is None:
        return None
    return (f"your frequencies are b^(-ℓ/({name})), read from position 1: tensor2tensor's exponent is ℓ/(d/2 - 1), "
            "so that the last of the d/2 frequencies is exactly 1/b")


def _t2t_cases(generator: torch.Generator) -> list[_Case]:
    return [_Case((n, d, b), f"fn(seq_len={n}, dim={d}, base={b:g})")
            for n, d, b in [(50, 16, 10000.0), (20, 8, 10000.0), (64, 32, 500.0), (10, 6, 100.0)]]


@_public
def check_concatenated_sinusoidal(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(seq_len, dim, base=10000.0)``: the sines-then-cosines table of tensor2tensor.

    The answer has shape ``(seq_len, dim)``, sines of ``i θ_ℓ`` in the first ``d/2`` columns and
    cosines after, with ``θ_ℓ = b^(-ℓ/(d/2 - 1))`` (as FSMT's ``get_embedding``), within 1e-4
    (float32 is fine). Named mistakes: the paper's ladder, interleaved or cosines first, ℓ from 1,
    positions from 1, base ignored.
    """
    return _simple_checker(
        "concatenated sinusoidal table", fn, _t2t_cases, reference_concatenated_sinusoidal, _T2T_MISTAKES,
        ["the table is tensor2tensor's (sines first, θ_ℓ = b^(-ℓ/(d/2-1))) for 4 hidden settings"],
        what="the table", atol=1e-4, rtol=1e-4, properties=[_t2t_ladder],
    )
