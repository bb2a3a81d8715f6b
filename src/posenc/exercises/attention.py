"""Checker of the attention exercise: scaled dot-product attention with a boolean mask.

:func:`~posenc.exercises.check_attention` compares the student's ``(output, weights)`` with a
float64 reference and with PyTorch's own attention, and recognises the typical mistakes: the
softmax over the wrong axis, no ``1/sqrt(d)`` scaling or the wrong one, the mask convention
inverted or the mask ignored, and an output that is not ``weights @ v``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F

from ..attention import attention_weights
from ._readings import _Case
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
    _close,
    _describe,
    _distinct,
    _dtype,
    _expect_finite,
    _expect_floating,
    _expect_shape,
    _expect_tensor,
    _first_difference,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _type_name,
    _unchanged,
)

__all__ = ["check_attention"]


# --------------------------------------------------------------------------- attention


def _scale_read_back(got: torch.Tensor, q: torch.Tensor, k: torch.Tensor) -> float | None:
    """The c with got = softmax(q kᵀ / c) on the first row with two positive weights (log w is linear in the score)."""
    scores = q.double() @ k.double().transpose(-2, -1)
    if scores.shape != got.shape:
        return None
    scores = scores.reshape(-1, got.shape[-1])
    for row, weights in zip(scores, got.double().reshape(-1, got.shape[-1]), strict=True):
        kept = weights > 0
        if int(kept.sum()) >= 2:
            x, y = row[kept] - row[kept].mean(), weights[kept].log() - weights[kept].log().mean()
            slope = float(x @ y)
            return float(x @ x) / slope if slope > 0 else None
    return None


def _attention_reference(
    q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None, *, scale: float, dim: int = -1
) -> torch.Tensor:
    scores = (q.double() @ k.double().transpose(-2, -1)) / scale
    if dim == -1:
        return attention_weights(scores, mask=mask)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=dim).nan_to_num(0.0)




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
        problem = _mask_misuse(got, q, k, full_mask, call)
        if problem is not None:
            return problem
    if got.shape[-1] == got.shape[-2] and _close(got, _attention_reference(q, k, mask, scale=math.sqrt(d)).transpose(
            -2, -1)):  # the right weights transposed: rows and columns exchanged, not normalised over the queries
        return _Problem("weights transposed", f"your weights are transposed in {call}: entry (i, j) must be query i's "
                        "weight on key j, shape (..., Lq, Lk) with each row summing to 1: drop the transpose")
    row_sums = got.sum(-1)
    bad_rows = (row_sums - 1).abs() > 1e-4
    exp_sums = got.exp().sum(-1)
    if bool(bad_rows.any()) and bool((got <= 1e-9).all()) and bool(((exp_sums - 1).abs() < 1e-4).all()):
        # log_softmax, or log of the softmax: every row's exponentials sum to 1, whatever the scores were
        exact = _close(got.exp(), expected.double().nan_to_num(0.0))
        return _Problem(
            "log-probabilities",
            f"your weights are log-probabilities in {call}: no entry is positive and the exponentials of each row "
            "sum to 1 (log_softmax, or the log of the softmax). Return the probabilities softmax(scores, dim=-1) "
            "themselves" + ("; their exponentials are the right weights" if exact else
                            "; their exponentials are not the right weights either, so check the scores too"),
        )
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
        (float(math.isqrt(d)), f"you scale by isqrt(d) = {math.isqrt(d)}, the integer part of sqrt(d): the scale is "
         f"sqrt(d) = sqrt({d}) ≈ {_num(math.sqrt(d))}, a real number (math.sqrt, or d ** 0.5)"),
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
    read = _scale_read_back(got, q, k)
    if read is not None and _close(got, _attention_reference(q, k, mask, scale=read)):
        # Any other constant: the same weights come from q or k scaled, so the scale is said with that reading.
        return _Problem("scale other", f"wrong scaling in {call}: your weights are softmax(q kᵀ / {_num(read)}), "
                        f"{_num(read / math.sqrt(d))} sqrt(d): the scores are divided by another number than sqrt(d) "
                        f"= sqrt({d}) ≈ {_num(math.sqrt(d))}, or q or k is scaled by a constant first (the right one "
                        f"for {_num(math.sqrt(d) / read)}·q in place of q gives the same weights)")
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
    if full_mask is not None and full_mask.shape[-1] == full_mask.shape[-2] and _close(
            got, _attention_reference(q, k, full_mask.transpose(-2, -1), scale=math.sqrt(d))):
        return _Problem("mask transposed", f"in {call}, your weights are those of the transposed mask: mask[i, j] "
                        "says whether query i (a row) may attend to key j (a column), so use it as it is, not mask.T")
    if full_mask is not None and bool((got.abs() > 1e-7)[~full_mask].any()):
        index = tuple(int(i) for i in ((got.abs() > 1e-7) & ~full_mask).nonzero()[0])
        return _Problem(
            "masked weight",
            f"in {call}, query {index[-2]} must not attend to key {index[-1]} (mask False) but gets weight "
            f"{_num(float(got[index]))}: masked keys must get weight exactly 0 (fill their scores with -inf, "
            "not with 0 or another finite number, before the softmax)",
        )
    index = _first_difference(got, expected)
    should, was = _distinct(float(expected[index]), float(got[index]))
    return _Problem(
        "weights",
        f"in {call}, the weight of query {index[-2]} on key {index[-1]} should be {should}, "
        f"got {was}; the weights are softmax(q kᵀ / sqrt(d)) over the keys, with masked "
        "scores set to -inf",
    )


def _mask_misuse(
    got: torch.Tensor, q: torch.Tensor, k: torch.Tensor, full_mask: torch.Tensor, call: str,
) -> _Problem | None:
    """A mask used at the wrong place or as the wrong thing: after the softmax, added as numbers, or replaced."""
    d = q.shape[-1]
    unmasked = _attention_reference(q, k, None, scale=math.sqrt(d))
    if _close(got, unmasked * full_mask):
        return _Problem(
            "mask after softmax",
            f"in {call}, your weights are the unmasked softmax with the masked keys set to 0 afterwards: the "
            "remaining weights of a row then sum to less than 1. Mask the scores before the softmax "
            "(scores.masked_fill(~mask, float('-inf'))), so that the softmax normalises over the allowed keys",
        )
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(d)
    for added, how in ((full_mask.double(), "+1 where allowed"), (-full_mask.double(), "-1 where allowed")):
        if _close(got, torch.softmax(scores + added, dim=-1)):
            return _Problem(
                "mask added",
                f"in {call}, you added the boolean mask to the scores as a number ({how}): that shifts the "
                "scores by 1 instead of excluding keys. Set the masked scores to -inf: "
                "scores.masked_fill(~mask, float('-inf'))",
            )
    length = full_mask.shape[-1]
    causal = torch.ones(full_mask.shape[-2], length, dtype=torch.bool).tril(length - full_mask.shape[-2])
    if not bool(torch.equal(causal.expand(full_mask.shape), full_mask)) and _close(
        got, _attention_reference(q, k, causal, scale=math.sqrt(d))
    ):
        return _Problem(
            "mask replaced",
            f"in {call}, your weights follow a causal mask (torch.tril) rather than the mask argument: use the "
            "mask you are given (True = may attend); it may be a padding mask or any other pattern",
        )
    return None


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


@_public
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
    masked keys with nonzero weight; the mask applied after the softmax, added to the scores as
    numbers, or replaced by a causal mask; output not ``weights @ v``; outputs swapped; wrong
    shapes or dtype; inputs modified in place; exceptions.

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
            tags = set(case.get("tags", ())) | ({"2-D"} if case["q"].dim() == 2 else {"more axes"})
            session.run(partial(_attention_case, session, case), tags)
        if session.failed_exactly_with("more axes"):
            session.problems = {"axes": "only the inputs with leading (batch, heads) axes failed: an operation that "
                                "counts axes from the start works on (L, d) only; k.T reverses every axis of a batched "
                                "tensor and dim=1 is the heads there: use k.transpose(-2, -1) (k.mT) and softmax(..., "
                                "dim=-1), axes counted from the end", **session.problems}
        return [
            f"weights match posenc.attention_weights and outputs match "
            f"torch.nn.functional.scaled_dot_product_attention on {session.cases} hidden cases: 2-D and batched "
            "(batch, heads) inputs, d ≠ dv, float32 and float64",
            "each query's weights sum to 1 over the keys (softmax over the last axis); scores are scaled by "
            "1/sqrt(d) with d = q.shape[-1]",
            "masked keys (mask False) get weight 0, with random, causal and broadcast padding masks",
            "returns (output, weights) with the right shapes and dtype, and leaves its inputs unchanged",
        ]

    generator = torch.Generator().manual_seed(_SEED + 2)
    q, k, v = (torch.randn(4, 8, generator=generator, dtype=torch.float64),
               torch.randn(6, 8, generator=generator, dtype=torch.float64),
               torch.randn(6, 3, generator=generator, dtype=torch.float64))
    causal = torch.ones(4, 6, dtype=torch.bool).tril(2)
    probes = [_Case((q, k, v), "probe"), _Case((q, k, v), "probe", {"mask": causal}),
              _Case((q[None].expand(2, 4, 8), k[None].expand(2, 6, 8) * 2, v[None].expand(2, 6, 3)), "probe")]
    return _run_checker("scaled dot-product attention", fn, body, reading=_probing(
        fn, ("weights",), _attention_probe_reference, probes, "the weights", ("q", "k", "v"),
        output=lambda returned: returned[1]))


def _attention_probe_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                               mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    weights = _attention_reference(q, k, mask, scale=math.sqrt(q.shape[-1]))
    return weights @ v.double(), weights


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of the shapes (valid ones: the hidden cases'), without torch.broadcast_shapes.

    ``torch.broadcast_shapes`` imports ``sympy`` on its first call, which costs a second in every fresh
    kernel that runs the checker (an autograded submission).
    """
    length = max(len(shape) for shape in shapes)
    padded = [(1,) * (length - len(shape)) + tuple(shape) for shape in shapes]
    return tuple(max(sizes) for sizes in zip(*padded, strict=True))


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
    batch = _broadcast(q.shape[:-2], k.shape[:-2], v.shape[:-2])
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
    _masked_column_nan(weights, mask, call)
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


def _masked_column_nan(weights: torch.Tensor, mask: torch.Tensor | None, call: str) -> None:
    """A nan in a key column that the mask hides from every query: a softmax taken over the queries."""
    if mask is None or not weights.is_floating_point() or bool(torch.isfinite(weights).all()):
        return
    hidden_everywhere = (~mask.expand(weights.shape)).all(dim=-2, keepdim=True).expand(weights.shape)
    nonfinite = ~torch.isfinite(weights)
    if not bool(hidden_everywhere[nonfinite].all()):
        return
    index = tuple(int(i) for i in nonfinite.nonzero()[0])
    raise _Problem(
        "masked column nan",
        f"{call} returned weights with nan at index {index}: key {index[-1]} is masked for every query, so its "
        "column of scores is all -inf, and a normalisation over the queries (softmax(dim=-2), or a division by "
        "the column sums) divides 0 by 0 there. Each query "
        "normalises over the keys, softmax(scores, dim=-1): every row keeps an unmasked key, so no row is empty",
    )
