"""Measurements behind chapter 6's claims (RoPE implementations) that are not what it teaches.

Shape legend:
    - ``L``: sequence length
    - ``d``: dimension of a query or key; always even
    - ``S``: side of a square grid of 2-D positions (odd, the query at its centre)
    - ``d/2``: number of rotation pairs

The chapter writes the implementations; the helpers here check them or read another library:

- :func:`rope_property_gaps`: how far a function is from being RoPE (norms, relativity, layout,
  position 0);
- :func:`score_map`: the scores of a query at the centre of a grid against a key at every cell,
  for a 2-D rotary embedding;
- :func:`mixed_difference`: whether a score map is a sum of a row term and a column term;
- :func:`axis_of_each_pair` and :func:`mrope_reading_gaps`: which of M-RoPE's axes (time,
  height, width) turns each pair, read from a ``transformers`` rotary module;
- :func:`library_rotations`: RoPE by ``transformers``' Llama, GPT-J and GPT-NeoX code;
- :func:`grouped_query_attention` and :func:`run_llama_attention`: one attention layer as Meta's
  reference code lays it out, with a pluggable rotation, and ``transformers``' with given weights;
- :func:`decode_one_step`: prefill a cache of rotated keys and decode one token per row;
- :func:`random_attention_weights`: random projections of a grouped-query attention layer;
- :func:`partial_rotary_parts`: the rotated and the pass-through part of a partial-rotary score;
- :func:`mrope_rotaries` and :func:`tiny_qwen2_vl`: ``transformers``' M-RoPE modules and a tiny
  random Qwen2-VL model, built offline;
- :func:`timed_on_one_thread`: :func:`posenc.benchmark.rope_timings` on one thread;
- :func:`row_partners`: which coordinate each output of a pairwise rotation mixes in, with which sign.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from .._validation import check_int, check_tensor
from ..attention import scaled_dot_product_attention
from ..benchmark import Timing, rope_timings
from ..diagnostics import relativity_gap
from ..rotary import apply_rope
from ..utils import max_abs_diff

__all__ = ["axis_of_each_pair", "mixed_difference", "mrope_reading_gaps", "rope_property_gaps", "score_map"]

Rope = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
Rope2d = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def rope_property_gaps(rope: Rope, queries: torch.Tensor, keys: torch.Tensor, positions: torch.Tensor,
                       shift: int = 37) -> dict[str, float]:
    """The largest violation of four properties that every RoPE implementation has.

    Args:
        rope: ``rope(x, positions)``, a candidate rotary embedding of ``(L, d)`` rows.
        queries: ``(L, d)`` floating tensor.
        keys: ``(L, d)`` floating tensor.
        positions: ``(L,)`` positions of the rows.
        shift: the common shift of every position for the relativity check
            (:func:`posenc.diagnostics.relativity_gap`, at positions ``0 .. L-1``).

    Returns:
        Four gaps by name, each 0 up to rounding for a correct implementation;
        ``"max | |f(x)| - |x| |"`` (norms kept), ``"relativity gap (shift 37)"`` (scores depend
        only on offsets; the number is ``shift``), ``"vs apply_rope, closer layout"`` (equal to
        :func:`posenc.rotary.apply_rope` in the interleaved or the half layout) and
        ``"position 0 vs identity"`` (the first row at its position unchanged; for positions
        starting at 0, the identity).

    Raises:
        TypeError: if ``rope`` is not callable or a tensor argument is not a tensor.
        ValueError: if ``queries`` and ``keys`` are not ``(L, d)`` of one shape with ``L``
            positions.
    """
    if not callable(rope):
        raise TypeError(f"rope must be callable, got {type(rope).__name__}")
    for name, value in [("queries", queries), ("keys", keys), ("positions", positions)]:
        check_tensor(name, value, min_dim=1)
    if queries.dim() != 2 or queries.shape != keys.shape or positions.shape != queries.shape[:1]:
        raise ValueError(
            f"queries and keys must be (L, d) of one shape with positions (L,), got {tuple(queries.shape)}, "
            f"{tuple(keys.shape)} and {tuple(positions.shape)}"
        )
    rotated = rope(queries, positions)
    return {
        "max | |f(x)| - |x| |": max_abs_diff(rotated.norm(dim=-1), queries.norm(dim=-1)),
        f"relativity gap (shift {shift})": relativity_gap(rope, queries, keys, shifts=(shift,)),
        "vs apply_rope, closer layout": min(
            max_abs_diff(rotated, apply_rope(queries, positions, layout=layout)) for layout in ["interleaved", "half"]
        ),
        "position 0 vs identity": max_abs_diff(rope(queries[:1], positions[:1]), queries[:1]),
    }


def score_map(rotate: Rope2d, query: torch.Tensor, key: torch.Tensor, side: int,
              shift: tuple[int, int] = (0, 0)) -> torch.Tensor:
    """Scores of a query at the centre of a square grid against a key at every cell.

    The grid holds the 2-D positions ``(r, c)`` with ``r, c`` in ``-(S-1)/2 .. (S-1)/2``; the
    query sits at ``(0, 0)``. ``shift`` moves the query and every key by the same amount, so a
    relative embedding gives the same map.

    Args:
        rotate: ``rotate(x, rows, columns)``, a 2-D rotary embedding of ``(n, d)`` rows at
            positions ``(n,)`` and ``(n,)``.
        query: the query, shape ``(1, d)``.
        key: the key, shape ``(1, d)`` (the same at every cell).
        side: ``S``, odd.
        shift: the common shift ``(row, column)``.

    Returns:
        ``q_(0,0)^T k_(r,c)`` at every cell, shape ``(S, S)``, row offsets down, column offsets across.

    Raises:
        TypeError: if ``query`` or ``key`` is not a tensor, or ``side`` is not an integer.
        ValueError: if ``side`` is not odd and positive or ``query`` and ``key`` are not ``(1, d)``.
    """
    check_tensor("query", query, min_dim=2)
    check_tensor("key", key, min_dim=2)
    side = check_int("side", side, minimum=1)
    if side % 2 == 0:
        raise ValueError(f"side must be odd so that the query sits at the centre, got {side}")
    if query.shape != key.shape or query.dim() != 2 or query.shape[0] != 1:
        raise ValueError(f"query and key must be (1, d), got {tuple(query.shape)} and {tuple(key.shape)}")
    grid = torch.arange(side) - side // 2
    rows, columns = (axis.flatten() for axis in torch.meshgrid(grid, grid, indexing="ij"))
    origin = torch.zeros(1, dtype=torch.long)
    keys_at = rotate(key.expand(side**2, -1), rows + shift[0], columns + shift[1])
    query_at = rotate(query, origin + shift[0], origin + shift[1])[0]
    return (keys_at @ query_at).reshape(side, side)


def mixed_difference(scores: torch.Tensor) -> float:
    """The largest mixed difference ``s(r, c) - s(r, 0) - s(0, c) + s(0, 0)`` of a centred map.

    It is 0 exactly when the map is a row term plus a column term, ``s(r, c) = f(r) + g(c)``.

    Args:
        scores: an ``(S, S)`` map with the offset ``(0, 0)`` at its centre, ``S`` odd.

    Returns:
        The largest absolute mixed difference, as a Python float.

    Raises:
        TypeError: if ``scores`` is not a tensor.
        ValueError: if ``scores`` is not square with an odd side.
    """
    check_tensor("scores", scores, min_dim=2)
    if scores.dim() != 2 or scores.shape[0] != scores.shape[1] or scores.shape[0] % 2 == 0:
        raise ValueError(f"scores must be square with an odd side, got shape {tuple(scores.shape)}")
    c = scores.shape[0] // 2
    return (scores - scores[:, c : c + 1] - scores[c : c + 1, :] + scores[c, c]).abs().max().item()


def axis_of_each_pair(rotary: Any) -> torch.Tensor:
    """Which of M-RoPE's three axes turns each pair: move one of (t, h, w) by one position.

    Args:
        rotary: a ``transformers`` multimodal rotary module (``Qwen2VLRotaryEmbedding``,
            ``Qwen3VLTextRotaryEmbedding``): ``rotary(x, position_ids)`` with position ids of
            shape ``(3, batch, L)`` returns ``(cos, sin)`` of shape ``(batch, L, d)``, and
            ``rotary.inv_freq`` holds the ``d/2`` frequencies.

    Returns:
        For each pair, ``0`` (time), ``1`` (height) or ``2`` (width), shape ``(d/2,)``.

    Raises:
        ValueError: if a pair is turned by no axis or by more than one.
    """
    pairs = rotary.inv_freq.shape[0]
    moved = torch.stack([
        rotary(torch.zeros(1), unit.view(3, 1, 1))[1][0, 0, :pairs] != 0
        for unit in torch.eye(3, dtype=torch.long)])
    if not torch.equal(moved.sum(0), torch.ones(pairs, dtype=torch.long)):
        raise ValueError(f"each pair must be turned by exactly one axis; axes per pair: {moved.sum(0).tolist()}")
    return moved.int().argmax(0)


def mrope_reading_gaps(rotary: Any, owners: torch.Tensor, thw: torch.Tensor | int) -> tuple[float, float]:
    """Check a reading of M-RoPE against the library: ``cos(m_axis(ℓ) θ_ℓ)`` for every pair.

    Args:
        rotary: a ``transformers`` multimodal rotary module (see :func:`axis_of_each_pair`).
        owners: the axis of each pair, shape ``(d/2,)`` (from :func:`axis_of_each_pair`).
        thw: the positions ``(t, h, w)`` of ``L`` tokens, shape ``(3, 1, L)``; token 0 must be a
            text token, ``t = h = w``. Or a number ``L``: token 0 then sits at ``t = h = w = 42``
            and the others at random positions below 500 (drawn from the global generator).

    Returns:
        The largest gap between the library's cosines and the reading's over every token, and
        the largest gap between the library's cosines of the text token and 1-D RoPE's
        ``cos(m θ_ℓ)``.

    Raises:
        TypeError: if ``owners`` or ``thw`` is not a tensor.
        ValueError: if ``thw`` is not ``(3, 1, L)`` or its token 0 has unequal positions, or
            ``owners`` does not hold one axis per pair.
    """
    check_tensor("owners", owners, min_dim=1)
    if isinstance(thw, torch.Tensor):
        positions = thw
    else:
        positions = torch.randint(0, 500, (3, 1, check_int("the number of tokens", thw, minimum=1)))
        positions[:, :, 0] = 42  # a text token: t = h = w
    check_tensor("thw", positions, min_dim=3)
    if positions.dim() != 3 or positions.shape[:2] != (3, 1):
        raise ValueError(f"thw must have shape (3, 1, L), got {tuple(positions.shape)}")
    if not bool((positions[:, 0, 0] == positions[0, 0, 0]).all()):
        raise ValueError(f"token 0 must be a text token (t = h = w), got {positions[:, 0, 0].tolist()}")
    theta = rotary.inv_freq.double()
    if owners.shape != theta.shape:
        raise ValueError(f"owners must hold one axis per pair, shape {tuple(theta.shape)}, got {tuple(owners.shape)}")
    ours = (positions[owners, 0].T * theta).cos()
    theirs = rotary(torch.zeros(1), positions)[0][0, :, : len(theta)]
    return max_abs_diff(theirs, ours), max_abs_diff(theirs[0], (positions[0, 0, 0] * theta).cos())


def library_rotations(
    x: torch.Tensor, positions: torch.Tensor, rotary_dim: int
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """RoPE by three ``transformers`` code bases, each next to :func:`posenc.rotary.apply_rope` in its layout.

    Hugging Face's Llama (``rotate_half``, the half layout, every coordinate), GPT-J
    (``rotate_every_two``, interleaved, the first ``rotary_dim`` coordinates) and GPT-NeoX
    (``rotate_half`` on the first ``rotary_pct = rotary_dim / d`` of each head), all with base
    10 000 (GPT-J's is fixed). Nothing is downloaded: only the rotary code runs.

    Args:
        x: queries or keys, shape ``(batch, heads, L, d)``, ``d`` even.
        positions: the positions of the ``L`` rows, shape ``(L,)``, non-negative.
        rotary_dim: the rotated coordinates of GPT-J and GPT-NeoX, even, at most ``d``.

    Returns:
        By name, ``(library's output, apply_rope's output)``, each ``(batch, heads, L, d)``
        (a partial rotation passes the rest of the head through).

    Raises:
        TypeError: if ``x`` or ``positions`` is not a tensor, or ``rotary_dim`` is not an integer.
        ValueError: if ``x`` is not ``(batch, heads, L, d)`` with ``L`` positions, or
            ``rotary_dim`` is not even or exceeds ``d``.
    """
    from transformers import GPTNeoXConfig, LlamaConfig
    from transformers.models.gpt_neox import modeling_gpt_neox
    from transformers.models.gptj import modeling_gptj
    from transformers.models.llama import modeling_llama

    check_tensor("x", x, min_dim=4)
    check_tensor("positions", positions, min_dim=1)
    if x.dim() != 4 or positions.shape != x.shape[2:3]:
        raise ValueError(f"x must be (batch, heads, L, d) with positions (L,), got {tuple(x.shape)} and "
                         f"{tuple(positions.shape)}")
    heads, dim = x.shape[1], x.shape[3]
    rotary_dim = check_int("rotary_dim", rotary_dim, minimum=2)
    if rotary_dim % 2 or rotary_dim > dim:
        raise ValueError(f"rotary_dim must be even and at most d = {dim}, got {rotary_dim}")
    llama = modeling_llama.LlamaRotaryEmbedding(
        LlamaConfig(hidden_size=heads * dim, num_attention_heads=heads, head_dim=dim, rope_theta=10000.0))  # type: ignore[call-arg]
    llama_out = modeling_llama.apply_rotary_pos_emb(x, x, *llama(x, positions[None]))[0]
    by_position = x.transpose(1, 2)  # GPT-J's (batch, L, heads, d)
    table = modeling_gptj.create_sinusoidal_positions(int(positions.max()) + 1, rotary_dim)
    gptj_sin, gptj_cos = table[positions][None].chunk(2, dim=-1)
    gptj_out = modeling_gptj.apply_rotary_pos_emb(by_position[..., :rotary_dim], gptj_sin, gptj_cos)
    # rope_theta= and rotary_pct= are the legacy keywords, folded into rope_parameters
    neox_config = GPTNeoXConfig(hidden_size=heads * dim, num_attention_heads=heads, rotary_pct=rotary_dim / dim)  # type: ignore[call-arg]
    neox = modeling_gpt_neox.GPTNeoXRotaryEmbedding(neox_config)
    part = x[..., :rotary_dim]
    neox_out = modeling_gpt_neox.apply_rotary_pos_emb(part, part, *neox(x, positions[None]))[0]
    rest = x[..., rotary_dim:]
    return {
        "HF Llama vs half": (llama_out, apply_rope(x, positions, layout="half")),
        f"GPT-J rotary_dim={rotary_dim} vs interleaved, partial": (
            torch.cat((gptj_out.transpose(1, 2), rest), -1), apply_rope(x, positions, rotary_dim=rotary_dim)),
        f"GPT-NeoX rotary_pct={rotary_dim / dim:g} vs half, partial": (
            torch.cat((neox_out, rest), -1), apply_rope(x, positions, layout="half", rotary_dim=rotary_dim)),
    }


def grouped_query_attention(x: torch.Tensor, weights: Mapping[str, torch.Tensor],
                            rotate: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
                            num_heads: int, num_kv_heads: int) -> torch.Tensor:
    """Causal grouped-query attention laid out as Meta's Llama reference ``Attention.forward`` (no cache).

    Queries, keys and values are ``x @ W^T`` viewed as ``(batch, L, heads, d_h)``; ``rotate``
    turns queries and keys (e.g. Meta's ``apply_rotary_emb`` with its ``freqs_cis``); each
    key-value head serves ``num_heads / num_kv_heads`` consecutive query heads
    (``repeat_interleave``); scores are scaled by ``1/sqrt(d_h)`` and causally masked.

    Args:
        x: the input, shape ``(batch, L, d_model)``.
        weights: ``"wq"`` ``(num_heads·d_h, d_model)``, ``"wk"`` and ``"wv"``
            ``(num_kv_heads·d_h, d_model)``, ``"wo"`` ``(d_model, num_heads·d_h)``.
        rotate: ``rotate(xq, xk)`` returns the rotated ``(xq, xk)``, shapes unchanged.
        num_heads: the number of query heads.
        num_kv_heads: the number of key-value heads; it divides ``num_heads``.

    Returns:
        The output, shape ``(batch, L, d_model)``.

    Raises:
        TypeError: if ``x`` is not a tensor or a head count is not an integer.
        ValueError: if ``x`` is not three-dimensional, a weight is missing, or ``num_kv_heads``
            does not divide ``num_heads``.
    """
    check_tensor("x", x, min_dim=3)
    num_heads = check_int("num_heads", num_heads, minimum=1)
    num_kv_heads = check_int("num_kv_heads", num_kv_heads, minimum=1)
    if x.dim() != 3 or num_heads % num_kv_heads:
        raise ValueError(f"x must be (batch, L, d_model) and num_kv_heads must divide num_heads, got "
                         f"{tuple(x.shape)}, {num_heads} and {num_kv_heads}")
    if missing := {"wq", "wk", "wv", "wo"} - set(weights):
        raise ValueError(f"weights needs wq, wk, wv and wo; missing {sorted(missing)}")
    batch, seq_len, _ = x.shape
    head_dim = weights["wq"].shape[0] // num_heads
    xq, xk, xv = ((x @ weights[w].T).view(batch, seq_len, -1, head_dim) for w in ["wq", "wk", "wv"])
    xq, xk = rotate(xq, xk)
    group = num_heads // num_kv_heads
    q, k, v = (t.repeat_interleave(h, dim=2).transpose(1, 2) for t, h in [(xq, 1), (xk, group), (xv, group)])
    causal = torch.full((seq_len, seq_len), -math.inf).triu(1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim) + causal
    output = torch.softmax(scores, -1) @ v
    return output.transpose(1, 2).reshape(batch, seq_len, -1) @ weights["wo"].T


def run_llama_attention(layer: Any, rotary: Any, x: torch.Tensor, weights: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """``transformers``' ``LlamaAttention`` with the given weights, causal, at positions ``0 .. L-1``.

    Args:
        layer: a ``LlamaAttention`` module (its projections are overwritten in place).
        rotary: the matching ``LlamaRotaryEmbedding``.
        x: the input, shape ``(batch, L, d_model)``.
        weights: ``"wq"``, ``"wk"``, ``"wv"`` and ``"wo"``, copied into ``q_proj`` ... ``o_proj``
            (``nn.Linear`` weights, ``(out_features, in_features)``).

    Returns:
        The layer's output, shape ``(batch, L, d_model)``.

    Raises:
        TypeError: if ``x`` is not a tensor.
        ValueError: if ``x`` is not three-dimensional or a weight is missing.
    """
    check_tensor("x", x, min_dim=3)
    if x.dim() != 3:
        raise ValueError(f"x must be (batch, L, d_model), got {tuple(x.shape)}")
    if missing := {"wq", "wk", "wv", "wo"} - set(weights):
        raise ValueError(f"weights needs wq, wk, wv and wo; missing {sorted(missing)}")
    for name in "qkvo":
        getattr(layer, f"{name}_proj").weight.copy_(weights[f"w{name}"])
    seq_len = x.shape[1]
    causal = torch.full((seq_len, seq_len), -math.inf).triu(1)
    cos_sin = rotary(x, torch.arange(seq_len)[None])
    return layer(x, position_embeddings=cos_sin, attention_mask=causal[None, None])[0]


def decode_one_step(weights: tuple[torch.Tensor, torch.Tensor, torch.Tensor], tokens: torch.Tensor,
                    key_mask: torch.Tensor, prefill_positions: torch.Tensor, new_positions: torch.Tensor,
                    new: torch.Tensor) -> torch.Tensor:
    """Prefill a cache of rotated keys, then attend from one new token per row (one head).

    Args:
        weights: ``(W_q, W_k, W_v)``, each ``(d, d)``; a row vector ``x`` projects to ``x @ W``.
        tokens: the (padded) prompts, shape ``(batch, n, d)``.
        key_mask: which prompt slots are real tokens, bool, shape ``(batch, n)``.
        prefill_positions: the positions of the prompt slots, shape ``(batch, n)``.
        new_positions: the position of each row's new token, shape ``(batch,)``.
        new: the new tokens, shape ``(batch, 1, d)``.

    Returns:
        The attention output of each new token over the real prompt tokens and itself,
        shape ``(batch, 1, d)``.

    Raises:
        TypeError: if a tensor argument is not a tensor.
        ValueError: if the shapes do not match.
    """
    for name, value in [("tokens", tokens), ("key_mask", key_mask), ("prefill_positions", prefill_positions),
                        ("new_positions", new_positions), ("new", new)]:
        check_tensor(name, value, min_dim=1)
    batch, n = tokens.shape[:2]
    if (tokens.dim() != 3 or key_mask.shape != (batch, n) or prefill_positions.shape != (batch, n)
            or new_positions.shape != (batch,) or new.shape != (batch, 1, tokens.shape[2])):
        raise ValueError(
            f"expected tokens (batch, n, d), key_mask and prefill_positions (batch, n), new_positions (batch,) and "
            f"new (batch, 1, d); got {tuple(tokens.shape)}, {tuple(key_mask.shape)}, "
            f"{tuple(prefill_positions.shape)}, {tuple(new_positions.shape)} and {tuple(new.shape)}"
        )
    w_q, w_k, w_v = weights
    keys = apply_rope(tokens @ w_k, prefill_positions)
    new_key = apply_rope(new @ w_k, new_positions[:, None])
    keys = torch.cat((keys, new_key), dim=1)
    values = torch.cat((tokens @ w_v, new @ w_v), dim=1)
    query = apply_rope(new @ w_q, new_positions[:, None])
    key_mask = torch.cat((key_mask, torch.ones_like(key_mask[:, :1])), 1)
    return scaled_dot_product_attention(query, keys, values, mask=key_mask[:, None, :])[0]


__all__ += ["decode_one_step", "grouped_query_attention", "library_rotations", "mrope_rotaries",
            "partial_rotary_parts", "random_attention_weights", "row_partners", "run_llama_attention",
            "timed_on_one_thread", "tiny_qwen2_vl"]


def random_attention_weights(d_model: int, num_heads: int, num_kv_heads: int, head_dim: int) -> dict[str, torch.Tensor]:
    """Random projections of a grouped-query attention layer, scaled by ``1/sqrt(fan_in)``.

    Drawn from the global generator in the order ``wq``, ``wk``, ``wv``, ``wo``.

    Args:
        d_model: the model dimension.
        num_heads: the number of query heads.
        num_kv_heads: the number of key-value heads.
        head_dim: the dimension ``d_h`` of a head.

    Returns:
        ``"wq"`` ``(num_heads·d_h, d_model)``, ``"wk"`` and ``"wv"`` ``(num_kv_heads·d_h, d_model)``
        and ``"wo"`` ``(d_model, num_heads·d_h)``, as ``nn.Linear`` stores them.

    Raises:
        TypeError: if an argument is not an integer.
        ValueError: if an argument is below 1.
    """
    d_model, num_heads, num_kv_heads, head_dim = (
        check_int(name, value, minimum=1)
        for name, value in [("d_model", d_model), ("num_heads", num_heads), ("num_kv_heads", num_kv_heads),
                            ("head_dim", head_dim)]
    )
    weights = {name: torch.randn(rows, d_model) / math.sqrt(d_model)
               for name, rows in [("wq", num_heads * head_dim), ("wk", num_kv_heads * head_dim),
                                  ("wv", num_kv_heads * head_dim)]}
    weights["wo"] = torch.randn(d_model, num_heads * head_dim) / math.sqrt(num_heads * head_dim)
    return weights


def partial_rotary_parts(query: torch.Tensor, key: torch.Tensor, offsets: torch.Tensor, starts: list[int],
                         rotary_dim: int) -> dict[str, torch.Tensor]:
    """The two parts of a partial-rotary score, for a query at each start and keys at start + offset.

    Query and key are rotated with :func:`posenc.rotary.apply_rope` in the half layout on their
    first ``rotary_dim`` coordinates; the score's terms are summed over the rotated coordinates
    and over the passed-through ones separately.

    Args:
        query: the query, shape ``(d,)``.
        key: the key, shape ``(d,)``.
        offsets: the offsets ``j - i`` of the keys, shape ``(K,)``.
        starts: the query positions ``i``.
        rotary_dim: the rotated coordinates, even, at most ``d``.

    Returns:
        For each start, ``"rotated part, i = <start>"`` and ``"pass-through part, i = <start>"``,
        each of shape ``(K,)``, in this order.

    Raises:
        TypeError: if ``query``, ``key`` or ``offsets`` is not a tensor.
        ValueError: if ``query`` and ``key`` are not vectors of one length or ``starts`` is empty.
    """
    for name, value in [("query", query), ("key", key), ("offsets", offsets)]:
        check_tensor(name, value, min_dim=1)
    if query.dim() != 1 or query.shape != key.shape or offsets.dim() != 1 or not starts:
        raise ValueError(f"query and key must be vectors (d,) of one length, offsets (K,) and starts non-empty, got "
                         f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(offsets.shape)} and {starts}")
    count, parts = len(offsets), {}
    for start in starts:
        query_at = apply_rope(query.expand(count, -1), torch.full((count,), start), layout="half",
                              rotary_dim=rotary_dim)
        key_at = apply_rope(key.expand(count, -1), start + offsets, layout="half", rotary_dim=rotary_dim)
        products = query_at * key_at
        parts[f"rotated part, i = {start}"] = products[:, :rotary_dim].sum(-1)
        parts[f"pass-through part, i = {start}"] = products[:, rotary_dim:].sum(-1)
    return parts


def mrope_rotaries() -> dict[str, Any]:
    """The text rotary modules of Qwen2-VL and Qwen3-VL with ``transformers``' default configurations.

    Heads of 128 dimensions; no weights are involved. Qwen2-VL's sections are contiguous,
    Qwen3-VL interleaves the three axes.

    Returns:
        The two modules, ``Qwen2VLRotaryEmbedding`` and ``Qwen3VLTextRotaryEmbedding``, by model name
        (``"Qwen2-VL (sections)"``, ``"Qwen3-VL (interleaved)"``), each built from the default text
        configuration.
    """
    from transformers.models import qwen2_vl, qwen3_vl

    return {
        "Qwen2-VL (sections)": qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding(
            qwen2_vl.Qwen2VLTextConfig()),  # type: ignore[arg-type]  # the text config is what it reads
        "Qwen3-VL (interleaved)": qwen3_vl.modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding(qwen3_vl.Qwen3VLTextConfig()),
    }


def tiny_qwen2_vl() -> Any:
    """A tiny random ``Qwen2VLModel`` (one text layer of width 32, one vision block), for its position ids.

    Its ``get_rope_index`` assigns M-RoPE's ``(t, h, w)`` positions as the full model does; the
    weights are random (drawn from the global generator) and never matter for that.

    Returns:
        The ``transformers`` ``Qwen2VLModel``.
    """
    from transformers.models import qwen2_vl

    return qwen2_vl.modeling_qwen2_vl.Qwen2VLModel(qwen2_vl.Qwen2VLConfig(
        text_config=dict(hidden_size=32, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=2),
        vision_config=dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2)))


def timed_on_one_thread(shape: tuple[int, int, int, int], min_run_time: float = 0.2) -> list[Timing]:
    """:func:`posenc.benchmark.rope_timings` on one thread, the thread count restored afterwards.

    A busy machine disturbs one thread less than many.

    Args:
        shape: ``(batch, heads, seq_len, dim)`` of the rotated tensor.
        min_run_time: the least time spent timing each implementation, in seconds.

    Returns:
        One :class:`posenc.benchmark.Timing` per implementation.

    Raises:
        ValueError: as :func:`posenc.benchmark.rope_timings`.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return rope_timings(shape, min_run_time=min_run_time)
    finally:
        torch.set_num_threads(threads)


def row_partners(matrix: torch.Tensor) -> list[tuple[int, int, str]]:
    """For each row of a matrix that mixes every output with one other input, that input and its sign.

    A rotation by pairs (or a broken one) computes output ``r`` as ``x_r cos φ ± x_c sin φ``:
    row ``r`` has its diagonal entry and one more non-zero entry, in column ``c``.

    Args:
        matrix: a square matrix, shape ``(d, d)``, e.g. a rotary map's action on the basis vectors.

    Returns:
        ``(r, c, "+" or "-")`` for every row ``r``: the other column ``c`` with a non-zero entry and
        the sign of that entry.

    Raises:
        TypeError: if ``matrix`` is not a tensor.
        ValueError: if ``matrix`` is not square, or a row has no or several non-zero off-diagonal entries.
    """
    check_tensor("matrix", matrix, min_dim=2)
    if matrix.dim() != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix must be square, got shape {tuple(matrix.shape)}")
    partners = []
    for row in range(matrix.shape[0]):
        others = [c for c in range(matrix.shape[1]) if c != row and matrix[row, c] != 0]
        if len(others) != 1:
            raise ValueError(f"row {row} must mix in exactly one other coordinate, got columns {others}")
        partners.append((row, others[0], "+" if matrix[row, others[0]] > 0 else "-"))
    return partners
