r"""Relative position methods: Shaw et al. embeddings, T5's bucketed bias and ALiBi.

Shape legend:
    - ``h``: number of heads
    - ``Lq``: number of queries (positions ``i``); ``Lk``: number of keys (positions ``j``)
    - ``d``: head dimension

One sign convention throughout, T5's: the relative position of key ``j`` seen from query ``i``
is :math:`j - i` (negative for keys in the past).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._validation import check_int, check_tensor
from .attention import attention_weights, check_qkv

__all__ = [
    "RelativePositionEmbedding",
    "T5RelativePositionBias",
    "alibi_bias",
    "alibi_slopes",
    "clipped_relative_positions",
    "relative_positions",
    "shaw_attention",
    "t5_relative_position_bucket",
]


def relative_positions(q_len: int, k_len: int | None = None, *, query_offset: int = 0) -> torch.Tensor:
    """Matrix of relative positions ``R[r, j] = j - i_r`` (key position minus query position).

    Keys sit at positions ``0, ..., Lk - 1`` and query number ``r`` at ``i_r = query_offset + r``.
    The default aligns the first query with the first key (self-attention over one sequence). In
    cached decoding the new queries are the *last* tokens: with ``Lq`` new queries and ``Lk``
    cached keys, pass ``query_offset=Lk - Lq``, or the newest keys get the largest distances.

    Args:
        q_len: number of queries ``Lq`` (>= 1).
        k_len: number of keys ``Lk`` (>= 1); defaults to ``q_len``.
        query_offset: position of the first query (an integer, may be negative).

    Returns:
        ``(Lq, Lk)`` integer (``torch.long``) tensor.

    Raises:
        ValueError: if a length is < 1.
        TypeError: if ``query_offset`` is not an integer.
    """
    q_len = check_int("q_len", q_len, minimum=1)
    k_len = q_len if k_len is None else check_int("k_len", k_len, minimum=1)
    query_offset = check_int("query_offset", query_offset)
    return torch.arange(k_len)[None, :] - (query_offset + torch.arange(q_len))[:, None]


def clipped_relative_positions(
    q_len: int, k_len: int | None = None, *, max_distance: int, query_offset: int = 0
) -> torch.Tensor:
    """Relative positions ``j - i`` clipped to ``[-max_distance, max_distance]`` (Shaw et al., 2018).

    Args:
        q_len: number of queries ``Lq`` (>= 1).
        k_len: number of keys ``Lk`` (>= 1); defaults to ``q_len``.
        max_distance: clipping distance ``k`` (>= 0); beyond it all distances look alike.
        query_offset: position of the first query, as in :func:`relative_positions`.

    Returns:
        ``(Lq, Lk)`` integer tensor with values in ``[-max_distance, max_distance]``.

    Raises:
        ValueError: if a length is < 1 or ``max_distance < 0``.
    """
    max_distance = check_int("max_distance", max_distance, minimum=0)
    return relative_positions(q_len, k_len, query_offset=query_offset).clamp(-max_distance, max_distance)


class RelativePositionEmbedding(nn.Module):
    """Learned vectors for clipped relative positions (Shaw et al., 2018).

    One vector ``w[r]`` of size ``dim`` for each ``r`` in ``[-max_distance, max_distance]``;
    the pair ``(i, j)`` reads ``w[clip(j - i)]``. Use one instance for keys and one for values.

    Args:
        max_distance: clipping distance ``k`` (>= 0); the table has ``2k + 1`` rows.
        dim: vector size, normally the head dimension ``d`` (>= 1).

    Shapes:
        ``forward(q_len, k_len, *, query_offset=0)`` -> ``(Lq, Lk, d)``; ``query_offset`` as in
        :func:`relative_positions`.

    Raises:
        ValueError: if ``max_distance < 0`` or ``dim < 1``.
    """

    def __init__(self, max_distance: int, dim: int) -> None:
        super().__init__()
        self.max_distance = check_int("max_distance", max_distance, minimum=0)
        self.dim = check_int("dim", dim, minimum=1)
        self.embedding = nn.Embedding(2 * max_distance + 1, dim)
        nn.init.normal_(self.embedding.weight, std=dim**-0.5)

    def forward(self, q_len: int, k_len: int | None = None, *, query_offset: int = 0) -> torch.Tensor:
        """Return the ``(Lq, Lk, d)`` tensor of relative vectors ``w[clip(j - i)]``."""
        index = clipped_relative_positions(q_len, k_len, max_distance=self.max_distance, query_offset=query_offset)
        return self.embedding(index.to(self.embedding.weight.device) + self.max_distance)


def shaw_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    key_embeddings: torch.Tensor,
    value_embeddings: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Attention with relative position representations (Shaw et al., 2018).

    .. math::
        e_{ij} = \frac{q_i^\top (k_j + a^K_{ij})}{\sqrt{d}}, \qquad
        z_i = \sum_j \alpha_{ij} \,(v_j + a^V_{ij}), \qquad \alpha = \operatorname{softmax}_j(e).

    Args:
        q: ``(..., Lq, d)`` queries.
        k: ``(..., Lk, d)`` keys.
        v: ``(..., Lk, d)`` values (same width as the value embeddings, if given).
        key_embeddings: ``(Lq, Lk, d)`` vectors :math:`a^K_{ij}`.
        value_embeddings: optional ``(Lq, Lk, d)`` vectors :math:`a^V_{ij}`.
        mask: optional boolean tensor broadcastable to ``(..., Lq, Lk)``; True = may attend.

    Returns:
        ``(output, weights)``: ``(..., Lq, d)`` and ``(..., Lq, Lk)``.

    Raises:
        TypeError: if ``q``, ``k`` or ``v`` is not a floating-point tensor.
        ValueError: if ``q``, ``k`` and ``v`` do not fit together (as
            :func:`~posenc.attention.scaled_dot_product_attention`), or the embedding tensors do
            not have shape ``(Lq, Lk, d)``.
    """
    check_qkv(q, k, v)
    q_len, k_len, dim = q.shape[-2], k.shape[-2], q.shape[-1]
    check_tensor("key_embeddings", key_embeddings)
    if key_embeddings.shape != (q_len, k_len, dim):
        raise ValueError(
            f"key_embeddings must have shape (Lq, Lk, d) = {(q_len, k_len, dim)}, got {tuple(key_embeddings.shape)}"
        )
    scores = (q @ k.transpose(-2, -1) + torch.einsum("...qd,qkd->...qk", q, key_embeddings)) / math.sqrt(dim)
    weights = attention_weights(scores, mask=mask)
    output = weights @ v
    if value_embeddings is not None:
        check_tensor("value_embeddings", value_embeddings)
        if value_embeddings.shape != (q_len, k_len, v.shape[-1]):
            raise ValueError(
                "value_embeddings must have shape (Lq, Lk, dv) = "
                f"{(q_len, k_len, v.shape[-1])}, got {tuple(value_embeddings.shape)}"
            )
        output = output + torch.einsum("...qk,qkd->...qd", weights, value_embeddings)
    return output, weights


def _check_bucket_arguments(bidirectional: bool, num_buckets: int, max_distance: int) -> None:
    num_buckets = check_int("num_buckets", num_buckets, minimum=4 if bidirectional else 2)
    # Half of the (per-direction) buckets hold exact distances 0..max_exact-1, the rest are
    # logarithmic up to max_distance, so max_distance must lie beyond the exact range.
    max_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    check_int("max_distance", max_distance, minimum=max_exact + 1)


def t5_relative_position_bucket(
    relative_position: torch.Tensor,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:
    """Map relative positions to T5's buckets (Raffel et al., 2020), exactly as T5 does.

    ``relative_position`` is key position minus query position (``j - i``). With
    ``bidirectional=True`` half of the buckets are for keys after the query (``j - i > 0``) and
    half for the rest; otherwise only the past is distinguished and every future key falls in
    bucket 0. Within a direction, let ``n`` be its number of buckets and ``max_exact = n // 2``:
    distances below ``max_exact`` get a bucket each, larger ones share logarithmically wider
    buckets up to ``max_distance``, and everything farther goes to the last bucket ``n - 1``.

    Args:
        relative_position: integer tensor of any shape holding ``j - i``.
        bidirectional: whether keys before and after the query get different buckets.
        num_buckets: total number of buckets (>= 4 if bidirectional, else >= 2).
        max_distance: scale of the logarithmic buckets (> ``max_exact``): they would reach
            bucket ``n`` at this distance, so the last bucket ``n - 1`` starts earlier, at
            ``max_exact * (max_distance / max_exact) ** ((n - 1 - max_exact) / (n - max_exact))``
            rounded up (91 bidirectional, 113 causal with T5's defaults), and holds every
            larger distance.

    Returns:
        Tensor of bucket indices in ``[0, num_buckets)``, same shape, dtype ``torch.long``.

    Raises:
        TypeError: if ``relative_position`` is not an integer tensor.
        ValueError: if ``num_buckets`` or ``max_distance`` is out of range.
    """
    check_tensor("relative_position", relative_position)
    if relative_position.is_floating_point() or relative_position.dtype == torch.bool:
        raise TypeError(f"relative_position must be an integer tensor, got dtype {relative_position.dtype}")
    _check_bucket_arguments(bidirectional, num_buckets, max_distance)
    relative_position = relative_position.long()
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative_position > 0).long() * num_buckets
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    # Clamped to 1 so that log() stays finite where the small branch is taken anyway.
    log_ratio = torch.log(distance.clamp(min=1).float() / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (log_ratio * (num_buckets - max_exact)).long()
    large = large.clamp(max=num_buckets - 1)
    return buckets + torch.where(is_small, distance, large)


class T5RelativePositionBias(nn.Module):
    """T5's learned relative position bias: one scalar per head and bucket.

    The bias for query ``i`` and key ``j`` in head ``h`` is ``table[bucket(j - i), h]``, with
    buckets from :func:`t5_relative_position_bucket`. It is added to the attention scores.

    Args:
        num_heads: number of heads ``h`` (>= 1).
        num_buckets: number of buckets (T5 uses 32).
        max_distance: scale of the logarithmic buckets (T5 uses 128); the last bucket starts
            below it, see :func:`t5_relative_position_bucket`.
        bidirectional: True for encoders, False for causal decoders.

    Shapes:
        ``forward(q_len, k_len, *, query_offset=0)`` -> ``(h, Lq, Lk)``; ``query_offset`` as in
        :func:`relative_positions`.

    Raises:
        ValueError: if ``num_heads < 1`` or the bucket arguments are out of range.
    """

    def __init__(
        self, num_heads: int, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True
    ) -> None:
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        _check_bucket_arguments(bidirectional, num_buckets, max_distance)
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bidirectional = bidirectional
        self.embedding = nn.Embedding(num_buckets, num_heads)

    def forward(self, q_len: int, k_len: int | None = None, *, query_offset: int = 0) -> torch.Tensor:
        """Return the ``(h, Lq, Lk)`` bias."""
        buckets = t5_relative_position_bucket(
            relative_positions(q_len, k_len, query_offset=query_offset),
            bidirectional=self.bidirectional,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )
        return self.embedding(buckets.to(self.embedding.weight.device)).permute(2, 0, 1)


def _power_of_two_slopes(num_heads: int) -> list[float]:
    start = 2.0 ** (-(2.0 ** -(math.log2(num_heads) - 3)))
    return [start ** (index + 1) for index in range(num_heads)]


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """Per-head ALiBi slopes, as in the reference code of Press et al. (2022).

    For ``n`` heads, ``n`` a power of two, the slopes are the geometric sequence
    ``2^(-8/n), 2^(-16/n), ..., 2^(-8)``. Otherwise the slopes of the largest power of two
    ``m < n`` are followed by every other slope of ``2m`` heads, ``n - m`` of them.

    Args:
        num_heads: number of heads (>= 1).

    Returns:
        ``(num_heads,)`` float32 tensor of positive slopes.

    Raises:
        ValueError: if ``num_heads < 1``.
    """
    num_heads = check_int("num_heads", num_heads, minimum=1)
    closest_power = 2 ** math.floor(math.log2(num_heads))
    slopes = _power_of_two_slopes(closest_power)
    if closest_power < num_heads:
        slopes += _power_of_two_slopes(2 * closest_power)[0::2][: num_heads - closest_power]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(num_heads: int, q_len: int, k_len: int | None = None, *, query_offset: int = 0) -> torch.Tensor:
    r"""ALiBi's linear distance penalty ``-m_h |j - i|`` for every head, query and key.

    In a causal model (keys ``j <= i``) this is the paper's bias :math:`m_h (j - i)`; for
    non-causal use it penalises distance symmetrically.

    Args:
        num_heads: number of heads ``h`` (>= 1).
        q_len: number of queries ``Lq`` (>= 1).
        k_len: number of keys ``Lk`` (>= 1); defaults to ``q_len``.
        query_offset: position of the first query, as in :func:`relative_positions`
            (``Lk - Lq`` in cached decoding).

    Returns:
        ``(h, Lq, Lk)`` float32 tensor, to be added to the scaled scores.

    Raises:
        ValueError: if ``num_heads`` or a length is < 1.
    """
    distance = relative_positions(q_len, k_len, query_offset=query_offset).abs().float()
    return -alibi_slopes(num_heads)[:, None, None] * distance
