"""Readings of chapter 4's trained look-back models: where their heads attend, what they get right.

Chapter 4 loads the look-back models of the store (``ch4-lookback-*``: the token ``distance``
positions back is the answer) and reads, seed by seed, how they solve the task: the mean
attention weight at each distance ``i - j``, the accuracy at each query position, and for
the T5-bias models the head whose learned bias peaks at the answer's distance. The chapter
states what these readings show (through its claims ledger); the loops live here, tested
against direct computations in ``tests/test_measure_lookback.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch

from .._validation import check_int, check_tensor
from ..experiments.model import TinyCausalLM
from ..relative import T5RelativePositionBias

__all__ = [
    "TwoLayerReading",
    "T5HeadReading",
    "weight_by_distance",
    "accuracy_by_query",
    "masked_accuracy",
    "read_two_layers",
    "read_t5_head",
]


def weight_by_distance(weights: torch.Tensor, num_distances: int, *, first_query: int = 0) -> torch.Tensor:
    """Mean attention weight at each distance ``i - j = 0, 1, ...``, over queries from ``first_query`` on.

    Args:
        weights: ``(..., Lq, Lk)`` attention weights, query ``i`` in row ``i``, key ``j`` in column ``j``.
        num_distances: how many distances to read, ``D`` (1 <= D <= min(Lq, Lk), so that every
            distance has a pair).
        first_query: the first query row read (the ones before it see too few keys).

    Returns:
        ``(..., D)``: entry ``d`` is the mean of ``weights[..., i, i - d]`` over the queries
        ``i >= first_query`` that have a key at distance ``d``: all of them for ``d <= first_query``,
        the queries ``i >= d`` beyond.

    Raises:
        TypeError, ValueError: if ``weights`` is not a tensor of at least two dimensions, or an
            integer is out of range.
    """
    check_tensor("weights", weights, min_dim=2)
    q_len, k_len = weights.shape[-2:]
    check_int("first_query", first_query, minimum=0)
    if first_query >= min(q_len, k_len):
        raise ValueError(
            f"first_query must be below the number of queries and keys ({min(q_len, k_len)}), got {first_query}"
        )
    check_int("num_distances", num_distances, minimum=1)
    if num_distances > min(q_len, k_len):
        # the last distance must have at least one pair among the queries read
        raise ValueError(
            f"num_distances must be at most the number of queries and keys ({min(q_len, k_len)}), got {num_distances}"
        )
    distance = torch.arange(first_query, q_len)[:, None] - torch.arange(k_len)[None, :]
    rows = weights[..., first_query:, :]
    return torch.stack([rows[..., distance == d].mean(-1) for d in range(num_distances)], -1)


def _check_answers(logits: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    check_tensor("logits", logits, min_dim=3)
    check_tensor("answers", answers, min_dim=2)
    if logits.dim() != 3 or answers.shape != logits.shape[:2]:
        raise ValueError(
            f"logits must be (B, L, V) and answers (B, L), got {tuple(logits.shape)} and {tuple(answers.shape)}"
        )
    if not (answers >= 0).any():
        raise ValueError("answers must contain at least one scored position (an entry >= 0)")
    return (logits.argmax(-1) == answers) & (answers >= 0)


def accuracy_by_query(logits: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """Accuracy at each query position that has an answer, over the batch.

    Args:
        logits: ``(B, L, V)`` next-token logits.
        answers: ``(B, L)`` integer targets; a negative entry is not scored.

    Returns:
        ``(Q,)`` float: for each of the ``Q`` positions with at least one answer, in order, the
        share of its answers that the argmax of the logits gets right.

    Raises:
        TypeError, ValueError: on wrong shapes or when nothing is scored.
    """
    correct = _check_answers(logits, answers)
    answered = answers >= 0
    return (correct.sum(0) / answered.sum(0))[answered.any(0)]


def masked_accuracy(logits: torch.Tensor, answers: torch.Tensor) -> float:
    """Share of the scored answers (entries ``>= 0``) that the argmax of the logits gets right.

    Args:
        logits: ``(B, L, V)`` next-token logits.
        answers: ``(B, L)`` integer targets; a negative entry is not scored.

    Returns:
        The accuracy, a float in [0, 1].

    Raises:
        TypeError, ValueError: on wrong shapes or when nothing is scored.
    """
    correct = _check_answers(logits, answers)
    return correct.sum().item() / (answers >= 0).sum().item()


@dataclass(frozen=True)
class TwoLayerReading:
    """What :func:`read_two_layers` reads from one two-layer look-back model.

    Attributes:
        bos_step: the largest change, from one query to the next (queries 2 on), of the first
            layer's weight on the first key (BOS), mean over heads and batch; below 0 it falls
            at every step.
        near: the first layer's mean weight at distances 0 and 1, head by head
            (``[h0 d0, h0 d1, h1 d0, ...]``).
        peak: the distance ``0 <= d < span`` at which the second layer's mean weight peaks.
        late_drop: the accuracy on the first ``span`` answered query positions minus that on the
            last ``span``.
    """

    bos_step: float
    near: list[float]
    peak: int
    late_drop: float


def read_two_layers(
    model: TinyCausalLM, tokens: torch.Tensor, answers: torch.Tensor, *, first_query: int = 8, span: int = 8
) -> TwoLayerReading:
    """Read how a two-layer look-back model attends (see :class:`TwoLayerReading`).

    Args:
        model: a two-layer :class:`~posenc.experiments.model.TinyCausalLM`.
        tokens: ``(B, L)`` held-out tokens.
        answers: ``(B, L)`` their targets (negative: not scored).
        first_query: the first query whose weights by distance are read.
        span: number of distances read in the second layer, and of query positions compared.

    Returns:
        A :class:`TwoLayerReading`.

    Raises:
        ValueError: if the model does not have two layers, or as :func:`weight_by_distance`.
    """
    first, second = (w.mean(0) for w in model.attention_weights(tokens))  # (h, L, L)
    by_query = accuracy_by_query(model(tokens), answers)
    check_int("span", span, minimum=1)
    return TwoLayerReading(
        bos_step=first.mean(0)[2:, 0].diff().max().item(),
        near=weight_by_distance(first, 2, first_query=first_query).flatten().tolist(),
        peak=int(weight_by_distance(second.mean(0), span, first_query=first_query).argmax()),
        late_drop=(by_query[:span].mean() - by_query[-span:].mean()).item(),
    )


@dataclass(frozen=True)
class T5HeadReading:
    """What :func:`read_t5_head` reads from one T5-bias look-back model.

    Attributes:
        head: the first head whose learned bias is largest in the answer's bucket.
        bias_by_distance: ``(L,)`` that head's bias for the last query at distances ``0 .. L - 1``.
        bias_margin: its bias in the answer's bucket minus its largest other bias.
        bias_peak: the bucket of that head's largest bias.
        attention_peak: the distance ``0 <= d < span`` where that head's mean weight (queries from
            ``first_query`` on) peaks.
    """

    head: int
    bias_by_distance: torch.Tensor
    bias_margin: float
    bias_peak: int
    attention_peak: int


def read_t5_head(
    model: TinyCausalLM, tokens: torch.Tensor, bucket: int, *, first_query: int = 8, span: int | None = None
) -> T5HeadReading:
    """Find the first-layer head of a T5-bias model whose bias peaks in ``bucket`` and read it.

    Args:
        model: a :class:`~posenc.experiments.model.TinyCausalLM` with a T5 bias in its first layer.
        tokens: ``(B, L)`` held-out tokens, ``L`` the model's training length.
        bucket: the bucket of the answer's distance.
        first_query: the first query whose weights by distance are read.
        span: number of distances read; by default every distance a query sees, ``0 .. L - 1``.

    Returns:
        A :class:`T5HeadReading` (the first head, ``head = 0``, if no head peaks in ``bucket``).

    Raises:
        ValueError: if ``bucket`` is not a bucket of the model's table, or as
            :func:`weight_by_distance`.
    """
    bias = cast(T5RelativePositionBias, model.blocks[0].attention.relative_bias)  # type: ignore[union-attr]
    table = bias.embedding.weight  # (buckets, h)
    check_int("bucket", bucket, minimum=0)
    if bucket >= len(table):
        raise ValueError(f"bucket must be below the number of buckets ({len(table)}), got {bucket}")
    head = int((table.argmax(0) == bucket).int().argmax())
    length = tokens.shape[-1]
    weights = model.attention_weights(tokens)[0].mean(0)[head]  # (L, L)
    others = torch.arange(len(table)) != bucket
    return T5HeadReading(
        head=head,
        bias_by_distance=bias(1, length, query_offset=length - 1)[head, 0].flip(0),
        bias_margin=(table[bucket, head] - table[others, head].max()).item(),
        bias_peak=int(table[:, head].argmax()),
        attention_peak=int(weight_by_distance(weights, span or length, first_query=first_query).argmax()),
    )
