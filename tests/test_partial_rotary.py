"""Partial rotary (``rotary_dim``) against the real GPT-NeoX and GPT-J code in ``transformers``."""

from __future__ import annotations

import warnings

import pytest
import torch

from posenc import RotaryEmbedding, apply_rope

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox import modeling_gpt_neox as neox
    from transformers.models.gptj import modeling_gptj as gptj


def test_half_layout_matches_gpt_neox() -> None:
    """GPT-NeoX rotates the first rotary_pct of each head in the half layout, with frequencies for that part."""
    config = GPTNeoXConfig(hidden_size=64, num_attention_heads=2, rotary_pct=0.25, rotary_emb_base=10000)
    head_dim, rotary_dim = 32, 8
    rotary = neox.GPTNeoXRotaryEmbedding(config)
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 2, 12, head_dim, generator=generator)
    positions = torch.arange(100, 112)
    cos, sin = rotary(q, positions[None])
    assert cos.shape[-1] == rotary_dim
    q_rot, _ = neox.apply_rotary_pos_emb(q[..., :rotary_dim], q[..., :rotary_dim], cos, sin)
    expected = torch.cat((q_rot, q[..., rotary_dim:]), dim=-1)
    got = apply_rope(q, positions, layout="half", rotary_dim=rotary_dim)
    assert torch.allclose(got, expected, atol=1e-5)
    module = RotaryEmbedding(head_dim, layout="half", rotary_dim=rotary_dim)
    assert torch.allclose(module(q, positions), expected, atol=1e-5)


def test_interleaved_layout_matches_gpt_j() -> None:
    """GPT-J rotates the first rotary_dim coordinates with rotate_every_two (interleaved pairs)."""
    head_dim, rotary_dim, length = 16, 8, 10
    table = gptj.create_sinusoidal_positions(64, rotary_dim)
    positions = torch.arange(20, 20 + length)
    sin, cos = torch.split(table[positions][None], rotary_dim // 2, dim=-1)
    x = torch.randn(1, length, 3, head_dim)  # GPT-J's (batch, seq, heads, head_dim)
    rotated = gptj.apply_rotary_pos_emb(x[..., :rotary_dim], sin, cos)
    expected = torch.cat((rotated, x[..., rotary_dim:]), dim=-1).transpose(1, 2)
    got = apply_rope(x.transpose(1, 2), positions, rotary_dim=rotary_dim)
    assert torch.allclose(got, expected, atol=1e-5)


def test_partial_scores_split_into_relative_and_position_free_parts() -> None:
    generator = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 6, 16, dtype=torch.float64, generator=generator).unbind(0)
    for layout in ("interleaved", "half"):
        base = apply_rope(q, rotary_dim=4, layout=layout) @ apply_rope(k, rotary_dim=4, layout=layout).T
        shifted = (
            apply_rope(q, torch.arange(6) + 50, rotary_dim=4, layout=layout)
            @ apply_rope(k, torch.arange(6) + 50, rotary_dim=4, layout=layout).T
        )
        assert torch.allclose(base, shifted, atol=1e-12)
        pass_through = q[:, 4:] @ k[:, 4:].T
        rotated = apply_rope(q[:, :4], layout=layout) @ apply_rope(k[:, :4], layout=layout).T
        assert torch.allclose(base, rotated + pass_through, atol=1e-12)
    assert torch.equal(apply_rope(q, rotary_dim=16), apply_rope(q))


def test_module_partial_is_float64_exact_and_per_sample() -> None:
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    positions = torch.tensor([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]])
    module = RotaryEmbedding(12, rotary_dim=8, initial_len=4)
    expected = apply_rope(x, positions, rotary_dim=8)
    assert torch.allclose(module(x, positions), expected, atol=1e-13)
    assert torch.equal(module(x, positions)[..., 8:], x[..., 8:])
    assert module.frequencies.shape == (4,)


def test_rotary_dim_validation() -> None:
    x = torch.randn(3, 8)
    with pytest.raises(ValueError, match="even"):
        apply_rope(x, rotary_dim=3)
    with pytest.raises(ValueError, match="at most"):
        apply_rope(x, rotary_dim=10)
    with pytest.raises(TypeError, match="integer"):
        apply_rope(x, rotary_dim=4.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at most"):
        RotaryEmbedding(8, rotary_dim=16)
    with pytest.raises(ValueError):
        apply_rope(x, rotary_dim=4, frequencies=torch.ones(4, dtype=torch.float64))
