"""Rotary position embedding: dense matrices, elementwise kernels, layouts and the module.

The core property is RoPE's *relativity*: the score between a query rotated to position m and a
key rotated to position n depends on m and n only through n - m.  The helpers
``preserves_norms`` and ``is_relative`` check it; ``test_property_checks_catch_the_seed_bug``
shows that they reject a plausible buggy implementation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import even_dims, leading_shapes, randn, seeds
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import (
    ROPE_LAYOUTS,
    RotaryEmbedding,
    apply_rope,
    apply_rope_complex,
    half_to_interleaved,
    interleaved_to_half,
    rope_frequencies,
    rope_matrix,
    rotate_half,
)

SETTINGS = settings(max_examples=30, deadline=None)
layouts = st.sampled_from(ROPE_LAYOUTS)
bases = st.sampled_from([10000.0, 100.0, 500000.0])
positions_st = st.integers(-2000, 2000) | st.floats(-2000, 2000, allow_nan=False, allow_infinity=False)


# --------------------------------------------------------------------------- independent references


def loop_rope(x, positions, base=10000.0, layout="interleaved"):
    """RoPE one pair at a time in Python floats: pair j of the token at position m is rotated by
    m * base^(-2j/d); pairs are (2j, 2j+1) interleaved or (j, j + d/2) for the half layout."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    d = x.shape[-1]
    for index in np.ndindex(*x.shape[:-1]):
        m = float(positions[index[-1]])
        for j in range(d // 2):
            a_idx, b_idx = (2 * j, 2 * j + 1) if layout == "interleaved" else (j, j + d // 2)
            angle = m * base ** (-2 * j / d)
            a, b = x[index + (a_idx,)], x[index + (b_idx,)]
            out[index + (a_idx,)] = a * math.cos(angle) - b * math.sin(angle)
            out[index + (b_idx,)] = a * math.sin(angle) + b * math.cos(angle)
    return torch.from_numpy(out)


def dense_rope(x, positions, base=10000.0):
    """Token at position m (a row vector) becomes (R_m x^T)^T = x R_m^T, with posenc's dense R_m."""
    matrices = torch.stack([rope_matrix(float(m), x.shape[-1], base, dtype=torch.float64) for m in positions])
    return torch.einsum("lij,...lj->...li", matrices, x)


def scores(rope, q, k, positions, **kwargs):
    return rope(q, positions, **kwargs) @ rope(k, positions, **kwargs).transpose(-2, -1)


def preserves_norms(rope, x, positions, **kwargs) -> bool:
    return torch.allclose(rope(x, positions, **kwargs).norm(dim=-1), x.norm(dim=-1), rtol=1e-9, atol=1e-9)


def is_relative(rope, q, k, positions, shift, **kwargs) -> bool:
    """Shifting every position by ``shift`` leaves every query-key score unchanged."""
    return torch.allclose(
        scores(rope, q, k, positions, **kwargs), scores(rope, q, k, positions + shift, **kwargs), rtol=1e-9, atol=1e-9
    )


# --------------------------------------------------------------------------- frequencies and matrices


@SETTINGS
@given(dim=even_dims, base=bases)
def test_frequencies_follow_the_geometric_ladder(dim, base):
    theta = rope_frequencies(dim, base)
    assert theta.dtype == torch.float64 and theta.shape == (dim // 2,)
    expected = [base ** (-2 * j / dim) for j in range(dim // 2)]
    np.testing.assert_allclose(theta.numpy(), expected, rtol=1e-15)
    assert theta[0] == 1.0 and torch.all(theta[1:] < theta[:-1])


@SETTINGS
@given(m=positions_st, dim=even_dims, base=bases)
def test_rope_matrix_is_block_diagonal_rotation(m, dim, base):
    matrix = rope_matrix(m, dim, base, dtype=torch.float64)
    assert matrix.shape == (dim, dim)
    expected = np.zeros((dim, dim))
    for j in range(dim // 2):
        angle = m * base ** (-2 * j / dim)
        expected[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [
            [math.cos(angle), -math.sin(angle)],
            [math.sin(angle), math.cos(angle)],
        ]
    np.testing.assert_allclose(matrix.numpy(), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(matrix.T @ matrix, torch.eye(dim, dtype=torch.float64), rtol=0, atol=1e-12)
    assert torch.linalg.det(matrix).item() == pytest.approx(1.0, abs=1e-9)


@SETTINGS
@given(m=positions_st, n=positions_st, dim=even_dims, base=bases)
def test_rope_matrix_relativity(m, n, dim, base):
    r_m = rope_matrix(m, dim, base, dtype=torch.float64)
    r_n = rope_matrix(n, dim, base, dtype=torch.float64)
    torch.testing.assert_close(r_m.T @ r_n, rope_matrix(n - m, dim, base, dtype=torch.float64), rtol=0, atol=1e-9)


def test_rope_matrix_at_zero_is_identity_and_accepts_0d_tensor():
    assert torch.equal(rope_matrix(0, 8, dtype=torch.float64), torch.eye(8, dtype=torch.float64))
    assert torch.equal(rope_matrix(torch.tensor(3), 4), rope_matrix(3, 4))
    assert rope_matrix(1, 4).dtype == torch.float32


@pytest.mark.parametrize("m", [0.1, 2**24 + 1, 123456789.25])
def test_rope_matrix_uses_the_exact_position(m):
    # Regression: the position was stored in float32 before the float64 angle was formed.
    matrix = rope_matrix(m, 2, dtype=torch.float64)
    expected = [[math.cos(m), -math.sin(m)], [math.sin(m), math.cos(m)]]
    np.testing.assert_allclose(matrix.numpy(), expected, rtol=0, atol=1e-15 * max(1.0, abs(m)))


# --------------------------------------------------------------------------- apply_rope


@SETTINGS
@given(lead=leading_shapes, seq_len=st.integers(1, 8), dim=even_dims, base=bases, seed=seeds)
def test_apply_rope_equals_dense_product_and_pair_loop(lead, seq_len, dim, base, seed):
    x = randn(*lead, seq_len, dim, seed=seed)
    positions = torch.arange(seq_len)
    rotated = apply_rope(x, base=base)
    assert rotated.shape == x.shape and rotated.dtype == x.dtype
    torch.testing.assert_close(rotated, dense_rope(x, positions, base))
    torch.testing.assert_close(rotated, loop_rope(x, positions.tolist(), base))
    torch.testing.assert_close(apply_rope(x, base=base, layout="half"), loop_rope(x, positions.tolist(), base, "half"))


@SETTINGS
@given(lead=leading_shapes, seq_len=st.integers(1, 8), dim=even_dims, start=st.integers(-100, 5000), seed=seeds)
def test_apply_rope_complex_equals_apply_rope(lead, seq_len, dim, start, seed):
    x = randn(*lead, seq_len, dim, seed=seed)
    positions = torch.arange(start, start + seq_len)
    torch.testing.assert_close(apply_rope_complex(x, positions), apply_rope(x, positions), rtol=0, atol=1e-12)
    x32 = x.float()
    torch.testing.assert_close(apply_rope_complex(x32, positions), apply_rope(x32, positions))


@SETTINGS
@given(lead=leading_shapes, seq_len=st.integers(1, 8), dim=even_dims, layout=layouts, seed=seeds)
def test_apply_rope_preserves_token_norms(lead, seq_len, dim, layout, seed):
    x = randn(*lead, seq_len, dim, seed=seed)
    positions = torch.randint(0, 10**5, (seq_len,), generator=torch.Generator().manual_seed(seed))
    assert preserves_norms(apply_rope, x, positions, layout=layout)
    assert preserves_norms(lambda t, p: apply_rope_complex(t, p), x, positions)


@SETTINGS
@given(
    seq_len=st.integers(1, 8),
    dim=even_dims,
    layout=layouts,
    shift=st.integers(-3000, 3000) | st.floats(-3000, 3000, allow_nan=False),
    seed=seeds,
)
def test_rope_scores_depend_only_on_offsets(seq_len, dim, layout, shift, seed):
    q, k = randn(2, seq_len, dim, seed=seed), randn(2, seq_len, dim, seed=seed + 1)
    positions = torch.randint(-50, 50, (seq_len,), generator=torch.Generator().manual_seed(seed)).double()
    assert is_relative(apply_rope, q, k, positions, shift, layout=layout)
    # And the score equals q^T R_{n-m} k with the dense matrix of the offset.
    if layout == "interleaved":
        s = scores(apply_rope, q, k, positions)
        for a in range(seq_len):
            for b in range(seq_len):
                offset = float(positions[b] - positions[a])
                expected = q[:, a] @ rope_matrix(offset, dim, dtype=torch.float64) @ k[:, b].T
                torch.testing.assert_close(s[:, a, b], expected.diagonal())


@SETTINGS
@given(lead=leading_shapes, seq_len=st.integers(1, 8), dim=even_dims, seed=seeds)
def test_layouts_differ_by_a_fixed_permutation(lead, seq_len, dim, seed):
    x = randn(*lead, seq_len, dim, seed=seed)
    positions = torch.arange(seq_len) * 37
    via_half = half_to_interleaved(apply_rope(interleaved_to_half(x), positions, layout="half"))
    torch.testing.assert_close(apply_rope(x, positions, layout="interleaved"), via_half, rtol=0, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(dim=even_dims)
def test_layout_permutations_are_inverse_and_move_pairs(dim):
    x = torch.arange(dim)
    half = interleaved_to_half(x)
    for j in range(dim // 2):
        assert half[j] == 2 * j and half[j + dim // 2] == 2 * j + 1  # index 2j -> j, 2j+1 -> j + d/2
    assert torch.equal(half_to_interleaved(half), x)
    assert torch.equal(interleaved_to_half(half_to_interleaved(x)), x)
    assert sorted(half.tolist()) == list(range(dim))  # a permutation


@SETTINGS
@given(lead=leading_shapes, seq_len=st.integers(1, 8), dim=even_dims, base=bases, seed=seeds)
def test_rotate_half_formulation_equals_half_layout(lead, seq_len, dim, base, seed):
    x = randn(*lead, seq_len, dim, seed=seed)
    # Hugging Face Llama / GPT-NeoX: freqs = outer(m, theta), emb = cat(freqs, freqs).
    theta = torch.tensor([base ** (-2 * j / dim) for j in range(dim // 2)], dtype=torch.float64)
    freqs = torch.outer(torch.arange(seq_len, dtype=torch.float64), theta)
    emb = torch.cat((freqs, freqs), dim=-1)
    reference = x * emb.cos() + rotate_half(x) * emb.sin()
    torch.testing.assert_close(apply_rope(x, base=base, layout="half"), reference)


def test_rotate_half_by_hand():
    assert rotate_half(torch.tensor([1.0, 2.0, 3.0, 4.0])).tolist() == [-3.0, -4.0, 1.0, 2.0]


@SETTINGS
@given(seq_len=st.integers(1, 8), dim=even_dims, layout=layouts, seed=seeds)
def test_real_valued_positions(seq_len, dim, layout, seed):
    x = randn(seq_len, dim, seed=seed)
    half_steps = torch.arange(seq_len, dtype=torch.float64) * 0.5  # position interpolation
    rotated = apply_rope(x, half_steps, layout=layout)
    torch.testing.assert_close(rotated, loop_rope(x, half_steps.tolist(), layout=layout))
    # R_{p/2} R_{p/2} = R_p, and R_{-p} undoes R_p.
    torch.testing.assert_close(
        apply_rope(rotated, half_steps, layout=layout), apply_rope(x, 2 * half_steps, layout=layout)
    )
    torch.testing.assert_close(apply_rope(rotated, -half_steps, layout=layout), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_dtype_is_preserved_and_far_positions_are_accurate(dtype, layout):
    x = randn(2, 4, 64, seed=7).to(dtype)
    positions = torch.arange(5000, 5004)
    rotated = apply_rope(x, positions, layout=layout)
    assert rotated.dtype == dtype
    assert apply_rope_complex(x, positions).dtype == dtype
    reference = loop_rope(x.double(), positions.tolist(), layout=layout)
    # One rounding to `dtype` at the end; default tolerances of assert_close for that dtype.
    torch.testing.assert_close(rotated.double(), reference, check_dtype=False, **_tolerance(dtype))
    torch.testing.assert_close(
        apply_rope_complex(x, positions).double(), loop_rope(x.double(), positions.tolist()), **_tolerance(dtype)
    )


def _tolerance(dtype):
    return {
        torch.float16: dict(rtol=1e-3, atol=1e-5),
        torch.bfloat16: dict(rtol=1.6e-2, atol=1e-5),
        torch.float32: dict(rtol=1.3e-6, atol=1e-5),
        torch.float64: dict(rtol=1e-9, atol=1e-9),
    }[dtype]


def test_half_precision_angles_would_fail_the_far_position_check():
    # Sanity check that the test above can fail: forming m * theta in float16 at m ~ 5000 is off
    # by up to 2 radians (float16 spacing there is 4), far outside the tolerance.
    positions = torch.arange(5000, 5004)
    naive = positions.half()[:, None] * rope_frequencies(64).half()[None, :]
    exact = positions.double()[:, None] * rope_frequencies(64)[None, :]
    assert (naive.double().cos() - exact.cos()).abs().max() > 0.1


def test_apply_rope_handles_views_with_odd_storage_offset():
    # A contiguous view that starts at an odd element cannot be read as complex numbers without a
    # copy; both interleaved kernels must still work on it.
    flat = randn(1 + 3 * 8, seed=2, dtype=torch.float32)
    x = flat[1:].view(3, 8)
    assert x.is_contiguous() and x.storage_offset() == 1
    expected = loop_rope(x, range(3)).float()
    torch.testing.assert_close(apply_rope(x), expected)
    torch.testing.assert_close(apply_rope_complex(x), expected)


def test_non_contiguous_inputs():
    x = randn(4, 3, 8, seed=4).transpose(0, 1)  # (3, 4, 8), non-contiguous
    torch.testing.assert_close(apply_rope(x), loop_rope(x, range(4)))
    y = randn(5, 16, seed=5)[:, ::2]  # stride 2 in the last dimension
    torch.testing.assert_close(apply_rope(y), loop_rope(y, range(5)))
    torch.testing.assert_close(apply_rope_complex(y), loop_rope(y, range(5)))


# --------------------------------------------------------------------------- the seed bug


def seed_bug_rope(x, positions=None, base=10000.0):
    """A plausible buggy RoPE: interleaved pairs x[..., 0::2] / x[..., 1::2] combined with the
    cos/sin table cat(freqs, freqs), which is laid out for the *half* layout. Coordinates 2j and
    2j+1 then use different angles, so the 2x2 map per pair is no longer a rotation."""
    seq_len, dim = x.shape[-2:]
    positions = torch.arange(seq_len) if positions is None else positions
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    freqs = torch.outer(positions.double(), theta)
    emb = torch.cat((freqs, freqs), dim=-1)
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated_pairs = torch.stack((-odd, even), dim=-1).flatten(-2)  # (-x1, x0, -x3, x2, ...)
    return x * emb.cos() + rotated_pairs * emb.sin()


def test_property_checks_catch_the_seed_bug():
    q, k = randn(2, 6, 8, seed=0), randn(2, 6, 8, seed=1)
    positions = torch.arange(6.0, dtype=torch.float64)
    # The real implementation passes both checks...
    assert preserves_norms(apply_rope, q, positions)
    assert is_relative(apply_rope, q, k, positions, shift=3)
    # ...the buggy one fails both.
    assert not preserves_norms(seed_bug_rope, q, positions)
    assert not is_relative(seed_bug_rope, q, k, positions, shift=3)
    # It even agrees with RoPE at position 0 (everything is the identity there), which is why
    # checking only the first token, or only shapes, would not find it.
    torch.testing.assert_close(seed_bug_rope(q[:, :1]), q[:, :1])


# --------------------------------------------------------------------------- RotaryEmbedding


@SETTINGS
@given(lead=leading_shapes, seq_len=st.integers(1, 10), dim=even_dims, layout=layouts, seed=seeds)
def test_rotary_module_equals_apply_rope(lead, seq_len, dim, layout, seed):
    module = RotaryEmbedding(dim, layout=layout, initial_len=4)
    x = randn(*lead, seq_len, dim, seed=seed, dtype=torch.float32)
    torch.testing.assert_close(module(x), apply_rope(x, layout=layout), rtol=0, atol=0)
    positions = torch.randint(0, 300, (seq_len,), generator=torch.Generator().manual_seed(seed))
    torch.testing.assert_close(module(x, positions), apply_rope(x, positions, layout=layout), rtol=0, atol=0)
    real_positions = positions.double() / 3
    torch.testing.assert_close(module(x, real_positions), apply_rope(x, real_positions, layout=layout), rtol=0, atol=0)


def test_rotary_module_float64_input_is_as_exact_as_apply_rope():
    # The cos/sin cache is float64, so the module's precision does not depend on whether the
    # positions are integers (read from the cache) or reals (computed directly).
    module = RotaryEmbedding(16)
    x = randn(3, 12, 16, seed=3)
    positions = torch.arange(5000, 5012)
    out = module(x, positions)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, apply_rope(x, positions), rtol=0, atol=1e-13)
    torch.testing.assert_close(out, module(x, positions.double()), rtol=0, atol=1e-13)
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1), rtol=1e-13, atol=0)


def test_rotary_module_grows_cache_on_demand_and_keeps_it_out_of_state_dict():
    module = RotaryEmbedding(8, initial_len=4)
    assert module.cached_len == 4
    assert len(module.state_dict()) == 0
    assert {"cos", "sin"} <= set(dict(module.named_buffers()))
    x = randn(10, 8, seed=0, dtype=torch.float32)
    torch.testing.assert_close(module(x), apply_rope(x), rtol=0, atol=0)
    assert module.cached_len >= 10
    before = module.cached_len
    module(x[:3])  # shorter input: no rebuild
    assert module.cached_len == before
    out = module(x[:2], torch.tensor([0, 999]))
    assert module.cached_len >= 1000
    torch.testing.assert_close(out, apply_rope(x[:2], torch.tensor([0, 999])), rtol=0, atol=0)
    assert len(module.state_dict()) == 0
    assert module.cos.shape == (module.cached_len, 4) and module.sin.shape == (module.cached_len, 4)


def test_rotary_module_preserves_low_precision_dtypes():
    module = RotaryEmbedding(8)
    for dtype in (torch.float16, torch.bfloat16):
        x = randn(5, 8, seed=1).to(dtype)
        out = module(x, torch.arange(5000, 5005))
        assert out.dtype == dtype
        torch.testing.assert_close(out.double(), loop_rope(x.double(), range(5000, 5005)), **_tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_casting_the_rotary_module_keeps_its_angles_exact(dtype, seed):
    # Regression: `module.to(torch.bfloat16)` used to cast the frequencies and the cos/sin cache,
    # and the last query of a 4 096-token context scored its keys off by ~10 (float16: ~4) where
    # rounding the inputs alone costs ~0.1. The cast module must be as exact as apply_rope.
    dim, length = 64, 4096
    query, keys = randn(1, dim, seed=seed), randn(length, dim, seed=seed + 100)
    positions, last = torch.arange(length), torch.tensor([length - 1])
    exact = (apply_rope(keys, positions) @ apply_rope(query, last).T).squeeze(-1)
    low_query, low_keys = query.to(dtype), keys.to(dtype)

    def error(rotate) -> float:
        scores = rotate(low_keys, positions).double() @ rotate(low_query, last).double().T
        return (scores.squeeze(-1) - exact).abs().max().item()

    module = RotaryEmbedding(dim, initial_len=16).to(dtype)
    assert {module.frequencies.dtype, module.cos.dtype, module.sin.dtype} == {torch.float64}
    assert len(module.state_dict()) == 0
    reference = error(apply_rope)
    inputs_alone = (apply_rope(low_keys.double(), positions) @ apply_rope(low_query.double(), last).T).squeeze(-1)
    assert reference < 4 * (inputs_alone - exact).abs().max().item() + 1e-3
    assert error(module) <= 1.01 * reference  # same order as apply_rope on the same inputs
    assert module.cos.dtype == torch.float64 and module.cached_len >= length  # grown after the cast
    # What the cast used to do: the buffers rounded to `dtype`; the cache, rebuilt for the longer
    # context, then inherits the rounded frequencies.
    naive = RotaryEmbedding(dim, initial_len=16)
    for name in ("frequencies", "cos", "sin"):
        setattr(naive, name, getattr(naive, name).to(dtype))
    assert error(naive) > 20 * reference


def test_rotary_module_conversions_move_but_never_round_the_tables():
    module = RotaryEmbedding(8, initial_len=4)
    for convert in (torch.nn.Module.half, torch.nn.Module.bfloat16, torch.nn.Module.float, torch.nn.Module.double):
        convert(module)
        assert all(getattr(module, name).dtype == torch.float64 for name in ("frequencies", "cos", "sin"))
    module.to("cpu", torch.bfloat16)
    assert module.frequencies.dtype == torch.float64 and len(module.state_dict()) == 0
    torch.testing.assert_close(module.frequencies, rope_frequencies(8), rtol=0, atol=0)
    x = randn(5, 8, seed=4, dtype=torch.float32)
    positions = torch.arange(3000, 3005)
    torch.testing.assert_close(module(x, positions), apply_rope(x, positions), rtol=0, atol=0)


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("dim", [3, 5, 0])
def test_rejects_odd_dimension(dim):
    with pytest.raises(ValueError, match="dim"):
        rope_frequencies(dim)
    with pytest.raises(ValueError, match="dim"):
        rope_matrix(1, dim)
    with pytest.raises(ValueError, match="dim"):
        RotaryEmbedding(dim)
    if dim:
        with pytest.raises(ValueError, match="dim"):
            apply_rope(torch.zeros(2, dim))
        with pytest.raises(ValueError, match="dim"):
            apply_rope_complex(torch.zeros(2, dim))
        with pytest.raises(ValueError, match="last dimension"):
            rotate_half(torch.zeros(2, dim))
        with pytest.raises(ValueError, match="last dimension"):
            interleaved_to_half(torch.zeros(2, dim))
        with pytest.raises(ValueError, match="last dimension"):
            half_to_interleaved(torch.zeros(2, dim))


@pytest.mark.parametrize("rope", [apply_rope, apply_rope_complex, RotaryEmbedding(4)])
def test_rejects_bad_positions(rope):
    x = torch.zeros(3, 4)
    with pytest.raises(ValueError, match="positions"):
        rope(x, torch.arange(2))
    with pytest.raises(ValueError, match="positions"):
        rope(x, torch.arange(3)[None, :])
    with pytest.raises(TypeError, match="positions"):
        rope(x, [0, 1, 2])
    with pytest.raises(TypeError, match="positions"):
        rope(x, torch.tensor([True, False, True]))


def test_negative_positions_rotate_backwards_in_every_form():
    x = randn(3, 8, seed=40)
    positions = torch.tensor([-5, 0, 3])
    expected = torch.stack([rope_matrix(int(m), 8, dtype=x.dtype) @ row for m, row in zip(positions, x, strict=True)])
    torch.testing.assert_close(apply_rope(x, positions), expected)
    torch.testing.assert_close(RotaryEmbedding(8)(x, positions), expected)


@pytest.mark.parametrize("layout", ["INTERLEAVED", "neox", None])
def test_rejects_unknown_layout(layout):
    with pytest.raises(ValueError, match="layout"):
        apply_rope(torch.zeros(2, 4), layout=layout)
    with pytest.raises(ValueError, match="layout"):
        RotaryEmbedding(4, layout=layout)


@pytest.mark.parametrize("base", [0, 0.0, -1.0, -10000, float("inf"), float("nan")])
def test_rejects_bad_base(base):
    x = torch.zeros(2, 4)
    for call in (
        lambda: apply_rope(x, base=base),
        lambda: apply_rope_complex(x, base=base),
        lambda: rope_frequencies(4, base),
        lambda: rope_matrix(1, 4, base),
        lambda: RotaryEmbedding(4, base=base),
    ):
        with pytest.raises(ValueError, match="base"):
            call()


def test_rejects_bad_types_and_shapes():
    with pytest.raises(TypeError, match="x"):
        apply_rope(torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="x"):
        apply_rope_complex(torch.zeros(2, 4, dtype=torch.int32))
    with pytest.raises(TypeError, match="x"):
        RotaryEmbedding(4)(torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="x"):
        apply_rope(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="x"):
        apply_rope(torch.zeros(4))
    with pytest.raises(ValueError, match="dim"):
        RotaryEmbedding(4)(torch.zeros(3, 6))
    with pytest.raises(TypeError, match="position"):
        rope_matrix("1", 4)
    with pytest.raises(TypeError, match="position"):
        rope_matrix(True, 4)
    with pytest.raises(ValueError, match="initial_len"):
        RotaryEmbedding(4, initial_len=0)


# --------------------------------------------------------------------------- given frequencies


def loop_rope_with_frequencies(x, positions, frequencies, layout="interleaved"):
    """RoPE one pair at a time with arbitrary frequencies: pair l of a token at position m turns by
    m * frequencies[l]. ``positions`` is one list per leading index of ``x`` (or one shared list)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    d = x.shape[-1]
    for index in np.ndindex(*x.shape[:-1]):
        row = positions[index[0]] if isinstance(positions[0], list) else positions
        m = float(row[index[-1]])
        for pair, theta in enumerate(frequencies):
            a_idx, b_idx = (2 * pair, 2 * pair + 1) if layout == "interleaved" else (pair, pair + d // 2)
            a, b = x[index + (a_idx,)], x[index + (b_idx,)]
            out[index + (a_idx,)] = a * math.cos(m * theta) - b * math.sin(m * theta)
            out[index + (b_idx,)] = a * math.sin(m * theta) + b * math.cos(m * theta)
    return torch.from_numpy(out)


def rope_forms(layout):
    """The three implementations that take ``frequencies=``, as functions of (x, positions, **kw)."""
    forms = [
        lambda x, p, **kw: apply_rope(x, p, layout=layout, **kw),
        lambda x, p, **kw: RotaryEmbedding(x.shape[-1], layout=layout, initial_len=4, **kw)(x, p),
    ]
    if layout == "interleaved":
        forms.append(lambda x, p, **kw: apply_rope_complex(x, p, **kw))
    return forms


@SETTINGS
@given(seq_len=st.integers(1, 6), dim=even_dims, layout=layouts, seed=seeds)
def test_given_frequencies_rotate_each_pair_by_position_times_frequency(seq_len, dim, layout, seed):
    generator = torch.Generator().manual_seed(seed)
    frequencies = torch.rand(dim // 2, generator=generator, dtype=torch.float64) * 3
    positions = torch.randint(-100, 100, (seq_len,), generator=generator)
    x = randn(2, seq_len, dim, seed=seed, dtype=torch.float64)
    expected = loop_rope_with_frequencies(x, positions.tolist(), frequencies.tolist(), layout)
    for form in rope_forms(layout):
        torch.testing.assert_close(form(x, positions, frequencies=frequencies), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_default_frequencies_equal_the_base_ladder(layout):
    x = randn(3, 7, 16, seed=50, dtype=torch.float64)
    positions = torch.arange(7) * 11
    for form in rope_forms(layout):
        torch.testing.assert_close(
            form(x, positions, frequencies=rope_frequencies(16, 500.0)), form(x, positions, base=500.0), rtol=0, atol=0
        )


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_dividing_frequencies_equals_dividing_positions(layout):
    # Position interpolation in two equivalent forms: angle m * (theta / s) = (m / s) * theta.
    x = randn(2, 9, 32, seed=51, dtype=torch.float64)
    positions, scale = torch.arange(9) * 100, 4.0
    for form in rope_forms(layout):
        torch.testing.assert_close(
            form(x, positions, frequencies=rope_frequencies(32) / scale), form(x, positions.double() / scale)
        )


@pytest.mark.parametrize(
    ("frequencies", "error", "match"),
    [
        (torch.ones(3, dtype=torch.float64), ValueError, r"shape \(dim/2,\) = \(4,\)"),
        (torch.ones(2, 4), ValueError, "shape"),
        (torch.ones(4, dtype=torch.long), TypeError, "floating"),
        (torch.tensor([1.0, float("inf"), 0.1, 0.01]), ValueError, "finite"),
        ([1.0, 0.1, 0.01, 0.001], TypeError, "frequencies"),
    ],
)
def test_rejects_bad_frequencies(frequencies, error, match):
    x = torch.zeros(3, 8)
    for call in (
        lambda: apply_rope(x, frequencies=frequencies),
        lambda: apply_rope_complex(x, frequencies=frequencies),
        lambda: RotaryEmbedding(8, frequencies=frequencies),
    ):
        with pytest.raises(error, match=match):
            call()


def test_rejects_base_and_frequencies_together():
    frequencies = rope_frequencies(8)
    with pytest.raises(ValueError, match="either base or frequencies"):
        apply_rope(torch.zeros(3, 8), base=500.0, frequencies=frequencies)
    with pytest.raises(ValueError, match="either base or frequencies"):
        RotaryEmbedding(8, base=500.0, frequencies=frequencies)


def test_rotary_module_keeps_frequencies_out_of_state_dict():
    rope = RotaryEmbedding(8, frequencies=rope_frequencies(8) / 2)
    assert rope.state_dict() == {}
    torch.testing.assert_close(rope.frequencies, rope_frequencies(8) / 2)


# --------------------------------------------------------------------------- per-sample positions


@SETTINGS
@given(batch=st.integers(1, 3), heads=st.integers(1, 3), seq_len=st.integers(1, 6), layout=layouts, seed=seeds)
def test_per_sample_positions_rotate_each_sequence_to_its_own_row(batch, heads, seq_len, layout, seed):
    generator = torch.Generator().manual_seed(seed)
    positions = torch.randint(-30, 300, (batch, seq_len), generator=generator)
    x = randn(batch, heads, seq_len, 8, seed=seed, dtype=torch.float64)
    expected = loop_rope_with_frequencies(x, positions.tolist(), rope_frequencies(8).tolist(), layout)
    without_heads = x[:, 0]
    for form in rope_forms(layout):
        torch.testing.assert_close(form(x, positions), expected, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(form(without_heads, positions), expected[:, 0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_left_padding_with_per_sample_positions_keeps_scores_of_real_tokens(layout):
    # Two copies of one sequence, the second left-padded by 3 tokens: with positions counted from
    # each sequence's first real token, the real tokens' scores are identical.
    q, k = randn(1, 5, 8, seed=52, dtype=torch.float64), randn(1, 5, 8, seed=53, dtype=torch.float64)
    pad = torch.zeros(1, 3, 8, dtype=torch.float64)
    qs = torch.cat((torch.cat((q, pad), 1), torch.cat((pad, q), 1)))
    ks = torch.cat((torch.cat((k, pad), 1), torch.cat((pad, k), 1)))
    positions = torch.stack((torch.arange(8), torch.arange(8) - 3)).clamp(min=0)
    scores = apply_rope(qs, positions, layout=layout) @ apply_rope(ks, positions, layout=layout).transpose(-2, -1)
    torch.testing.assert_close(scores[0, :5, :5], scores[1, 3:, 3:], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rope", [apply_rope, apply_rope_complex, RotaryEmbedding(4)])
def test_rejects_per_sample_positions_that_do_not_match(rope):
    with pytest.raises(ValueError, match=r"\(B, L\)"):
        rope(torch.zeros(2, 3, 4), torch.zeros(3, 3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(B, L\)"):
        rope(torch.zeros(2, 1, 3, 4), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="positions"):
        rope(torch.zeros(2, 3, 4), torch.zeros(2, 3, 1, dtype=torch.long))
