"""posenc.measure.rotary: each measurement against an independent computation, and bad inputs."""

from __future__ import annotations

import math

import pytest
import torch
from transformers.models import qwen2_vl

from posenc.measure.rotary import (
    axis_of_each_pair,
    decode_one_step,
    grouped_query_attention,
    library_rotations,
    mixed_difference,
    mrope_reading_gaps,
    mrope_rotaries,
    partial_rotary_parts,
    random_attention_weights,
    rope_property_gaps,
    row_partners,
    run_llama_attention,
    score_map,
    timed_on_one_thread,
    tiny_qwen2_vl,
)
from posenc.rope2d import apply_rope_2d, rope_matrix_2d
from posenc.rotary import apply_rope


def test_rope_property_gaps_are_zero_for_rope_and_not_for_a_scaling():
    queries, keys = torch.randn(6, 8), torch.randn(6, 8)
    positions = torch.arange(6)
    gaps = rope_property_gaps(lambda x, p: apply_rope(x, p, layout="half"), queries, keys, positions)
    assert list(gaps) == ["max | |f(x)| - |x| |", "relativity gap (shift 37)", "vs apply_rope, closer layout",
                          "position 0 vs identity"]
    assert max(gaps.values()) < 1e-5
    doubled = rope_property_gaps(lambda x, p: 2 * apply_rope(x, p), queries, keys, positions)
    norms = queries.norm(dim=-1)
    assert doubled["max | |f(x)| - |x| |"] == pytest.approx(norms.max().item(), rel=1e-5)
    assert doubled["relativity gap (shift 37)"] < 1e-4  # a scaled rotation is still relative
    assert doubled["position 0 vs identity"] == pytest.approx(queries[0].abs().max().item(), rel=1e-6)
    with pytest.raises(ValueError, match="one shape"):
        rope_property_gaps(apply_rope, queries, keys[:3], positions)
    with pytest.raises(TypeError, match="callable"):
        rope_property_gaps(None, queries, keys, positions)  # type: ignore[arg-type]


def test_score_map_of_axial_rope_is_q_transpose_r_k_at_each_cell():
    query, key = torch.randn(2, 1, 8, dtype=torch.float64).unbind(0)
    scores = score_map(apply_rope_2d, query, key, 5)
    assert scores.shape == (5, 5)
    for r in range(-2, 3):
        for c in range(-2, 3):
            expected = query[0] @ rope_matrix_2d(r, c, 8, dtype=torch.float64) @ key[0]
            assert scores[r + 2, c + 2].item() == pytest.approx(expected.item(), abs=1e-12)
    shifted = score_map(apply_rope_2d, query, key, 5, (7, -4))
    assert torch.allclose(shifted, scores, atol=1e-10)  # relative: a common shift changes nothing
    with pytest.raises(ValueError, match="odd"):
        score_map(apply_rope_2d, query, key, 4)
    with pytest.raises(ValueError, match=r"\(1, d\)"):
        score_map(apply_rope_2d, query.expand(2, -1), key.expand(2, -1), 5)


def test_mixed_difference_vanishes_exactly_for_row_plus_column_terms():
    grid = torch.arange(-3, 4, dtype=torch.float64)
    separable = grid[:, None] ** 2 + torch.sin(grid)[None, :]
    assert mixed_difference(separable) == pytest.approx(0, abs=1e-12)
    assert mixed_difference(grid[:, None] * grid[None, :]) == pytest.approx(9.0)  # r c at the corners
    with pytest.raises(ValueError, match="odd"):
        mixed_difference(torch.zeros(4, 4))


def test_axis_of_each_pair_reads_qwen2_vl_sections_and_the_reading_reproduces_the_angles():
    rotary = qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding(qwen2_vl.Qwen2VLTextConfig())
    owners = axis_of_each_pair(rotary)
    # contiguous sections, as many pairs per axis as the config's mrope_section says
    expected = torch.cat([torch.full((n,), axis) for axis, n in enumerate(rotary.mrope_section)])
    assert torch.equal(owners, expected)
    thw = torch.randint(0, 500, (3, 1, 5))
    thw[:, :, 0] = 42
    reading, text = mrope_reading_gaps(rotary, owners, thw)
    assert reading < 1e-3 and text < 1e-4
    wrong = torch.roll(owners, 1)
    assert mrope_reading_gaps(rotary, wrong, thw)[0] > 1e-2
    thw[1, 0, 0] = 7
    with pytest.raises(ValueError, match="text token"):
        mrope_reading_gaps(rotary, owners, thw)
    with pytest.raises(ValueError, match=r"\(3, 1, L\)"):
        mrope_reading_gaps(rotary, owners, thw[:2])


def test_mrope_reading_gaps_draws_random_tokens_when_given_a_count():
    rotary = mrope_rotaries()["Qwen2-VL (sections)"]
    owners = axis_of_each_pair(rotary)
    torch.manual_seed(3)
    reading, text = mrope_reading_gaps(rotary, owners, 7)
    assert reading < 1e-3 and text < 1e-4
    assert mrope_reading_gaps(rotary, torch.roll(owners, 1), 7)[0] > 1e-2
    with pytest.raises(ValueError):
        mrope_reading_gaps(rotary, owners, 0)


def test_mrope_rotaries_are_the_installed_defaults():
    rotaries = mrope_rotaries()
    assert list(rotaries) == ["Qwen2-VL (sections)", "Qwen3-VL (interleaved)"]
    qwen2, qwen3 = rotaries.values()
    assert qwen2.config.rope_parameters["rope_theta"] == 1e6 and qwen2.inv_freq.shape == (64,)
    # Qwen2-VL's sections are contiguous, Qwen3-VL interleaves the axes
    assert axis_of_each_pair(qwen2).diff().ne(0).sum() == 2
    assert axis_of_each_pair(qwen3).diff().ne(0).sum() > 2


def test_tiny_qwen2_vl_numbers_an_image_amid_text():
    model = tiny_qwen2_vl()
    types = torch.tensor([[0, 0] + [1] * 6 + [0]])
    thw, _ = model.get_rope_index(torch.zeros_like(types), types, image_grid_thw=torch.tensor([[1, 4, 6]]))
    assert thw.shape == (3, 1, 9)
    assert thw[:, 0, :2].tolist() == [[0, 1]] * 3  # text: t = h = w
    assert thw[0, 0, 2:8].unique().numel() == 1  # one time step for the image


def _rotate_pairs_rope(xq: torch.Tensor, xk: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """RoPE on (batch, L, heads, d) with apply_rope, positions 0..L-1."""
    def rope(t: torch.Tensor) -> torch.Tensor:
        return apply_rope(t.transpose(1, 2)).transpose(1, 2)
    return rope(xq), rope(xk)


def test_grouped_query_attention_against_a_loop_over_heads():
    torch.manual_seed(0)
    weights = random_attention_weights(12, 4, 2, 6)
    assert [tuple(weights[n].shape) for n in ["wq", "wk", "wv", "wo"]] == [(24, 12), (12, 12), (12, 12), (12, 24)]
    x = torch.randn(2, 5, 12)
    out = grouped_query_attention(x, weights, _rotate_pairs_rope, 4, 2)
    assert out.shape == (2, 5, 12)
    # head by head, with query head g reading key-value head g // 2
    q = apply_rope((x @ weights["wq"].T).view(2, 5, 4, 6).transpose(1, 2))
    k = apply_rope((x @ weights["wk"].T).view(2, 5, 2, 6).transpose(1, 2))
    v = (x @ weights["wv"].T).view(2, 5, 2, 6).transpose(1, 2)
    heads = []
    for g in range(4):
        scores = q[:, g] @ k[:, g // 2].transpose(-1, -2) / math.sqrt(6)
        scores = scores.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), -math.inf)
        heads.append(torch.softmax(scores, -1) @ v[:, g // 2])
    expected = torch.cat(heads, -1) @ weights["wo"].T
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="divide"):
        grouped_query_attention(x, weights, _rotate_pairs_rope, 4, 3)
    with pytest.raises(ValueError, match="missing"):
        grouped_query_attention(x, {"wq": weights["wq"]}, _rotate_pairs_rope, 4, 2)


def test_run_llama_attention_matches_grouped_query_attention_in_the_half_layout():
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    torch.manual_seed(1)
    config = LlamaConfig(hidden_size=12, num_attention_heads=4, num_key_value_heads=2, head_dim=6)
    config._attn_implementation = "eager"
    layer = modeling_llama.LlamaAttention(config, layer_idx=0).eval()
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    weights = random_attention_weights(12, 4, 2, 6)
    x = torch.randn(1, 5, 12)

    def half_rope(xq: torch.Tensor, xk: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        def rope(t: torch.Tensor) -> torch.Tensor:
            return apply_rope(t.transpose(1, 2), layout="half").transpose(1, 2)
        return rope(xq), rope(xk)

    with torch.no_grad():
        out = run_llama_attention(layer, rotary, x, weights)
    torch.testing.assert_close(out, grouped_query_attention(x, weights, half_rope, 4, 2), atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="missing"):
        run_llama_attention(layer, rotary, x, {"wq": weights["wq"]})


def test_library_rotations_agree_with_apply_rope():
    x = torch.randn(2, 3, 10, 16)
    pairs = library_rotations(x, torch.arange(40, 50), rotary_dim=8)
    assert list(pairs) == ["HF Llama vs half", "GPT-J rotary_dim=8 vs interleaved, partial",
                           "GPT-NeoX rotary_pct=0.5 vs half, partial"]
    for library, ours in pairs.values():
        assert library.shape == ours.shape == x.shape
        torch.testing.assert_close(library, ours, atol=1e-5, rtol=1e-5)
    # the partial rotations pass the rest of the head through
    torch.testing.assert_close(pairs["GPT-J rotary_dim=8 vs interleaved, partial"][0][..., 8:], x[..., 8:])
    with pytest.raises(ValueError, match="rotary_dim"):
        library_rotations(x, torch.arange(10), rotary_dim=7)
    with pytest.raises(ValueError, match="positions"):
        library_rotations(x, torch.arange(9), rotary_dim=8)


def test_decode_one_step_equals_attention_over_the_unpadded_prompt():
    torch.manual_seed(2)
    weights = tuple((torch.randn(3, 8, 8) / 8**0.5).unbind(0))
    prompt, new = torch.randn(1, 4, 8), torch.randn(1, 1, 8)
    out = decode_one_step(weights, prompt, torch.ones(1, 4, dtype=torch.bool), torch.arange(4)[None],
                          torch.tensor([4]), new)
    w_q, w_k, w_v = weights
    every = torch.cat((prompt, new), 1)
    keys, query = apply_rope(every @ w_k), apply_rope(new @ w_q, torch.tensor([4]))
    expected = torch.softmax(query @ keys.transpose(-1, -2) / math.sqrt(8), -1) @ (every @ w_v)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    # a masked pad changes nothing
    padded = torch.cat((torch.zeros(1, 2, 8), prompt), 1)
    mask = torch.tensor([[False, False, True, True, True, True]])
    out_padded = decode_one_step(weights, padded, mask, torch.tensor([[0, 0, 0, 1, 2, 3]]), torch.tensor([4]), new)
    torch.testing.assert_close(out_padded, out, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="expected"):
        decode_one_step(weights, prompt, mask, torch.arange(4)[None], torch.tensor([4]), new)


def test_partial_rotary_parts_sum_to_the_score():
    query, key = torch.randn(2, 32, dtype=torch.float64).unbind(0)
    offsets = torch.arange(-5, 6)
    parts = partial_rotary_parts(query, key, offsets, [10, 700], rotary_dim=8)
    assert list(parts) == ["rotated part, i = 10", "pass-through part, i = 10", "rotated part, i = 700",
                           "pass-through part, i = 700"]
    for start in (10, 700):
        q = apply_rope(query[None], torch.tensor([start]), layout="half", rotary_dim=8)[0]
        k = apply_rope(key.expand(11, -1), start + offsets, layout="half", rotary_dim=8)
        total = parts[f"rotated part, i = {start}"] + parts[f"pass-through part, i = {start}"]
        torch.testing.assert_close(total, k @ q)
        torch.testing.assert_close(parts[f"pass-through part, i = {start}"], (query[8:] @ key[8:]).expand(11))
    torch.testing.assert_close(parts["rotated part, i = 10"], parts["rotated part, i = 700"])
    with pytest.raises(ValueError, match="starts"):
        partial_rotary_parts(query, key, offsets, [], rotary_dim=8)


def test_row_partners_reads_a_pairwise_rotation():
    matrix = apply_rope(torch.eye(8), torch.full((8,), 3)).T  # interleaved: (0, 1), (2, 3), ...
    assert row_partners(matrix) == [(0, 1, "-"), (1, 0, "+"), (2, 3, "-"), (3, 2, "+"), (4, 5, "-"),
                                    (5, 4, "+"), (6, 7, "-"), (7, 6, "+")]
    with pytest.raises(ValueError, match="exactly one"):
        row_partners(torch.ones(3, 3))
    with pytest.raises(ValueError, match="square"):
        row_partners(torch.ones(2, 3))


def test_timed_on_one_thread_restores_the_thread_count():
    threads = torch.get_num_threads()
    timings = timed_on_one_thread((1, 1, 8, 8), min_run_time=0.01)
    assert torch.get_num_threads() == threads
    assert timings and timings[0].relative == pytest.approx(1.0)
