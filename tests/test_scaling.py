"""RoPE scaling rules, checked against the code real models load and against their defining properties.

The oracle is ``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS`` (the pinned version of the
environment), called through :func:`posenc.transformers_rope` on tiny ``LlamaConfig`` objects built
in memory: no weights are downloaded.
``transformers`` computes in float32 and ``posenc`` in float64, hence the relative tolerance.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from transformers.models.llama import modeling_llama

from posenc import (
    apply_rope,
    dynamic_ntk_frequencies,
    full_turns,
    llama3_frequencies,
    ntk_frequencies,
    pi_frequencies,
    rope_frequencies,
    transformers_rope,
    yarn_frequencies,
)

DIMS = (4, 8, 16, 64, 128)
BASES = (100.0, 10000.0, 500000.0)
FACTORS = (1.0, 2.0, 4.0, 8.0, 2.5)
#: float32 (transformers) against float64 (posenc): powers of b of magnitude up to b^1 lose ~1e-6
F32 = {"rtol": 2e-6, "atol": 0.0}


def hf_frequencies(rope_type: str, dim: int, rope_parameters: dict, **kwargs) -> tuple[torch.Tensor, float]:
    """Frequencies and attention factor of ``transformers`` for a one-layer Llama config."""
    max_position = kwargs.pop("max_position_embeddings", 4096)
    reference = transformers_rope(
        {"rope_type": rope_type, **rope_parameters}, dim=dim, max_positions=max_position, **kwargs
    )
    return reference.frequencies, reference.attention_factor


def close_to_hf(ours: torch.Tensor, theirs: torch.Tensor) -> None:
    assert ours.dtype == torch.float64
    assert ours.shape == theirs.shape
    torch.testing.assert_close(ours, theirs.to(torch.float64), **F32)


# --------------------------------------------------------------------------- agreement with transformers


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, FACTORS)))
def test_pi_matches_transformers_linear(dim, base, factor):
    theirs, attention = hf_frequencies("linear", dim, {"rope_theta": base, "factor": factor})
    close_to_hf(pi_frequencies(dim, base, factor=factor), theirs)
    assert attention == 1.0


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, FACTORS)))
@pytest.mark.parametrize("seq_len", [1, 700, 1000, 1001, 2500, 8000])
def test_dynamic_ntk_matches_transformers_dynamic(dim, base, factor, seq_len):
    # transformers' dynamic type reads the training length from max_position_embeddings
    theirs, attention = hf_frequencies(
        "dynamic", dim, {"rope_theta": base, "factor": factor}, max_position_embeddings=1000, seq_len=seq_len
    )
    ours = dynamic_ntk_frequencies(dim, base, factor=factor, original_max_position=1000, seq_len=seq_len)
    close_to_hf(ours, theirs)
    assert attention == 1.0


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, (2.0, 4.0, 8.0, 2.5))))
def test_ntk_matches_transformers_dynamic_at_the_target_length(dim, base, factor):
    # with factor 1, transformers' dynamic rule uses the scale seq_len / max_position_embeddings
    theirs, _ = hf_frequencies(
        "dynamic", dim, {"rope_theta": base, "factor": 1.0}, max_position_embeddings=1000, seq_len=int(1000 * factor)
    )
    close_to_hf(ntk_frequencies(dim, base, factor=factor), theirs)


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, FACTORS)))
@pytest.mark.parametrize(
    ("original", "beta_fast", "beta_slow"), [(256, 32.0, 1.0), (4096, 32.0, 1.0), (2048, 16.0, 2.0)]
)
def test_yarn_matches_transformers_yarn(dim, base, factor, original, beta_fast, beta_slow):
    parameters = {
        "rope_theta": base,
        "factor": factor,
        "original_max_position_embeddings": original,
        "beta_fast": beta_fast,
        "beta_slow": beta_slow,
    }
    theirs, their_attention = hf_frequencies(
        "yarn", dim, parameters, max_position_embeddings=int(original * factor)
    )
    ours, attention = yarn_frequencies(
        dim, base, factor=factor, original_max_position=original, beta_fast=beta_fast, beta_slow=beta_slow
    )
    close_to_hf(ours, theirs)
    assert attention == pytest.approx(their_attention, rel=1e-15)


def test_yarn_defaults_are_those_of_transformers():
    theirs, their_attention = hf_frequencies(
        "yarn",
        64,
        {"rope_theta": 10000.0, "factor": 16.0, "original_max_position_embeddings": 4096},
        max_position_embeddings=65536,
    )
    ours, attention = yarn_frequencies(64, 10000.0, factor=16.0, original_max_position=4096)
    close_to_hf(ours, theirs)
    assert attention == pytest.approx(their_attention, rel=1e-15)


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, FACTORS)))
@pytest.mark.parametrize(("low", "high", "original"), [(1.0, 4.0, 8192), (1.0, 4.0, 512), (2.0, 8.0, 4096)])
def test_llama3_matches_transformers_llama3(dim, base, factor, low, high, original):
    parameters = {
        "rope_theta": base,
        "factor": factor,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": original,
    }
    theirs, attention = hf_frequencies(
        "llama3", dim, parameters, max_position_embeddings=int(original * max(factor, 2.0))
    )
    ours = llama3_frequencies(
        dim, base, factor=factor, low_freq_factor=low, high_freq_factor=high, original_max_position=original
    )
    close_to_hf(ours, theirs)
    assert attention == 1.0


def test_llama3_defaults_are_llama_3_1():
    """The defaults reproduce Llama 3.1's published rope_scaling (head dim 128, 128K context)."""
    parameters = {
        "rope_theta": 500000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    theirs, _ = hf_frequencies("llama3", 128, parameters, max_position_embeddings=131072)
    ours = llama3_frequencies(128)
    close_to_hf(ours, theirs)
    wavelengths = 2 * math.pi / ours
    # the numbers chapter 7 quotes for Llama 3.1 at 128K
    assert int((wavelengths <= 131072).sum()) == 39
    assert wavelengths[-1].item() == pytest.approx(2.05e7, rel=5e-3)


# --------------------------------------------------------------------------- defining properties


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, (2.0, 4.0, 16.0))))
def test_pi_keeps_every_angle_of_the_long_context_in_the_trained_range(dim, base, factor):
    length = 64
    theta = rope_frequencies(dim, base)
    long_positions = torch.arange(int(factor * length), dtype=torch.float64)
    angles = long_positions[:, None] * pi_frequencies(dim, base, factor=factor)
    # the interpolated positions m / s lie in [0, L): the angles in [0, L theta_l)
    assert bool((angles >= 0).all())
    assert bool((angles < length * theta).all())
    # without interpolation the same positions reach (sL - 1) theta_l, far outside
    assert bool((long_positions[-1] * theta >= (factor * length - 1) * theta - 1e-9).all())
    # the cost: neighbouring positions are 1/s apart, their angles differ by theta_l / s
    steps = angles.diff(dim=0)
    torch.testing.assert_close(steps, (theta / factor).expand_as(steps), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("factor", [2.0, 8.0, 3.5])
def test_pi_frequencies_are_interpolated_positions(layout, factor):
    """Rotating with theta / s is rotating position m to m / s (the definition of PI)."""
    x = torch.randn(2, 7, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    positions = torch.tensor([0, 1, 5, 100, 4095, 4096, 32767])
    by_frequency = apply_rope(x, positions, layout=layout, frequencies=pi_frequencies(16, factor=factor))
    by_position = apply_rope(x, positions.double() / factor, layout=layout)
    torch.testing.assert_close(by_frequency, by_position, rtol=0.0, atol=1e-12)


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, (1.5, 2.0, 8.0, 64.0))))
def test_ntk_keeps_the_fastest_pair_and_slows_the_slowest_by_exactly_s(dim, base, factor):
    theta = rope_frequencies(dim, base)
    scaled = ntk_frequencies(dim, base, factor=factor)
    assert scaled[0].item() == 1.0 == theta[0].item()
    assert (theta[-1] / scaled[-1]).item() == pytest.approx(factor, rel=1e-12)
    # in between, pair l is slowed by s^(2l / (d - 2)): geometric, from 1 to s
    index = torch.arange(dim // 2, dtype=torch.float64)
    torch.testing.assert_close(theta / scaled, factor ** (2 * index / (dim - 2)), rtol=1e-12, atol=0.0)


@pytest.mark.parametrize(("dim", "base", "factor"), list(itertools.product(DIMS, BASES, (1.0, 2.0, 8.0))))
def test_dynamic_ntk_is_plain_rope_up_to_the_training_length(dim, base, factor):
    for seq_len in (1, 17, 999, 1000):
        ours = dynamic_ntk_frequencies(dim, base, factor=factor, original_max_position=1000, seq_len=seq_len)
        torch.testing.assert_close(ours, rope_frequencies(dim, base), rtol=0.0, atol=0.0)


@pytest.mark.parametrize("dim", [8, 64])
def test_dynamic_ntk_is_ntk_with_the_effective_scale(dim):
    factor, original = 4.0, 1000
    previous = rope_frequencies(dim)
    for seq_len in (1001, 2000, 4000, 8000):
        ours = dynamic_ntk_frequencies(dim, factor=factor, original_max_position=original, seq_len=seq_len)
        effective = factor * seq_len / original - (factor - 1)
        torch.testing.assert_close(ours, ntk_frequencies(dim, factor=effective), rtol=1e-12, atol=0.0)
        # the base only grows with the length: every pair except the first slows down
        assert bool((ours[1:] < previous[1:]).all())
        previous = ours


@pytest.mark.parametrize(("dim", "base"), list(itertools.product((16, 64, 128), (10000.0, 500000.0))))
@pytest.mark.parametrize("factor", [2.0, 4.0, 32.0])
def test_yarn_keeps_fast_pairs_interpolates_slow_ones_and_blends_in_between(dim, base, factor):
    original = 2048
    theta = rope_frequencies(dim, base)
    ours, attention = yarn_frequencies(dim, base, factor=factor, original_max_position=original)
    turns = original * theta / (2 * math.pi)  # r_l = L / lambda_l
    slowdown = theta / ours
    assert bool(((slowdown >= 1 - 1e-12) & (slowdown <= factor * (1 + 1e-12))).all())
    # the ramp is rounded outwards: r >= beta_fast kept, r <= beta_slow interpolated
    torch.testing.assert_close(ours[turns >= 32], theta[turns >= 32], rtol=0.0, atol=0.0)
    torch.testing.assert_close(ours[turns <= 1], theta[turns <= 1] / factor, rtol=1e-15, atol=0.0)
    # frequencies decrease with l and the slow-down never decreases
    assert bool((ours.diff() < 0).all())
    assert bool((slowdown.diff() >= -1e-12).all())
    assert attention == pytest.approx(0.1 * math.log(factor) + 1)


def test_yarn_with_factor_one_is_plain_rope():
    ours, attention = yarn_frequencies(64, factor=1.0, original_max_position=1024)
    torch.testing.assert_close(ours, rope_frequencies(64), rtol=1e-15, atol=0.0)
    assert attention == 1.0


@pytest.mark.parametrize(("dim", "base"), list(itertools.product((16, 64, 128), (10000.0, 500000.0))))
@pytest.mark.parametrize(("factor", "low", "high", "original"), [(8.0, 1.0, 4.0, 8192), (4.0, 2.0, 16.0, 2048)])
def test_llama3_wavelength_bands(dim, base, factor, low, high, original):
    theta = rope_frequencies(dim, base)
    ours = llama3_frequencies(
        dim, base, factor=factor, low_freq_factor=low, high_freq_factor=high, original_max_position=original
    )
    wavelengths = 2 * math.pi / theta
    short = wavelengths < original / high
    long = wavelengths > original / low
    middle = ~short & ~long
    torch.testing.assert_close(ours[short], theta[short], rtol=0.0, atol=0.0)
    torch.testing.assert_close(ours[long], theta[long] / factor, rtol=1e-15, atol=0.0)
    # in the middle band the new frequency is a convex blend, with a weight linear in L / lambda
    weight = (original / wavelengths[middle] - low) / (high - low)
    torch.testing.assert_close(
        ours[middle], weight * theta[middle] + (1 - weight) * theta[middle] / factor, rtol=1e-14, atol=0.0
    )
    assert bool(((ours <= theta) & (ours >= theta / factor * (1 - 1e-15))).all())


def test_every_rule_is_the_identity_at_factor_one():
    dim, base = 32, 10000.0
    theta = rope_frequencies(dim, base)
    for frequencies in (
        pi_frequencies(dim, base, factor=1.0),
        ntk_frequencies(dim, base, factor=1.0),
        dynamic_ntk_frequencies(dim, base, factor=1.0, original_max_position=64, seq_len=64),
        yarn_frequencies(dim, base, factor=1.0, original_max_position=64)[0],
        llama3_frequencies(dim, base, factor=1.0, original_max_position=64),
    ):
        torch.testing.assert_close(frequencies, theta, rtol=1e-15, atol=0.0)


# --------------------------------------------------------------------------- bad input

ALL_RULES = {
    "pi": lambda **kw: pi_frequencies(**{"dim": 8, "factor": 2.0, **kw}),
    "ntk": lambda **kw: ntk_frequencies(**{"dim": 8, "factor": 2.0, **kw}),
    "dynamic": lambda **kw: dynamic_ntk_frequencies(
        **{"dim": 8, "factor": 2.0, "original_max_position": 64, "seq_len": 128, **kw}
    ),
    "yarn": lambda **kw: yarn_frequencies(**{"dim": 8, "factor": 2.0, "original_max_position": 64, **kw}),
    "llama3": lambda **kw: llama3_frequencies(**{"dim": 8, "factor": 2.0, "original_max_position": 64, **kw}),
}
WITH_LENGTH = ("dynamic", "yarn", "llama3")


@pytest.mark.parametrize("rule", ALL_RULES)
@pytest.mark.parametrize("factor", [0.0, -2.0, math.nan, math.inf, -math.inf])
def test_non_positive_or_non_finite_factor_is_refused(rule, factor):
    with pytest.raises(ValueError, match="factor must be a finite number > 0"):
        ALL_RULES[rule](factor=factor)


@pytest.mark.parametrize("rule", ALL_RULES)
@pytest.mark.parametrize("factor", ["2", None, True, torch.tensor([2.0, 3.0])])
def test_factor_of_the_wrong_type_is_refused(rule, factor):
    with pytest.raises(TypeError, match="factor must be a real number"):
        ALL_RULES[rule](factor=factor)


@pytest.mark.parametrize("rule", ALL_RULES)
@pytest.mark.parametrize("dim", [0, 7, -4, 33])
def test_odd_or_non_positive_dim_is_refused(rule, dim):
    with pytest.raises(ValueError, match="dim"):
        ALL_RULES[rule](dim=dim)


@pytest.mark.parametrize("rule", ALL_RULES)
def test_non_integer_dim_is_refused(rule):
    with pytest.raises(TypeError, match="dim must be an integer"):
        ALL_RULES[rule](dim=8.0)


@pytest.mark.parametrize("rule", ["ntk", "dynamic"])
def test_ntk_needs_at_least_two_pairs(rule):
    with pytest.raises(ValueError, match=r"dim >= 4.*d/\(d-2\)"):
        ALL_RULES[rule](dim=2)


@pytest.mark.parametrize("rule", ALL_RULES)
@pytest.mark.parametrize("base", [0.0, -10.0, math.nan, math.inf])
def test_bad_base_is_refused(rule, base):
    with pytest.raises(ValueError, match="base must be a finite number > 0"):
        ALL_RULES[rule](base=base)


@pytest.mark.parametrize("rule", WITH_LENGTH)
@pytest.mark.parametrize("length", [0, -1])
def test_non_positive_original_length_is_refused(rule, length):
    with pytest.raises(ValueError, match="original_max_position must be >= 1"):
        ALL_RULES[rule](original_max_position=length)


@pytest.mark.parametrize("rule", WITH_LENGTH)
@pytest.mark.parametrize("length", [64.0, math.inf, math.nan, "64"])
def test_non_integer_original_length_is_refused(rule, length):
    with pytest.raises(TypeError, match="original_max_position must be an integer"):
        ALL_RULES[rule](original_max_position=length)


@pytest.mark.parametrize("seq_len", [0, -5])
def test_non_positive_seq_len_is_refused(seq_len):
    with pytest.raises(ValueError, match="seq_len must be >= 1"):
        ALL_RULES["dynamic"](seq_len=seq_len)


@pytest.mark.parametrize("seq_len", [128.5, math.inf, None])
def test_non_integer_seq_len_is_refused(seq_len):
    with pytest.raises(TypeError, match="seq_len must be an integer"):
        ALL_RULES["dynamic"](seq_len=seq_len)


@pytest.mark.parametrize(("low", "high"), [(4.0, 4.0), (4.0, 1.0)])
def test_llama3_high_freq_factor_must_exceed_low_freq_factor(low, high):
    with pytest.raises(ValueError, match="high_freq_factor must be larger than low_freq_factor"):
        llama3_frequencies(64, low_freq_factor=low, high_freq_factor=high)


@pytest.mark.parametrize("name", ["low_freq_factor", "high_freq_factor"])
@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf])
def test_llama3_frequency_factors_must_be_positive_and_finite(name, value):
    with pytest.raises(ValueError, match=f"{name} must be a finite number > 0"):
        llama3_frequencies(64, **{name: value})


@pytest.mark.parametrize(("fast", "slow"), [(1.0, 1.0), (1.0, 32.0)])
def test_yarn_beta_fast_must_exceed_beta_slow(fast, slow):
    with pytest.raises(ValueError, match="beta_fast must be larger than beta_slow"):
        yarn_frequencies(64, factor=4.0, original_max_position=1024, beta_fast=fast, beta_slow=slow)


@pytest.mark.parametrize("name", ["beta_fast", "beta_slow"])
@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf])
def test_yarn_betas_must_be_positive_and_finite(name, value):
    with pytest.raises(ValueError, match=f"{name} must be a finite number > 0"):
        yarn_frequencies(64, factor=4.0, original_max_position=1024, **{name: value})


def test_yarn_refuses_base_one():
    with pytest.raises(ValueError, match="base must differ from 1"):
        yarn_frequencies(64, 1.0, factor=4.0, original_max_position=1024)


# --------------------------------------------------------------------------- full_turns and transformers_rope


@pytest.mark.parametrize(("dim", "base"), list(itertools.product(DIMS, BASES)))
@pytest.mark.parametrize("context", [8, 100, 2048, 4096, 131072])
def test_full_turns_counts_the_closed_form_k_l(dim, base, context):
    count, slowest = full_turns(rope_frequencies(dim, base), context)
    log_ratio = math.log((context - 1) / (2 * math.pi)) / math.log(base)
    assert count == min(dim // 2, math.floor(dim / 2 * log_ratio) + 1)
    assert slowest == pytest.approx(2 * math.pi * base ** (1 - 2 / dim), rel=1e-12)


def test_full_turns_counts_any_frequencies_by_their_wavelength():
    frequencies = torch.tensor([math.pi / 2, math.pi / 4, math.pi / 8, 2.0], dtype=torch.float64)
    assert full_turns(frequencies, 9) == (3, 16.0)  # wavelengths 4, 8, π are <= 8; 16 is not
    assert full_turns(frequencies, 8) == (2, 16.0)


@pytest.mark.parametrize(
    ("frequencies", "context", "error", "match"),
    [
        ([1.0], 10, TypeError, "torch.Tensor"),
        (torch.ones(2, 2), 10, ValueError, "d/2"),
        (torch.ones(0), 10, ValueError, "non-empty"),
        (torch.tensor([1.0, 0.0]), 10, ValueError, "> 0"),
        (torch.tensor([1.0, float("nan")]), 10, ValueError, "> 0"),
        (torch.ones(2), 1, ValueError, ">= 2"),
        (torch.ones(2), 10.0, TypeError, "integer"),
    ],
)
def test_full_turns_rejects_bad_input(frequencies, context, error, match):
    with pytest.raises(error, match=match):
        full_turns(frequencies, context)


def test_transformers_rope_is_what_a_llama_rotary_layer_loads():
    parameters = {"rope_type": "yarn", "rope_theta": 5e5, "factor": 4.0, "original_max_position_embeddings": 2048}
    reference = transformers_rope(parameters, dim=64, max_positions=8192)
    layer = modeling_llama.LlamaRotaryEmbedding(reference.config)
    assert torch.equal(layer.inv_freq.double(), reference.frequencies)
    assert layer.attention_scaling == reference.attention_factor == pytest.approx(0.1 * math.log(4.0) + 1)
    default = transformers_rope({"rope_type": "default"}, dim=16)
    close_to_hf(rope_frequencies(16), default.frequencies)
    assert default.attention_factor == 1.0


@pytest.mark.parametrize(
    ("parameters", "dim", "error", "match"),
    [
        ([("rope_type", "linear")], 8, TypeError, "mapping"),
        ({"factor": 2.0}, 8, ValueError, "rope_type"),
        ({"rope_type": "stretchy"}, 8, ValueError, "rope_type"),
        ({"rope_type": "default"}, 7, ValueError, "even"),
    ],
)
def test_transformers_rope_rejects_bad_input(parameters, dim, error, match):
    with pytest.raises(error, match=match):
        transformers_rope(parameters, dim=dim)
