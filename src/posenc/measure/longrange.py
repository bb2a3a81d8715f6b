"""Measurements behind chapter 7's claims (RoPE at long range) that are not what it teaches.

Shape legend:
    - ``N``: number of samples (query-key pairs)
    - ``d``: dimension of a query or key; always even
    - ``P``: number of positions (queries) at which a measurement is taken
    - ``W``: number of keys per query (a window of offsets)

The chapter derives the all-ones score, the Abel bound and the errors of low-precision angles;
the helpers here repeat a measurement over many offsets, bases or formats and summarise it:

- :func:`monte_carlo_z`: how far a Monte Carlo mean of ``q^T R_δ k`` is from a prediction,
  in standard errors;
- :func:`decay_sweep`: a score curve over a grid of bases and dimensions, summarised;
- :func:`octave_summary`: mean and maximum of a curve over the octaves ``[2^e, 2^(e+1))``;
- :func:`float_formats`: what a floating-point format can represent (integers, spacing);
- :func:`scores_nearby`: the scores of a query against the keys just behind it;
- :func:`low_precision_errors`: ``apply_rope`` and a naive rotation in 16 bits, against float64;
- :func:`low_precision_score_errors`: the score errors of 16-bit angles, inputs and rotations;
- :func:`first_position_staying_above`: where one error curve overtakes another for good;
- :func:`cohere2_layer_probe`: which layers of a tiny Command A model see position;
- :func:`scores_with_tables`: scores rotated with a module's own cos/sin tables;
- :func:`low_precision_table`: :func:`low_precision_errors` for several formats, as table rows;
- :func:`random_phase_level`: the level of ``U(δ)`` for random angles;
- :func:`hf_inv_freq_dtypes`: the dtype of ``transformers``' ``inv_freq`` after loading or converting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from .._validation import check_even, check_int, check_tensor
from ..plotting.longrange import WindowSummary, log_windows
from ..rotary import apply_rope, complex_pairs

__all__ = [
    "decay_sweep",
    "float_formats",
    "low_precision_errors",
    "monte_carlo_z",
    "octave_summary",
    "scores_nearby",
]


def monte_carlo_z(
    queries: torch.Tensor,
    keys: torch.Tensor,
    offsets: Sequence[int] | torch.Tensor,
    expected: Sequence[float] | torch.Tensor,
    base: float = 10000.0,
) -> float:
    """The largest distance, in standard errors, between Monte Carlo means and predicted ones.

    For each offset ``δ`` the samples ``q_s^T R_δ k_s`` (``R_δ`` applied by
    :func:`posenc.rotary.apply_rope`) are averaged; the distance of the mean to ``expected[δ]``
    is divided by the standard error of that mean (sample standard deviation over ``sqrt(N)``).

    Args:
        queries: the sampled queries, shape ``(N, d)``.
        keys: the sampled keys, shape ``(N, d)``, row ``s`` drawn with query ``s``.
        offsets: the offsets ``δ``, length ``K``.
        expected: the predicted mean of ``q^T R_δ k`` at each offset, length ``K``.
        base: the RoPE base ``b``.

    Returns:
        ``max_δ |mean_δ - expected_δ| / standard_error_δ``: about 3 or less if the prediction
        is right and ``N`` is large.

    Raises:
        TypeError: if ``queries`` or ``keys`` is not a tensor.
        ValueError: if the shapes differ or are not ``(N, d)`` with ``N >= 2`` and ``d`` even, or
            ``offsets`` and ``expected`` differ in length or are empty.
    """
    check_tensor("queries", queries, min_dim=2)
    check_tensor("keys", keys, min_dim=2)
    if queries.dim() != 2 or queries.shape != keys.shape:
        raise ValueError(
            f"queries and keys must have the same shape (N, d), got {tuple(queries.shape)} and "
            f"{tuple(keys.shape)}"
        )
    check_int("the number of samples N", queries.shape[0], minimum=2)
    check_even("the dimension d", queries.shape[1])
    offsets = torch.as_tensor(offsets).tolist()
    expected = torch.as_tensor(expected, dtype=torch.float64).tolist()
    if not offsets or len(offsets) != len(expected):
        raise ValueError(
            f"offsets and expected must be non-empty and of one length, got {len(offsets)} and {len(expected)}"
        )
    worst = 0.0
    for delta, predicted in zip(offsets, expected, strict=True):
        # q^T R_delta k with the rotation applied by apply_rope.
        rotated_keys = apply_rope(keys, torch.full((len(keys),), int(delta)), base=base)
        per_sample = (queries * rotated_keys).sum(-1)
        error = per_sample.std().item() / math.sqrt(len(per_sample))
        worst = max(worst, abs(per_sample.mean().item() - predicted) / error)
    return worst


def decay_sweep(
    score: Callable[[torch.Tensor, int, float], torch.Tensor],
    bases: Sequence[float],
    dims: Sequence[int],
    offsets: torch.Tensor,
    *,
    far: int = 16384,
    per_decade: int = 20,
) -> tuple[dict[tuple[float, int], WindowSummary], dict[tuple[float, int], int], dict[tuple[float, int], float]]:
    """A score curve ``score(offsets, d, b) / d`` for every base and dimension, summarised three ways.

    Args:
        score: the score at each offset for a dimension and a base, e.g. the all-ones score.
        bases: the bases ``b``.
        dims: the dimensions ``d``.
        offsets: positive, increasing offsets, shape ``(K,)``.
        far: the offset from which the ripple is measured.
        per_decade: windows per factor of 10 of the offsets (:func:`posenc.plotting.longrange.log_windows`).

    Returns:
        Three dictionaries keyed by ``(b, d)``: the window summary of ``score / d`` (for a
        figure); the first offset at which ``score / d`` falls below one half (the curve must
        fall below it); the largest ``|score| / d`` at offsets ``>= far`` (the long-range ripple).

    Raises:
        ValueError: if ``bases`` or ``dims`` is empty, no offset reaches ``far``, or a curve
            never falls below one half.
    """
    if not bases or not dims:
        raise ValueError(f"bases and dims must not be empty, got {list(bases)} and {list(dims)}")
    check_tensor("offsets", offsets, min_dim=1)
    beyond = offsets >= far
    if not bool(beyond.any()):
        raise ValueError(f"no offset reaches far = {far}; the largest is {int(offsets.max())}")
    summaries, half_crossings, tail_ripple = {}, {}, {}
    for base in bases:
        for dim in dims:
            relative = score(offsets, dim, base) / dim
            below = offsets[relative < 0.5]
            if not len(below):
                raise ValueError(f"score / d never falls below 1/2 for b = {base}, d = {dim}")
            summaries[base, dim] = log_windows(offsets, relative, per_decade=per_decade)
            half_crossings[base, dim] = int(below[0])
            tail_ripple[base, dim] = relative[beyond].abs().max().item()
    return summaries, half_crossings, tail_ripple


def octave_summary(curve: torch.Tensor, num_octaves: int) -> torch.Tensor:
    """The mean and the maximum of ``curve`` over each octave ``[2^e, 2^(e+1))`` of its index.

    Args:
        curve: values at offsets ``0, 1, 2, ...``, shape ``(K,)`` with ``K >= 2^num_octaves``.
        num_octaves: the number of octaves ``e = 0, ..., num_octaves - 1``.

    Returns:
        Shape ``(2, num_octaves)``: row 0 the means, row 1 the maxima.

    Raises:
        TypeError: if ``curve`` is not a tensor.
        ValueError: if ``curve`` is not one-dimensional or too short, or ``num_octaves < 1``.
    """
    check_tensor("curve", curve, min_dim=1)
    num_octaves = check_int("num_octaves", num_octaves, minimum=1)
    if curve.dim() != 1 or len(curve) < 2**num_octaves:
        raise ValueError(
            f"curve must be one-dimensional with at least 2^{num_octaves} values, got shape {tuple(curve.shape)}"
        )
    octaves = [curve[2**e : 2 ** (e + 1)] for e in range(num_octaves)]
    return torch.tensor([[o.mean(), o.max()] for o in octaves]).T


def float_formats(
    dtypes: Sequence[torch.dtype], near: float = 50000.0
) -> tuple[list[tuple[str, int, int, str, str]], list[list[bool]]]:
    """What each floating-point format represents: a table row, and the first integer it loses.

    A format with ``p`` stored mantissa bits represents every integer up to ``2^(p+1)``;
    ``2^(p+1) + 1`` is the first it cannot.

    Args:
        dtypes: floating-point formats, e.g. ``[torch.float16, torch.bfloat16, torch.float32]``.
        near: the value near which the spacing of neighbouring values is measured.

    Returns:
        One row per format, ``(name, mantissa bits p, first integer lost 2^(p+1) + 1, spacing
        near ``near`` as text, largest finite value as text)``, and for each format whether
        ``2^(p+1) - 1``, ``2^(p+1)`` and ``2^(p+1) + 1`` are lost (changed by a round trip).

    Raises:
        ValueError: if ``dtypes`` is empty or holds a format that is not floating point.
    """
    if not dtypes or not all(isinstance(t, torch.dtype) and t.is_floating_point for t in dtypes):
        raise ValueError(f"dtypes must be a non-empty list of floating-point dtypes, got {list(dtypes)}")
    rows, lost = [], []
    for dtype in dtypes:
        bits = round(-math.log2(torch.finfo(dtype).eps))
        first_lost = 2 ** (bits + 1) + 1  # the integers below it all survive
        around = torch.arange(first_lost - 2, first_lost + 1, dtype=torch.float64)
        lost.append(around.to(dtype).double().ne(around).tolist())
        at = torch.tensor([near], dtype=dtype)
        spacing = (torch.nextafter(at, at * 2) - at).item()
        rows.append((str(dtype).removeprefix("torch."), bits, first_lost, f"{spacing:g}",
                     f"{torch.finfo(dtype).max:.6g}"))
    return rows, lost


def scores_nearby(
    query: torch.Tensor,
    key: torch.Tensor,
    positions: torch.Tensor,
    rotate: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    window: int = 256,
) -> torch.Tensor:
    """Scaled scores of a query at each position ``m`` against keys at ``m - t``, ``t < window``.

    Args:
        query: one query, shape ``(d,)``.
        key: one key, shape ``(d,)`` (the same key at every offset).
        positions: the query positions ``m``, shape ``(P,)``.
        rotate: ``rotate(x, positions)`` applies a rotary embedding to rows ``x`` of shape
            ``(n, d)`` at ``positions`` of shape ``(n,)``.
        window: the number of keys ``W`` behind (and including) each query.

    Returns:
        ``q_m^T k_(m - t) / sqrt(d)`` in float64, shape ``(P, W)``, row ``m``, column ``t``.

    Raises:
        TypeError: if ``query``, ``key`` or ``positions`` is not a tensor.
        ValueError: if ``query`` and ``key`` are not vectors of one even length, ``positions``
            is not one-dimensional, or ``window < 1``.
    """
    for name, value in [("query", query), ("key", key), ("positions", positions)]:
        check_tensor(name, value, min_dim=1)
    if query.dim() != 1 or query.shape != key.shape or positions.dim() != 1:
        raise ValueError(
            f"query and key must be vectors (d,) of one length and positions (P,), got {tuple(query.shape)}, "
            f"{tuple(key.shape)} and {tuple(positions.shape)}"
        )
    check_even("the dimension d", query.shape[0])
    window = check_int("window", window, minimum=1)
    key_positions = (positions[:, None] - torch.arange(window)).flatten()
    rotated_q = rotate(query.expand(len(positions), -1), positions)
    rotated_k = rotate(key.expand(len(key_positions), -1), key_positions)
    products = rotated_q[:, None].double() * rotated_k.view(len(positions), window, -1).double()
    return products.sum(-1) / math.sqrt(query.shape[-1])


def low_precision_errors(
    x: torch.Tensor,
    positions: torch.Tensor,
    dtype: torch.dtype,
    naive: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> Mapping[str, Any]:
    """``apply_rope`` and a naive rotation on ``x`` rounded to ``dtype``, against float64.

    Both rotate the same rounded inputs; the reference rotates them in float64. Rounding to
    nearest moves a value ``v`` by at most ``eps/2 · |v|``: the half-ulp bound of each entry.

    Args:
        x: rows to rotate, shape ``(P, d)``, one row per position.
        positions: one position per row, shape ``(P,)``.
        dtype: the low-precision format, e.g. ``torch.bfloat16``.
        naive: ``naive(x, positions)``, a rotation to compare (e.g. with angles formed in ``dtype``).

    Returns:
        A mapping with ``"dtype"`` (of ``apply_rope``'s output, as text), ``"over_half_ulp"``
        (the largest excess of ``apply_rope``'s error over the half-ulp bound, a float: at most 0
        when it stays within the final rounding), and per row (lists of length ``P``):
        ``"error"`` (``apply_rope``'s largest error), ``"half_ulp"`` (the largest half-ulp bound)
        and ``"naive"`` (the naive rotation's largest error).

    Raises:
        TypeError: if ``x`` or ``positions`` is not a tensor.
        ValueError: if ``x`` is not ``(P, d)`` with one position per row, or ``dtype`` is not a
            floating-point format.
    """
    check_tensor("x", x, min_dim=2)
    check_tensor("positions", positions, min_dim=1)
    if x.dim() != 2 or positions.shape != x.shape[:1]:
        raise ValueError(
            f"x must be (P, d) with positions (P,), got {tuple(x.shape)} and {tuple(positions.shape)}"
        )
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"dtype must be a floating-point dtype, got {dtype!r}")
    x_low = x.to(dtype)
    exact = apply_rope(x_low.double(), positions)
    ours = apply_rope(x_low, positions)
    half_ulp = torch.finfo(dtype).eps / 2 * exact.abs()
    error = (ours.double() - exact).abs()
    naive_error = (naive(x_low, positions) - exact).abs().amax(-1)
    return {
        "dtype": str(ours.dtype),
        "over_half_ulp": (error - half_ulp).max().item(),
        "error": error.amax(-1).tolist(),
        "half_ulp": half_ulp.amax(-1).tolist(),
        "naive": naive_error.tolist(),
    }


Rope = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def low_precision_score_errors(
    query: torch.Tensor,
    key: torch.Tensor,
    positions: torch.Tensor,
    angles_in: Callable[[torch.dtype], Rope],
    bf16_rotate: Rope,
    formats: Sequence[torch.dtype],
    window: int = 256,
) -> dict[str, Any]:
    """Score errors of three kinds of low precision, each against an exact reference.

    Every score is that of the query at ``m`` against the key at ``m - t``, ``t < window``
    (:func:`scores_nearby`), in float64.

    Args:
        query: one query, shape ``(d,)``, float64.
        key: one key, shape ``(d,)``, float64.
        positions: the query positions ``m``, shape ``(P,)``.
        angles_in: ``angles_in(dtype)`` is a rotation ``rotate(x, positions)`` whose angles
            ``m·θ_ℓ`` are formed in ``dtype`` (everything else exact); ``angles_in(torch.float64)``
            is the exact rotation.
        bf16_rotate: a rotation in the half layout that computes in bfloat16 (e.g. Hugging
            Face's Llama code on bfloat16 rows).
        formats: the formats of the angles to measure, e.g. ``[torch.float16, torch.bfloat16,
            torch.float32]``.
        window: the number of keys ``W`` behind (and including) each query.

    Returns:
        A mapping with ``"exact"``, the exact scores, shape ``(P, W)``; ``"angles"``, per format,
        the largest ``|error|`` at each position with the angles formed in that format, shape
        ``(P,)``; ``"rounding"``, for float16 and bfloat16, the largest ``|error|`` at each
        position when query and key are rounded to the format and rotated exactly, shape
        ``(P,)``; and ``"bf16_rotation"``, the signed error of ``bf16_rotate`` on query and key
        rounded to bfloat16 against the exact half-layout rotation of the same rounded inputs,
        shape ``(P, W)``.

    Raises:
        TypeError: if ``query``, ``key`` or ``positions`` is not a tensor.
        ValueError: if ``formats`` is empty, or as :func:`scores_nearby`.
    """
    if not formats:
        raise ValueError("formats must name at least one floating-point format")

    def nearby(q: torch.Tensor, k: torch.Tensor, rotate: Rope) -> torch.Tensor:
        return scores_nearby(q, k, positions, rotate, window)

    exact = nearby(query, key, angles_in(torch.float64))
    angles = {dtype: (nearby(query, key, angles_in(dtype)) - exact).abs().amax(-1) for dtype in formats}
    rounding = {
        dtype: (nearby(query.to(dtype).double(), key.to(dtype).double(), angles_in(torch.float64)) - exact)
        .abs()
        .amax(-1)
        for dtype in (torch.float16, torch.bfloat16)
    }
    query_16, key_16 = query.bfloat16(), key.bfloat16()
    exact_16 = nearby(query_16.double(), key_16.double(), lambda x, m: apply_rope(x, m, layout="half"))
    return {
        "exact": exact,
        "angles": angles,
        "rounding": rounding,
        "bf16_rotation": nearby(query_16, key_16, bf16_rotate) - exact_16,
    }


def first_position_staying_above(positions: torch.Tensor, curve: torch.Tensor, level: torch.Tensor) -> float:
    """The first position from which ``curve`` stays above ``level`` at every later position.

    Args:
        positions: increasing positions, shape ``(P,)``.
        curve: a value at each position, shape ``(P,)``.
        level: the level at each position, shape ``(P,)`` (or a scalar).

    Returns:
        The smallest ``positions[i]`` with ``curve[j] > level[j]`` for every ``j >= i``, as a
        float; ``math.inf`` if the last value is not above the level.

    Raises:
        TypeError: if ``positions`` or ``curve`` is not a tensor.
        ValueError: if ``positions`` and ``curve`` are not one-dimensional of one length.
    """
    check_tensor("positions", positions, min_dim=1)
    check_tensor("curve", curve, min_dim=1)
    if positions.dim() != 1 or curve.shape != positions.shape:
        raise ValueError(
            f"positions and curve must be (P,) of one length, got {tuple(positions.shape)} and {tuple(curve.shape)}"
        )
    above = torch.as_tensor(curve > level).int()
    stays_above = above.flip(0).cumprod(0).flip(0).bool()  # above from here on
    return positions[stays_above].min().item() if bool(stays_above.any()) else math.inf


def cohere2_layer_probe(num_layers: int = 4, seq_len: int = 5, tolerance: float = 1e-3) -> tuple[list[str], list[bool]]:
    """Which layers of a tiny random Command A (``transformers``' Cohere2) model see position.

    Each layer's attention runs on one random input twice, with the positions ``0, 1, 2, ...``
    and ``0, 3, 6, ...``: a layer that rotates by position changes its output, a NoPE layer
    does not. Uses the global random generator (input and weights).

    Args:
        num_layers: the number of layers of the tiny model (hidden size 16, 2 heads).
        seq_len: the number of tokens.
        tolerance: the largest output change still counted as "unchanged".

    Returns:
        The configuration's ``layer_types`` (``"sliding_attention"`` or ``"full_attention"``)
        and, per layer, whether spreading the positions changed its output.

    Raises:
        TypeError: if ``num_layers`` or ``seq_len`` is not an integer.
        ValueError: if ``num_layers`` or ``seq_len`` is below 1.
    """
    from transformers import Cohere2Config
    from transformers.models.cohere2 import modeling_cohere2 as cohere2

    num_layers = check_int("num_layers", num_layers, minimum=1)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    config = Cohere2Config(hidden_size=16, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=num_layers)
    config._attn_implementation = "eager"
    x, rotary = torch.randn(1, seq_len, 16), cohere2.Cohere2RotaryEmbedding(config)
    moved = []
    for layer in range(num_layers):
        attention = cohere2.Cohere2Attention(config, layer)
        out = [attention(x, rotary(x, step * torch.arange(seq_len)[None]), None)[0] for step in (1, 3)]
        moved.append(bool((out[0] - out[1]).abs().max() > tolerance))
    return list(config.layer_types or []), moved


def scores_with_tables(
    rotary: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    query: torch.Tensor,
    keys: torch.Tensor,
    key_positions: torch.Tensor,
    query_at: torch.Tensor,
) -> torch.Tensor:
    """Scores of one query against keys, both rotated (interleaved pairs) with a module's cos/sin tables.

    Args:
        rotary: ``rotary(positions)`` returns ``(cos, sin)``, each ``(n, d/2)``, as the tables of
            the angles ``m·θ_ℓ`` (e.g. a ``Rotary`` module with a possibly rounded ``inv_freq``).
        query: the query, shape ``(1, d)``.
        keys: the keys, shape ``(K, d)``.
        key_positions: the keys' positions, shape ``(K,)``.
        query_at: the query's position, shape ``(1,)``.

    Returns:
        ``(R_(n_j) k_j)^T (R_m q)`` in float64 for each key, shape ``(K,)``.

    Raises:
        TypeError: if ``rotary`` is not callable or a tensor argument is not a tensor.
        ValueError: if the shapes do not match.
    """
    if not callable(rotary):
        raise TypeError(f"rotary must be callable, got {type(rotary).__name__}")
    for name, value in [("query", query), ("keys", keys), ("key_positions", key_positions), ("query_at", query_at)]:
        check_tensor(name, value, min_dim=1)
    if query.dim() != 2 or query.shape[0] != 1 or keys.dim() != 2 or keys.shape[1] != query.shape[1]:
        raise ValueError(f"query must be (1, d) and keys (K, d), got {tuple(query.shape)} and {tuple(keys.shape)}")
    if key_positions.shape != keys.shape[:1] or query_at.shape != (1,):
        raise ValueError(
            f"key_positions must be (K,) and query_at (1,), got {tuple(key_positions.shape)} and "
            f"{tuple(query_at.shape)}"
        )
    check_even("the dimension d", query.shape[1])

    def rotate(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        cos, sin = rotary(positions)
        phase = torch.complex(cos.double(), sin.double())
        return torch.view_as_real(complex_pairs(x.double()) * phase).flatten(-2)

    return (rotate(keys, key_positions) @ rotate(query, query_at).T)[:, 0]


__all__ += [
    "cohere2_layer_probe",
    "first_position_staying_above",
    "low_precision_score_errors",
    "scores_with_tables",
]


def low_precision_table(
    x: torch.Tensor,
    positions: torch.Tensor,
    dtypes: Sequence[torch.dtype],
    naive_for: Callable[[torch.dtype], Rope],
) -> dict[str, list[Any]]:
    """:func:`low_precision_errors` for several formats, flattened into lists and table rows.

    Args:
        x: rows to rotate, shape ``(P, d)``, one row per position.
        positions: one position per row, shape ``(P,)``.
        dtypes: the low-precision formats, e.g. ``[torch.float16, torch.bfloat16]``.
        naive_for: ``naive_for(dtype)`` is the naive rotation to compare in that format.

    Returns:
        A mapping with, in the order of ``dtypes``: ``"dtypes"`` (``apply_rope``'s output dtype
        for each, as text), ``"over_half_ulp"`` (for each, the largest excess of ``apply_rope``'s
        error over the half-ulp bound), ``"naive_over_half_ulp"`` (for every format and row, the
        naive error over the half-ulp bound), ``"rows"`` (``(format, position, apply_rope
        error, half-ulp bound, naive error)`` for every format and row) and ``"columns"`` (the
        names of the rows' five entries).

    Raises:
        ValueError: if ``dtypes`` is empty, or as :func:`low_precision_errors`.
    """
    if not dtypes:
        raise ValueError("dtypes must name at least one floating-point format")
    columns = ["dtype", "position", "apply_rope error", "half-ulp bound", "naive error"]
    table: dict[str, list[Any]] = {"dtypes": [], "over_half_ulp": [], "naive_over_half_ulp": [], "rows": [],
                                   "columns": columns}
    for dtype in dtypes:
        errors = low_precision_errors(x, positions, dtype, naive_for(dtype))
        table["dtypes"].append(errors["dtype"])
        table["over_half_ulp"].append(errors["over_half_ulp"])
        table["naive_over_half_ulp"] += [n / h for n, h in zip(errors["naive"], errors["half_ulp"], strict=True)]
        table["rows"] += zip([str(dtype)] * len(positions), positions.tolist(), errors["error"], errors["half_ulp"],
                             errors["naive"], strict=True)
    return table


def random_phase_level(num_pairs: int, samples: int = 4000) -> float:
    """The mean of ``|σ_ℓ|`` over ``ℓ = 1..num_pairs`` when every angle is uniformly random.

    ``σ_ℓ`` is the partial sum of ``ℓ`` unit numbers with independent uniform phases: a random
    walk, ``E|σ_ℓ| ≈ sqrt(π ℓ) / 2``. The level that ``U(δ)`` reaches when the angles ``δθ_ℓ``
    look random. Uses the global random generator.

    Args:
        num_pairs: the number of pairs ``d/2``.
        samples: the number of random draws of the ``num_pairs`` angles.

    Returns:
        The Monte Carlo mean of ``|σ_ℓ|`` over draws and ``ℓ``.

    Raises:
        TypeError: if ``num_pairs`` or ``samples`` is not an integer.
        ValueError: if either is below 1.
    """
    num_pairs = check_int("num_pairs", num_pairs, minimum=1)
    samples = check_int("samples", samples, minimum=1)
    angles = 2 * math.pi * torch.rand(samples, num_pairs, dtype=torch.float64)
    return torch.polar(torch.ones_like(angles), angles).cumsum(-1).abs().mean().item()


def hf_inv_freq_dtypes(config: Any, dtype: torch.dtype = torch.bfloat16) -> list[str]:
    """The dtype of a ``transformers`` Llama model's ``inv_freq`` along three paths to ``dtype``.

    The three paths: a tiny random checkpoint saved and loaded with
    ``LlamaForCausalLM.from_pretrained(folder, dtype=dtype)``; a model built with
    ``LlamaForCausalLM._from_config(config, dtype=dtype)``; and that model converted in place with
    ``.to(dtype)``. Nothing is downloaded (a temporary folder; loading's progress bar is off).

    Args:
        config: a small ``LlamaConfig`` (its weights are random).
        dtype: the low-precision format.

    Returns:
        ``[loaded, built, converted]``, each ``str`` of a dtype, e.g. ``"torch.float32"``.

    Raises:
        TypeError: if ``config`` is not a ``LlamaConfig``.
    """
    import tempfile

    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.utils import logging as hf_logging

    if not isinstance(config, LlamaConfig):
        raise TypeError(f"config must be a LlamaConfig, got {type(config).__name__}")
    bar_was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a progress bar on stderr fails the book's build
    try:
        with tempfile.TemporaryDirectory() as folder:
            LlamaForCausalLM(config).save_pretrained(folder)
            loaded = LlamaForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True)
    finally:
        if bar_was_on:
            hf_logging.enable_progress_bar()
    built = LlamaForCausalLM._from_config(config, dtype=dtype)
    dtypes = [str(loaded.model.rotary_emb.inv_freq.dtype), str(built.model.rotary_emb.inv_freq.dtype)]
    built.to(dtype)  # in place: the buffer is converted too
    return dtypes + [str(built.model.rotary_emb.inv_freq.dtype)]


__all__ += ["hf_inv_freq_dtypes", "low_precision_table", "random_phase_level"]
