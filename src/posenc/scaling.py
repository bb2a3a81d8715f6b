r"""Stretching RoPE to a longer context: one small function per scaling rule.

Shape legend:
    - ``d``: rotated dimension (the head dimension); always even
    - ``d/2``: number of rotation pairs, indexed by :math:`\ell = 0, \dots, d/2 - 1`

A model trained with RoPE at length :math:`L` has seen, in pair :math:`\ell`, only the angles
:math:`m\theta_\ell` with :math:`0 \le m < L` and :math:`\theta_\ell = b^{-2\ell/d}`. Every rule
below replaces the frequencies :math:`\theta_\ell` by new ones :math:`\theta'_\ell` so that a
longer context :math:`L' = sL` (:math:`s` the scale ``factor``) looks, to the trained weights,
more like the contexts they know. The functions return the new frequencies as a ``(d/2,)``
float64 tensor, to be used in place of :func:`posenc.rotary.rope_frequencies`:

- :func:`pi_frequencies`: position interpolation (Chen et al. 2023),
  :math:`\theta'_\ell = \theta_\ell / s`;
- :func:`ntk_frequencies`: NTK-aware base change, :math:`b' = b\,s^{d/(d-2)}`;
- :func:`dynamic_ntk_frequencies`: NTK with a scale that follows the current length;
- :func:`yarn_frequencies`: NTK-by-parts with YaRN's attention temperature (Peng et al. 2023);
- :func:`llama3_frequencies`: the ``llama3`` rule of Llama 3.1.

Two helpers measure and check them: :func:`full_turns` counts the pairs that complete a turn
within a context (:math:`K_L`, chapter 7), and :func:`transformers_rope` asks the installed
``transformers`` for the frequencies of a ``rope_parameters`` mapping, the reference the book
and the tests compare against.

Each function reproduces the ``rope_type`` of the same name in Hugging Face ``transformers``
(``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS``: ``linear``, ``dynamic``, ``yarn``,
``llama3``; the static NTK base change is ``dynamic`` with ``factor=1`` at the length :math:`sL`),
in float64 instead of float32; the tests of the package check the agreement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import torch

from . import _angles
from ._validation import check_even, check_int, check_positive_float, check_tensor

__all__ = [
    "TransformersRope",
    "dynamic_ntk_frequencies",
    "full_turns",
    "llama3_frequencies",
    "ntk_frequencies",
    "pi_frequencies",
    "transformers_rope",
    "yarn_frequencies",
]


def _ntk_exponent(dim: int) -> float:
    """Return ``d / (d - 2)`` after checking that a base change can act on ``dim``."""
    dim = check_even("dim", dim)
    if dim < 4:
        raise ValueError(
            "an NTK base change needs dim >= 4: with a single pair theta_0 = 1 does not depend on "
            f"the base and the exponent d/(d-2) is undefined, got dim={dim}"
        )
    return dim / (dim - 2)


def pi_frequencies(dim: int, base: float = 10000.0, *, factor: float) -> torch.Tensor:
    r"""Position interpolation: every frequency divided by the scale factor.

    :math:`\theta'_\ell = \theta_\ell / s`, so the angle of position :math:`m` is
    :math:`(m/s)\,\theta_\ell`: position :math:`m` of the long context is given the angles of
    position :math:`m/s`, and every angle of a context of length :math:`sL` stays inside the
    range the model saw at length :math:`L` (``rope_type="linear"`` in ``transformers``).

    Args:
        dim: rotated dimension ``d``; must be even.
        base: frequency base ``b`` (> 0).
        factor: scale factor ``s`` (finite, > 0); ``s = L'/L`` stretches length ``L`` to ``L'``.

    Returns:
        ``(d/2,)`` float64 tensor :math:`b^{-2\ell/d}/s`.

    Raises:
        TypeError: if ``dim`` is not an integer or ``base``/``factor`` is not a real number.
        ValueError: if ``dim`` is not a positive even integer, or ``base`` or ``factor`` is
            not a finite number > 0.
    """
    factor = check_positive_float("factor", factor)
    return _angles.frequencies(dim, base) / factor


def ntk_frequencies(dim: int, base: float = 10000.0, *, factor: float) -> torch.Tensor:
    r"""NTK-aware scaling: the frequencies of the larger base :math:`b' = b\,s^{d/(d-2)}`.

    The exponent is chosen so that the fastest pair keeps its frequency
    (:math:`\theta'_0 = \theta_0 = 1`) while the slowest one is slowed by exactly :math:`s`
    (:math:`\theta'_{d/2-1} = \theta_{d/2-1}/s`); the pairs in between are slowed by
    :math:`s^{2\ell/(d-2)}`, a factor that grows geometrically with :math:`\ell`.

    Args:
        dim: rotated dimension ``d``; must be even and >= 4.
        base: frequency base ``b`` (> 0).
        factor: scale factor ``s`` (finite, > 0).

    Returns:
        ``(d/2,)`` float64 tensor :math:`b'^{-2\ell/d}`.

    Raises:
        TypeError: if ``dim`` is not an integer or ``base``/``factor`` is not a real number.
        ValueError: if ``dim`` is not an even integer >= 4, or ``base`` or ``factor`` is not a
            finite number > 0.
    """
    exponent = _ntk_exponent(dim)
    base = check_positive_float("base", base)
    factor = check_positive_float("factor", factor)
    return _angles.frequencies(dim, base * factor**exponent)


def dynamic_ntk_frequencies(
    dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_position: int,
    seq_len: int,
) -> torch.Tensor:
    r"""Dynamic NTK: an NTK base change whose scale follows the current sequence length.

    With :math:`n` = ``seq_len`` and :math:`L` = ``original_max_position``, the rule of
    ``transformers``' ``dynamic`` type uses the effective scale
    :math:`s_n = s\,n/L - (s - 1)` and the base :math:`b\,s_n^{d/(d-2)}`. While
    :math:`n \le L` the frequencies are the original ones (:math:`n` is raised to :math:`L`);
    beyond, the scale :math:`1 + s\,(n/L - 1)` grows linearly with slope :math:`s/L`, so
    ``factor`` is a slope rather than a target: the scale is :math:`s + 1` at :math:`n = 2L`
    and :math:`s^2 - s + 1` at :math:`n = sL`. In ``transformers`` :math:`L` is the config's
    ``max_position_embeddings``.

    Because the frequencies change with ``seq_len``, keys cached under one length and queries
    rotated under another do not share a base: the scores then lose the relativity of RoPE.

    Args:
        dim: rotated dimension ``d``; must be even and >= 4.
        base: frequency base ``b`` (> 0).
        factor: scale factor ``s`` (finite, > 0).
        original_max_position: training length ``L`` (integer >= 1).
        seq_len: current sequence length ``n`` (integer >= 1), the largest position + 1.

    Returns:
        ``(d/2,)`` float64 tensor; equal to ``rope_frequencies(dim, base)`` when
        ``seq_len <= original_max_position``.

    Raises:
        TypeError: if ``dim``, ``original_max_position`` or ``seq_len`` is not an integer, or
            ``base``/``factor`` is not a real number.
        ValueError: if ``dim`` is not an even integer >= 4, ``base`` or ``factor`` is not a
            finite number > 0, or a length is < 1.
    """
    exponent = _ntk_exponent(dim)
    base = check_positive_float("base", base)
    factor = check_positive_float("factor", factor)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    length = max(seq_len, original_max_position)
    effective_scale = factor * length / original_max_position - (factor - 1.0)
    return _angles.frequencies(dim, base * effective_scale**exponent)


def _yarn_attention_factor(factor: float) -> float:
    r"""YaRN's :math:`\sqrt{1/t} = 0.1 \ln s + 1` for :math:`s > 1`, and 1 otherwise."""
    return 0.1 * math.log(factor) + 1.0 if factor > 1.0 else 1.0


def _yarn_ramp_bounds(
    dim: int, base: float, original_max_position: int, beta_fast: float, beta_slow: float
) -> tuple[float, float]:
    """Pair indices where ``L / lambda_l`` equals ``beta_fast`` and ``beta_slow`` (floored/ceiled)."""

    def pair_index(rotations: float) -> float:
        # L / lambda_l = rotations  <=>  l = d ln(L / (2 pi rotations)) / (2 ln b)
        return dim * math.log(original_max_position / (2 * math.pi * rotations)) / (2 * math.log(base))

    low = math.floor(pair_index(beta_fast))
    high = math.ceil(pair_index(beta_slow))
    return max(low, 0), min(high, dim - 1)


def yarn_frequencies(
    dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_position: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> tuple[torch.Tensor, float]:
    r"""YaRN: NTK-by-parts frequencies and the attention factor of its temperature.

    Pair :math:`\ell` completes :math:`r_\ell = L/\lambda_\ell` turns over the training length
    :math:`L`. Pairs that turn often (:math:`r_\ell \ge \beta_\text{fast}`) are left alone,
    pairs that turn less than :math:`\beta_\text{slow}` times are interpolated
    (:math:`\theta_\ell/s`), and a linear ramp :math:`\gamma_\ell \in [0, 1]` blends the two in
    between: :math:`\theta'_\ell = \gamma_\ell\,\theta_\ell + (1 - \gamma_\ell)\,\theta_\ell/s`.
    As in ``transformers`` and the authors' code, the ramp is linear in the pair index
    :math:`\ell`, between the index where :math:`r_\ell = \beta_\text{fast}` (rounded down) and
    the one where :math:`r_\ell = \beta_\text{slow}` (rounded up); ``truncate=True`` in
    ``transformers``.

    The attention factor :math:`\sqrt{1/t} = 0.1 \ln s + 1` (1 for :math:`s \le 1`) multiplies
    both cos and sin, hence queries *and* keys, so the logits are multiplied by its square
    :math:`1/t`.

    Args:
        dim: rotated dimension ``d``; must be even.
        base: frequency base ``b`` (> 0; a base of exactly 1 is refused, since its pairs never turn).
        factor: scale factor ``s`` (finite, > 0).
        original_max_position: training length ``L`` (integer >= 1).
        beta_fast: number of turns over ``L`` above which a pair is kept (finite, > 0).
        beta_slow: number of turns over ``L`` below which a pair is interpolated
            (finite, > 0, < ``beta_fast``).

    Returns:
        ``(frequencies, attention_factor)``: a ``(d/2,)`` float64 tensor and a float.

    Raises:
        TypeError: if ``dim`` or ``original_max_position`` is not an integer, or another
            argument is not a real number.
        ValueError: if ``dim`` is not a positive even integer, ``base``, ``factor`` or a beta
            is not a finite number > 0, ``base == 1``, ``original_max_position < 1`` or
            ``beta_fast <= beta_slow``.
    """
    theta = _angles.frequencies(dim, base)
    base = float(base)
    if base == 1.0:
        raise ValueError("base must differ from 1 for YaRN: with base 1 every pair has frequency 1")
    factor = check_positive_float("factor", factor)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    beta_fast = check_positive_float("beta_fast", beta_fast)
    beta_slow = check_positive_float("beta_slow", beta_slow)
    if beta_fast <= beta_slow:
        raise ValueError(
            "beta_fast must be larger than beta_slow (pairs turning more than beta_fast times are "
            f"kept, fewer than beta_slow times interpolated), got beta_fast={beta_fast}, "
            f"beta_slow={beta_slow}"
        )
    low, high = _yarn_ramp_bounds(dim, base, original_max_position, beta_fast, beta_slow)
    if low == high:
        high += 0.001  # a ramp of zero width: a step, as in transformers
    index = torch.arange(dim // 2, dtype=torch.float64)
    interpolated_share = ((index - low) / (high - low)).clamp(0.0, 1.0)
    frequencies = theta * (1.0 - interpolated_share) + (theta / factor) * interpolated_share
    return frequencies, _yarn_attention_factor(factor)


def llama3_frequencies(
    dim: int,
    base: float = 500000.0,
    *,
    factor: float = 8.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    original_max_position: int = 8192,
) -> torch.Tensor:
    r"""Llama 3.1's ``llama3`` rule: NTK-by-parts written with wavelengths.

    With :math:`\lambda_\ell = 2\pi/\theta_\ell` and :math:`L` = ``original_max_position``:
    pairs with :math:`\lambda_\ell < L/\text{high\_freq\_factor}` keep :math:`\theta_\ell`,
    pairs with :math:`\lambda_\ell > L/\text{low\_freq\_factor}` get :math:`\theta_\ell/s`, and in
    between :math:`\theta'_\ell = \gamma_\ell\theta_\ell + (1-\gamma_\ell)\theta_\ell/s` with
    :math:`\gamma_\ell = (L/\lambda_\ell - \text{low\_freq\_factor}) /
    (\text{high\_freq\_factor} - \text{low\_freq\_factor})`, linear in the number of turns
    :math:`L/\lambda_\ell`. The defaults are those of Llama 3.1 (base 500000, factor 8, factors
    1 and 4, original context 8192); the rule is applied at every length, short or long.

    Args:
        dim: rotated dimension ``d``; must be even.
        base: frequency base ``b`` (> 0).
        factor: scale factor ``s`` (finite, > 0).
        low_freq_factor: turns over ``L`` below which a pair is fully interpolated (finite, > 0).
        high_freq_factor: turns over ``L`` above which a pair is kept (finite, > ``low_freq_factor``).
        original_max_position: training length ``L`` (integer >= 1).

    Returns:
        ``(d/2,)`` float64 tensor.

    Raises:
        TypeError: if ``dim`` or ``original_max_position`` is not an integer, or another
            argument is not a real number.
        ValueError: if ``dim`` is not a positive even integer, ``base``, ``factor`` or a
            frequency factor is not a finite number > 0, ``original_max_position < 1`` or
            ``high_freq_factor <= low_freq_factor``.
    """
    theta = _angles.frequencies(dim, base)
    factor = check_positive_float("factor", factor)
    low_freq_factor = check_positive_float("low_freq_factor", low_freq_factor)
    high_freq_factor = check_positive_float("high_freq_factor", high_freq_factor)
    original_max_position = check_int("original_max_position", original_max_position, minimum=1)
    if high_freq_factor <= low_freq_factor:
        raise ValueError(
            "high_freq_factor must be larger than low_freq_factor (the band of blended pairs runs "
            f"from L/high_freq_factor to L/low_freq_factor), got high_freq_factor={high_freq_factor}, "
            f"low_freq_factor={low_freq_factor}"
        )
    turns = original_max_position * theta / (2 * math.pi)  # L / lambda_l
    kept_share = ((turns - low_freq_factor) / (high_freq_factor - low_freq_factor)).clamp(0.0, 1.0)
    return theta * kept_share + (theta / factor) * (1.0 - kept_share)


# --------------------------------------------------------------------------- measuring and checking


def full_turns(frequencies: torch.Tensor, context: int) -> tuple[int, float]:
    r"""How many pairs complete a full turn within a context, and the slowest wavelength.

    A pair whose wavelength :math:`\lambda_\ell = 2\pi/\theta_\ell` is at most ``context - 1``
    (the largest offset in the context) has met every angle during training; the others have
    seen only an arc. For the frequencies of :func:`posenc.rotary.rope_frequencies` these are
    the first :math:`K_L` pairs (chapter 7 derives :math:`K_L` in closed form).

    Args:
        frequencies: ``(d/2,)`` frequencies :math:`\theta_\ell > 0`.
        context: number of positions (integer >= 2).

    Returns:
        ``(count, slowest)``: the number of pairs with :math:`\lambda_\ell \le` ``context - 1``
        and the largest wavelength, in tokens.

    Raises:
        TypeError: if ``frequencies`` is not a tensor or ``context`` not an integer.
        ValueError: if ``frequencies`` is not one-dimensional, empty, or has an entry that is
            not a finite number > 0, or if ``context < 2``.
    """
    frequencies = check_tensor("frequencies", frequencies, min_dim=1)
    if frequencies.dim() != 1 or frequencies.numel() == 0:
        raise ValueError(f"frequencies must be a non-empty (d/2,) tensor, got shape {tuple(frequencies.shape)}")
    if not (torch.isfinite(frequencies) & (frequencies > 0)).all():
        raise ValueError("every frequency must be a finite number > 0")
    context = check_int("context", context, minimum=2)
    wavelengths = 2 * math.pi / frequencies.double()
    return int((wavelengths <= context - 1).sum()), float(wavelengths.max())


class TransformersRope(NamedTuple):
    """What :func:`transformers_rope` returns.

    Attributes:
        frequencies: ``(d/2,)`` float64 copy of the float32 frequencies (``inv_freq``).
        attention_factor: the factor ``transformers`` multiplies cos and sin by (1 for most rules).
        config: the ``LlamaConfig`` built, e.g. for ``LlamaRotaryEmbedding(config)``.
    """

    frequencies: torch.Tensor
    attention_factor: float
    config: Any


def transformers_rope(
    rope_parameters: Mapping[str, Any], *, dim: int, max_positions: int = 4096, **kwargs: Any
) -> TransformersRope:
    """The frequencies the installed ``transformers`` computes for ``rope_parameters``.

    Builds a one-layer ``LlamaConfig`` in memory (head dimension ``dim``, nothing downloaded)
    with these ``rope_parameters`` and calls the function that Llama models call:
    ``ROPE_INIT_FUNCTIONS[rope_type]``, or ``LlamaRotaryEmbedding``'s default for ``"default"``.
    ``transformers`` is imported here, not with the package.

    Args:
        rope_parameters: a ``rope_parameters`` mapping as in a model's ``config.json``, with
            ``"rope_type"`` (``"default"``, ``"linear"``, ``"dynamic"``, ``"yarn"``,
            ``"llama3"``, ...) and that rule's keys; ``"rope_theta"`` defaults to 10000.
        dim: head dimension ``d``; must be even.
        max_positions: the config's ``max_position_embeddings`` (integer >= 1).
        **kwargs: passed to the rule's function (``seq_len`` for ``"dynamic"``).

    Returns:
        A :class:`TransformersRope`: frequencies, attention factor and the config.

    Raises:
        TypeError: if ``rope_parameters`` is not a mapping, ``dim`` or ``max_positions`` not an
            integer.
        ValueError: if ``"rope_type"`` is missing or not one ``transformers`` knows, ``dim`` is
            not even and positive, or ``max_positions < 1``.
    """
    import transformers
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.llama import modeling_llama

    if not isinstance(rope_parameters, Mapping):
        raise TypeError(f"rope_parameters must be a mapping, got {type(rope_parameters).__name__}")
    kind = rope_parameters.get("rope_type")
    known = sorted({"default", *ROPE_INIT_FUNCTIONS})
    if kind not in known:
        raise ValueError(f"rope_parameters['rope_type'] must be one of {known}, got {kind!r}")
    dim = check_even("dim", dim)
    max_positions = check_int("max_positions", max_positions, minimum=1)
    config = transformers.LlamaConfig(
        hidden_size=2 * dim, num_attention_heads=2, head_dim=dim, num_hidden_layers=1,
        max_position_embeddings=max_positions, rope_parameters=dict(rope_parameters),
    )
    if kind == "default":
        frequencies, factor = modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        frequencies, factor = ROPE_INIT_FUNCTIONS[kind](config, None, **kwargs)
    return TransformersRope(frequencies.double(), float(factor), config)
