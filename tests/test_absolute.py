"""Absolute position encodings: one-hot, sinusoidal (vs d2l and NumPy) and learned."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import even_dims, leading_shapes, randn, seeds
from d2l import torch as d2l
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    one_hot_encoding,
    sinusoidal_encoding,
    sinusoidal_offset_matrix,
    sinusoidal_rows,
)

SETTINGS = settings(max_examples=30, deadline=None)
bases = st.sampled_from([10000.0, 100.0, 2.0, 500000.0])


def numpy_sinusoids(positions, dim, base=10000.0):
    """Vaswani et al. written out pair by pair in float64: P[i,2j]=sin(i/b^(2j/D)), P[i,2j+1]=cos(...)."""
    positions = np.asarray(positions, dtype=np.float64)
    table = np.empty((len(positions), dim))
    for row, i in enumerate(positions):
        for j in range(dim // 2):
            angle = i / base ** (2 * j / dim)
            table[row, 2 * j] = np.sin(angle)
            table[row, 2 * j + 1] = np.cos(angle)
    return table


# --------------------------------------------------------------------------- sinusoidal_encoding


@SETTINGS
@given(seq_len=st.integers(1, 300), dim=even_dims)
def test_sinusoidal_encoding_matches_d2l(seq_len, dim):
    reference = d2l.PositionalEncoding(num_hiddens=dim, dropout=0, max_len=seq_len + 3).P[0, :seq_len]
    table = sinusoidal_encoding(seq_len, dim)
    assert table.dtype == torch.float32 and table.shape == (seq_len, dim)
    # d2l forms the angle i / 10000^(2j/D) in float32, so its angle (and hence its sine and
    # cosine) is off by a few float32 ulps of the largest angle, i.e. ~eps32 * (seq_len - 1).
    atol = 2 * torch.finfo(torch.float32).eps * seq_len + 1e-6
    torch.testing.assert_close(table, reference, rtol=0, atol=atol)


@SETTINGS
@given(seq_len=st.integers(1, 64), dim=even_dims, base=bases)
def test_sinusoidal_encoding_matches_numpy_float64(seq_len, dim, base):
    reference = numpy_sinusoids(range(seq_len), dim, base)
    exact = sinusoidal_encoding(seq_len, dim, base, dtype=torch.float64)
    assert exact.dtype == torch.float64
    np.testing.assert_allclose(exact.numpy(), reference, rtol=0, atol=1e-12)
    # The float32 table is the float64 one rounded, not a float32 computation.
    np.testing.assert_allclose(sinusoidal_encoding(seq_len, dim, base).numpy(), reference, rtol=0, atol=1e-7)


def test_sinusoidal_encoding_is_accurate_at_far_positions():
    # At position 100000 a float32 angle would be off by ~1e-2 rad; posenc forms it in float64.
    far = np.arange(99_990, 100_000)
    table = sinusoidal_encoding(100_000, 16)[-10:]
    np.testing.assert_allclose(table.numpy(), numpy_sinusoids(far, 16), rtol=0, atol=2e-7)


def test_sinusoidal_encoding_first_row_and_first_column_pair():
    table = sinusoidal_encoding(6, 4, dtype=torch.float64)
    # Position 0: sin(0)=0 and cos(0)=1 alternate.
    torch.testing.assert_close(table[0], torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=torch.float64))
    # Frequency 0 is 1 rad per position.
    torch.testing.assert_close(table[:, 0], torch.arange(6.0, dtype=torch.float64).sin())
    torch.testing.assert_close(table[:, 1], torch.arange(6.0, dtype=torch.float64).cos())


# --------------------------------------------------------------------------- sinusoidal_offset_matrix

offsets = st.integers(-40, 40) | st.floats(-40, 40, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(k=st.integers(-30, 30), dim=even_dims, base=bases)
def test_offset_matrix_shifts_every_row_by_k(k, dim, base):
    seq_len = 20
    positions = np.arange(seq_len)
    table = torch.from_numpy(numpy_sinusoids(positions, dim, base))
    shifted = torch.from_numpy(numpy_sinusoids(positions + k, dim, base))
    matrix = sinusoidal_offset_matrix(k, dim, base, dtype=torch.float64)
    torch.testing.assert_close(table @ matrix.T, shifted, rtol=0, atol=1e-10)
    # Within the table itself: row i maps to row i + k.
    if k >= 0:
        own = sinusoidal_encoding(seq_len + k, dim, base, dtype=torch.float64)
        torch.testing.assert_close(own[:seq_len] @ matrix.T, own[k:], rtol=0, atol=1e-10)


@SETTINGS
@given(k=offsets, dim=even_dims, base=bases)
def test_offset_matrix_is_orthogonal_and_inverse_of_negative_offset(k, dim, base):
    matrix = sinusoidal_offset_matrix(k, dim, base, dtype=torch.float64)
    eye = torch.eye(dim, dtype=torch.float64)
    torch.testing.assert_close(matrix @ matrix.T, eye, rtol=0, atol=1e-12)
    inverse = sinusoidal_offset_matrix(-k, dim, base, dtype=torch.float64)
    torch.testing.assert_close(matrix @ inverse, eye, rtol=0, atol=1e-12)
    torch.testing.assert_close(torch.linalg.inv(matrix), inverse, rtol=0, atol=1e-10)


@SETTINGS
@given(a=offsets, b=offsets, dim=even_dims, base=bases)
def test_offset_matrices_compose(a, b, dim, base):
    m_a = sinusoidal_offset_matrix(a, dim, base, dtype=torch.float64)
    m_b = sinusoidal_offset_matrix(b, dim, base, dtype=torch.float64)
    m_ab = sinusoidal_offset_matrix(a + b, dim, base, dtype=torch.float64)
    torch.testing.assert_close(m_a @ m_b, m_ab, rtol=0, atol=1e-10)
    torch.testing.assert_close(m_a @ m_b, m_b @ m_a, rtol=0, atol=1e-12)


def test_offset_matrix_zero_is_identity_and_blocks_are_2x2():
    assert torch.equal(sinusoidal_offset_matrix(0, 6, dtype=torch.float64), torch.eye(6, dtype=torch.float64))
    matrix = sinusoidal_offset_matrix(3, 6, dtype=torch.float64)
    block_mask = torch.block_diag(*[torch.ones(2, 2)] * 3).bool()
    assert torch.all(matrix[~block_mask] == 0)
    # First block, frequency 1: [[cos 3, sin 3], [-sin 3, cos 3]] acting on (sin, cos).
    c, s = np.cos(3.0), np.sin(3.0)
    np.testing.assert_allclose(matrix[:2, :2].numpy(), [[c, s], [-s, c]], atol=1e-15)


# --------------------------------------------------------------------------- one_hot_encoding


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_one_hot_rows_are_orthonormal_basis_vectors(data):
    max_len = data.draw(st.integers(1, 40))
    seq_len = data.draw(st.integers(1, max_len))
    codes = one_hot_encoding(seq_len, max_len)
    assert codes.shape == (seq_len, max_len)
    torch.testing.assert_close(codes @ codes.T, torch.eye(seq_len))
    for i in range(seq_len):
        assert codes[i, i] == 1 and codes[i].sum() == 1


def test_one_hot_refuses_more_positions_than_width():
    with pytest.raises(ValueError, match="max_len"):
        one_hot_encoding(6, 5)


@pytest.mark.parametrize(("args", "name"), [((0, 5), "seq_len"), ((1, 0), "max_len"), ((-1, 3), "seq_len")])
def test_one_hot_rejects_lengths_below_one(args, name):
    with pytest.raises(ValueError, match=name):
        one_hot_encoding(*args)


# --------------------------------------------------------------------------- SinusoidalPositionalEncoding


@SETTINGS
@given(lead=leading_shapes, seq_len=st.integers(1, 20), dim=even_dims, seed=seeds)
def test_sinusoidal_module_adds_exactly_the_table(lead, seq_len, dim, seed):
    module = SinusoidalPositionalEncoding(dim, initial_len=8)
    x = randn(*lead, seq_len, dim, seed=seed, dtype=torch.float32)
    out = module(x)
    assert out.shape == x.shape and out.dtype == x.dtype
    assert torch.equal(out, x + sinusoidal_encoding(seq_len, dim))
    assert torch.equal(module(torch.zeros(seq_len, dim)), sinusoidal_encoding(seq_len, dim))


def test_sinusoidal_module_with_explicit_positions():
    module = SinusoidalPositionalEncoding(8)
    positions = torch.tensor([7, 0, 3, 3])
    out = module(torch.zeros(2, 4, 8), positions)
    expected = torch.from_numpy(numpy_sinusoids([7, 0, 3, 3], 8)).float()
    torch.testing.assert_close(out, expected.expand(2, 4, 8), rtol=0, atol=1e-7)


def test_sinusoidal_module_grows_its_cache_and_keeps_it_out_of_state_dict():
    module = SinusoidalPositionalEncoding(6, initial_len=4)
    assert module.table.shape == (4, 6)
    assert "table" not in module.state_dict() and len(module.state_dict()) == 0
    out = module(torch.zeros(10, 6))
    assert module.table.shape[0] >= 10
    torch.testing.assert_close(out, sinusoidal_encoding(10, 6), rtol=0, atol=0)
    out = module(torch.zeros(3, 6), torch.tensor([0, 50, 99]))
    assert module.table.shape[0] >= 100
    torch.testing.assert_close(out, sinusoidal_encoding(100, 6)[[0, 50, 99]], rtol=0, atol=0)
    # Still a (non-persistent) buffer after growing: it moves with the module, is not saved.
    assert "table" in dict(module.named_buffers())
    assert "table" not in module.state_dict()


# --------------------------------------------------------------------------- LearnedPositionalEmbedding


def test_learned_embedding_adds_its_table_rows():
    module = LearnedPositionalEmbedding(10, 4)
    x = randn(3, 6, 4, seed=1, dtype=torch.float32)
    out = module(x)
    torch.testing.assert_close(out - x, module.embedding.weight[:6].detach().expand(3, 6, 4))
    positions = torch.tensor([9, 0, 9, 2, 5, 1])
    out = module(x, positions)
    torch.testing.assert_close(out - x, module.embedding.weight[positions].detach().expand(3, 6, 4))


def test_learned_embedding_refuses_positions_beyond_max_len():
    module = LearnedPositionalEmbedding(5, 4)
    module(torch.zeros(5, 4))  # positions 0..4 are fine
    with pytest.raises(ValueError, match="max_len"):
        module(torch.zeros(6, 4))
    with pytest.raises(ValueError, match="max_len"):
        module(torch.zeros(2, 4), torch.tensor([0, 5]))


def test_learned_embedding_refuses_negative_and_float_positions():
    module = LearnedPositionalEmbedding(5, 4)
    with pytest.raises(ValueError, match="positions"):
        module(torch.zeros(2, 4), torch.tensor([0, -1]))
    with pytest.raises(TypeError, match="positions"):
        module(torch.zeros(2, 4), torch.tensor([0.0, 1.0]))


def test_learned_embedding_is_trainable():
    module = LearnedPositionalEmbedding(8, 3)
    assert module.embedding.weight.requires_grad
    assert "embedding.weight" in module.state_dict()
    out = module(torch.zeros(2, 4, 3), torch.tensor([1, 1, 6, 0]))
    out.sum().backward()
    # d(sum)/dE[p] = (number of times p is used) * (batch size 2), for every coordinate.
    counts = torch.tensor([1.0, 2.0, 0, 0, 0, 0, 1.0, 0]) * 2
    torch.testing.assert_close(module.embedding.weight.grad, counts[:, None].expand(8, 3))


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("dim", [3, 7, 0, -2])
def test_sinusoidal_rejects_odd_or_non_positive_dim(dim):
    with pytest.raises(ValueError, match="dim"):
        sinusoidal_encoding(4, dim)
    with pytest.raises(ValueError, match="dim"):
        sinusoidal_offset_matrix(1, dim)
    with pytest.raises(ValueError, match="dim"):
        SinusoidalPositionalEncoding(dim)


@pytest.mark.parametrize("base", [0.0, -10.0, float("inf"), float("nan")])
def test_sinusoidal_rejects_bad_base(base):
    with pytest.raises(ValueError, match="base"):
        sinusoidal_encoding(4, 4, base)
    with pytest.raises(ValueError, match="base"):
        sinusoidal_offset_matrix(1, 4, base)
    with pytest.raises(ValueError, match="base"):
        SinusoidalPositionalEncoding(4, base=base)


def test_sinusoidal_rejects_bad_lengths_and_types():
    with pytest.raises(ValueError, match="seq_len"):
        sinusoidal_encoding(0, 4)
    with pytest.raises(TypeError, match="seq_len"):
        sinusoidal_encoding(2.5, 4)
    with pytest.raises(ValueError, match="initial_len"):
        SinusoidalPositionalEncoding(4, initial_len=0)
    with pytest.raises(TypeError, match="offset"):
        sinusoidal_offset_matrix("1", 4)
    with pytest.raises(TypeError, match="base"):
        sinusoidal_encoding(2, 4, "10000")


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding(4), LearnedPositionalEmbedding(8, 4)])
def test_modules_reject_bad_positions_and_inputs(module):
    x = torch.zeros(3, 4)
    with pytest.raises(ValueError, match="positions"):
        module(x, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="positions"):
        module(x, torch.tensor([[0, 1, 2]]))
    with pytest.raises(TypeError, match="positions"):
        module(x, [0, 1, 2])
    with pytest.raises(ValueError, match="dim"):
        module(torch.zeros(3, 6))
    with pytest.raises(TypeError, match="x"):
        module(torch.zeros(3, 4, dtype=torch.long))


@pytest.mark.parametrize(("args", "name"), [((0, 4), "max_len"), ((-3, 4), "max_len"), ((4, 0), "dim")])
def test_learned_embedding_rejects_bad_sizes(args, name):
    with pytest.raises(ValueError, match=name):
        LearnedPositionalEmbedding(*args)


@pytest.mark.parametrize("k", [0.1, 1.188106889069978, -2.7, 2**24 + 1, 123456789])
def test_offset_matrix_uses_the_exact_offset(k):
    # Regression: the offset used to be stored in a float32 tensor before the float64 angle was
    # formed, so 0.1 became 0.100000001490116... and 2**24 + 1 became 2**24.
    matrix = sinusoidal_offset_matrix(k, 4, dtype=torch.float64)
    c0, s0 = np.cos(k), np.sin(k)  # frequency 1
    c1, s1 = np.cos(k / 100.0), np.sin(k / 100.0)  # frequency 10000^(-2/4)
    expected = np.array([[c0, s0, 0, 0], [-s0, c0, 0, 0], [0, 0, c1, s1], [0, 0, -s1, c1]])
    np.testing.assert_allclose(matrix.numpy(), expected, rtol=0, atol=1e-14 * max(1.0, abs(k)))


def test_sinusoidal_rows_extend_the_table_to_negative_positions():
    """Rows of non-negative positions are the table's; sin is odd and cos even in the position."""
    positions = torch.tensor([[0, 5, 11], [3, 3, 40]])
    table = sinusoidal_encoding(41, 16, base=500.0, dtype=torch.float64)
    rows = sinusoidal_rows(positions, 16, base=500.0, dtype=torch.float64)
    assert rows.shape == (2, 3, 16) and torch.equal(rows, table[positions])
    mirrored = sinusoidal_rows(-positions, 16, base=500.0, dtype=torch.float64)
    torch.testing.assert_close(mirrored[..., 0::2], -rows[..., 0::2], rtol=0, atol=1e-15)
    torch.testing.assert_close(mirrored[..., 1::2], rows[..., 1::2], rtol=0, atol=1e-15)
    expected = torch.from_numpy(numpy_sinusoids([-7, -1, 0, 12], 8)).float()
    torch.testing.assert_close(sinusoidal_rows(torch.tensor([-7, -1, 0, 12]), 8), expected, rtol=0, atol=1e-7)


@pytest.mark.parametrize(
    ("positions", "dim", "error"),
    [([1, 2], 8, TypeError), (torch.tensor([1.0]), 8, TypeError), (torch.tensor([1]), 7, ValueError)],
)
def test_sinusoidal_rows_rejects_bad_arguments(positions, dim, error):
    with pytest.raises(error):
        sinusoidal_rows(positions, dim)
