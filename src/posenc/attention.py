"""Scaled dot-product attention and causal masks.

Shape legend:
    - ``b``: batch size
    - ``h``: number of heads
    - ``Lq``: number of queries; ``Lk``: number of keys (``L`` when both are equal)
    - ``d``: query/key dimension; ``dv``: value dimension

Masks are boolean and follow one convention everywhere in :mod:`posenc`:
**True means "may attend"**, the same as :func:`torch.nn.functional.scaled_dot_product_attention`.
"""

from __future__ import annotations

import math

import torch

from ._validation import check_floating, check_int, check_tensor

__all__ = [
    "attention_weights",
    "check_qkv",
    "causal_mask",
    "scaled_dot_product_attention",
]


def _check_broadcastable(name: str, value: torch.Tensor, target: tuple[int, ...]) -> None:
    # Broadcasting worked out by hand: torch.broadcast_shapes imports sympy on first use, about a
    # second in every fresh kernel (each autograded submission is one).
    shape, goal = tuple(value.shape), tuple(target)
    fits = len(shape) <= len(goal) and all(
        size in (1, wanted) for size, wanted in zip(reversed(shape), reversed(goal), strict=False)
    )
    if not fits:
        raise ValueError(
            f"{name} of shape {tuple(value.shape)} is not broadcastable to the scores' shape "
            f"{target} (..., Lq, Lk)"
        )


def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """Check that ``q (..., Lq, d)``, ``k (..., Lk, d)`` and ``v (..., Lk, dv)`` fit together.

    Raises:
        TypeError: if one of them is not a floating tensor.
        ValueError: if one has fewer than 2 dimensions, ``q`` and ``k`` differ in ``d``, or ``k``
            and ``v`` differ in ``Lk``.
    """
    for name, tensor in (("q", q), ("k", k), ("v", v)):
        check_floating(name, check_tensor(name, tensor, min_dim=2))
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dimension d, got q {tuple(q.shape)} and k {tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys Lk, got k {tuple(k.shape)} and v {tuple(v.shape)}"
        )


def attention_weights(
    scores: torch.Tensor, mask: torch.Tensor | None = None, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """Turn raw scores into attention weights: add ``bias``, apply ``mask``, softmax over keys.

    A query row whose keys are all masked out (or all biased by ``-inf``) gets weights of zero,
    so its output is zero: the same convention as PyTorch's fused attention, rather than NaNs.

    Args:
        scores: ``(..., Lq, Lk)`` floating scores (already scaled).
        mask: optional boolean tensor broadcastable to ``(..., Lq, Lk)``; True = may attend.
        bias: optional floating tensor broadcastable to ``(..., Lq, Lk)``, added to ``scores``.

    Returns:
        ``(..., Lq, Lk)`` weights; every row sums to 1 (or to 0 if fully masked).

    Raises:
        TypeError: if ``mask`` is not boolean or ``bias`` not floating.
        ValueError: if ``mask`` or ``bias`` cannot broadcast to the scores' shape.
    """
    target = tuple(scores.shape)
    if bias is not None:
        bias = check_floating("bias", check_tensor("bias", bias))
        _check_broadcastable("bias", bias, target)
        scores = scores + bias
    if mask is not None:
        mask = check_tensor("mask", mask)
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}")
        _check_broadcastable("mask", mask, target)
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    # The softmax of a row that is -inf everywhere (masked out, or a -inf bias) is NaN; such a
    # query attends to nothing.
    return weights.masked_fill(torch.isneginf(scores).all(dim=-1, keepdim=True), 0.0)


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Scaled dot-product attention that also returns its weights.

    .. math::
        \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(
            \frac{Q K^\top}{\sqrt{d}} + B + M\right) V,

    where ``B`` is ``bias`` and ``M`` is 0 where ``mask`` is True and ``-inf`` elsewhere.

    Args:
        q: ``(..., Lq, d)`` queries.
        k: ``(..., Lk, d)`` keys.
        v: ``(..., Lk, dv)`` values.
        mask: optional boolean tensor broadcastable to ``(..., Lq, Lk)``; True = may attend.
        bias: optional floating tensor broadcastable to ``(..., Lq, Lk)``, added to the
            scaled scores (relative position biases, ALiBi).

    Returns:
        ``(output, weights)`` with ``output`` of shape ``(..., Lq, dv)`` and ``weights`` of shape
        ``(..., Lq, Lk)``.

    Raises:
        TypeError: if an input is not a floating tensor, or ``mask`` is not boolean.
        ValueError: if the shapes of ``q``, ``k``, ``v``, ``mask`` or ``bias`` do not fit together.
    """
    check_qkv(q, k, v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = attention_weights(scores, mask=mask, bias=bias)
    return weights @ v, weights


def causal_mask(q_len: int, k_len: int | None = None, *, device: torch.device | str | None = None) -> torch.Tensor:
    """Boolean causal mask: query ``i`` may attend to key ``j`` iff ``j <= i``.

    Queries and keys are both numbered from 0 (top-left alignment, the same as
    ``is_causal=True`` in :func:`torch.nn.functional.scaled_dot_product_attention`).

    Args:
        q_len: number of queries ``Lq`` (>= 1).
        k_len: number of keys ``Lk`` (>= 1); defaults to ``q_len``.
        device: where to create the mask.

    Returns:
        ``(Lq, Lk)`` boolean tensor, True = may attend.

    Raises:
        ValueError: if a length is < 1.
    """
    q_len = check_int("q_len", q_len, minimum=1)
    k_len = q_len if k_len is None else check_int("k_len", k_len, minimum=1)
    return torch.ones(q_len, k_len, dtype=torch.bool, device=device).tril()
