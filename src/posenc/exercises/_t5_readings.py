"""A reading of a T5 bucketing answer that no mistake model of ``check_t5_bucket`` matches: the log's normaliser.

T5's logarithmic bucket is ``max_exact + floor(log(distance / max_exact) / L * (n - max_exact))``, capped at
``n - 1``, with the normaliser ``L = log(max_distance / max_exact)``. Each returned bucket confines ``L`` to an
interval; when the buckets of the keys before the query (the lower half, or the causal past) are all consistent with
one ``L`` and T5's is not among them, the answer is T5's formula with another normaliser, whatever expression
produced it. The message gives the interval, names the usual expressions that fall in it (all of them, so that
it offers every reading the inputs cannot separate) and says where the last bucket is reached.
"""

from __future__ import annotations

import math

import torch

from .checking import _num

__all__: list[str] = []


def _normaliser_bounds(distance: torch.Tensor, bucket: torch.Tensor, max_exact: int, per_direction: int
                       ) -> tuple[float, float] | None:
    """The interval (low, high] of normalisers L that give these buckets, or None if no single L does."""
    low, high = 0.0, math.inf
    span = per_direction - max_exact
    for d, b in zip(distance.tolist(), bucket.tolist(), strict=True):
        reach = math.log(d / max_exact) * span  # the bucket's logarithmic part is floor(reach / L)
        if b < max_exact or b > per_direction - 1 or (reach == 0 and b != max_exact):
            return None
        if b == per_direction - 1:  # capped: only reach / L >= n - 1 - max_exact is known
            high = min(high, reach / (b - max_exact)) if b > max_exact else high
        elif reach > 0:
            low = max(low, reach / (b - max_exact + 1))
            high = min(high, reach / (b - max_exact)) if b > max_exact else high
    return (low, high) if low < high * (1 + 1e-6) else None


def _t5_normaliser_reading(got: torch.Tensor, relative_position: torch.Tensor, bidirectional: bool, num_buckets: int,
                           max_distance: int) -> str | None:
    """Name a logarithmic range normalised by another quantity than log(max_distance / max_exact), or None."""
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    before = relative_position <= 0  # the lower half, or the causal past: there the bucket is the distance's
    distance, bucket = -relative_position[before], got[before]
    exact = distance < max_exact
    far = ~exact
    if not bool((bucket[exact] == distance[exact]).all()) or not bool(far.any()):
        return None
    bounds = _normaliser_bounds(distance[far], bucket[far], max_exact, per_direction)
    right = math.log(max_distance / max_exact)
    if bounds is None:
        return None
    low, high = bounds
    slack = 1e-6 * max(right, 1.0)  # float32 logarithms move a bucket boundary by a rounding
    if low - slack < right <= high + slack:
        return None
    candidates = [
        ("log(max_distance)", math.log(max_distance)),
        ("log(max_exact)", math.log(max_exact)),
        ("log(num_buckets)", math.log(num_buckets)),
        ("log(max_distance - max_exact)", math.log(max_distance - max_exact) if max_distance > max_exact else -1.0),
        ("log(max_distance / max_exact) without the log, max_distance / max_exact", max_distance / max_exact),
        ("log2(max_distance / max_exact)", math.log2(max_distance / max_exact)),
        ("log10(max_distance / max_exact)", math.log10(max_distance / max_exact)),
        ("log(2 · max_distance / max_exact)", math.log(2 * max_distance / max_exact)),
    ]
    fitting = [f"{name} = {_num(value)}" for name, value in candidates if low - slack < value <= high + slack]
    shown = f"between {_num(low)} and {_num(high)}" if math.isfinite(high) else f"above {_num(low)}"
    def reach(normaliser: float) -> str:  # the distance where the last bucket n - 1 begins
        return _num(max_exact * math.exp(normaliser * (per_direction - 1 - max_exact) / (per_direction - max_exact)))

    where = (f"only at distance {reach(low)} or beyond" if low > right else
             f"by distance {reach(high)} already" if math.isfinite(high) else "elsewhere")
    text = (
        f"your logarithmic buckets are T5's max_exact + floor(log(distance / max_exact) / L * (n - max_exact)) with "
        f"another normaliser L (or another factor than n - max_exact: only their ratio shows): every bucket of the "
        f"keys before the query fits an L {shown}, while T5 normalises by "
        f"L = log(max_distance / max_exact) = log({max_distance} / {max_exact}) = {_num(right)}, so that the last "
        f"bucket n - 1 = {per_direction - 1} begins at distance {reach(right)}; yours begins {where}"
    )
    if fitting:
        several = len(fitting) > 1
        apart = " (the inputs cannot tell them apart)" if several else ""
        text += (f". Of the usual expressions, {'only ' if not several else ''}{' and '.join(fitting)} fit"
                 f"{'' if several else 's'} these buckets{apart}: if {'one of them' if several else 'it'} is your "
                 "denominator, use log(max_distance / max_exact)")
    return text
