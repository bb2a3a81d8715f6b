"""Checkers of the rotary exercises beyond ``apply_rope`` itself (Part II).

- :func:`~posenc.exercises.check_unrotated_outputs` (ex-ropea-5): RoPER's outputs turned back,
  ``o_i -> R_i^T o_i``;
- :func:`~posenc.exercises.check_linear_rope_attention` (ex-ropea-6): causal linear attention with
  RoPE in the numerator only;
- :func:`~posenc.exercises.check_decode_positions` (ex-ropeb-5): the positions of the tokens of a
  decoding step behind a KV cache;
- :func:`~posenc.exercises.check_streaming_cache` (ex-ropeb-9): a StreamingLLM cache renumbered by
  rotations of cached keys;
- :func:`~posenc.exercises.check_rope_matrix_2d_blocks` (ex-ropeb-10): 2-D RoPE in blocks of four.

Everything uses the interleaved layout (pairs ``(2ℓ, 2ℓ + 1)``) and ``θ_ℓ = b^(-2ℓ/d)``, as the
chapters and :func:`posenc.rotary.apply_rope` do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..rope2d import rope_matrix_2d
from ..rotary import apply_rope
from ._angles import _cache_layout, _positions_text, _positions_used
from ._linear_readings import _linear_property
from ._readings import _decode_steps, _held_keys
from .checking import CheckResult, _close, _public, _runs_text
from .comparing import _Case, _ladder_slip, _Mistake, _simple_checker

__all__ = [
    "check_decode_positions",
    "check_linear_rope_attention",
    "check_rope_matrix_2d_blocks",
    "check_streaming_cache",
    "check_unrotated_outputs",
]


def _rope(x, positions, base=10000.0, layout="interleaved", exponent=2.0):
    dim = x.shape[-1]
    frequencies = base ** (-exponent * torch.arange(dim // 2, dtype=torch.float64) / dim)
    return apply_rope(x, positions, frequencies=frequencies, layout=layout)


# --------------------------------------------------------------------------- ex-ropea-5


def reference_unrotated_outputs(outputs, positions, base=10000.0):
    """Turn output row i back by its own position: R_i^T o_i, which is RoPE at -positions."""
    from posenc import apply_rope

    return apply_rope(outputs, -positions, base=base)


_UNROTATE_MISTAKES = [
    _Mistake("unrotate same way", "you rotated the outputs forward, R_i o_i: turning back is R_i^T = R_(-i), "
             "RoPE at the negated positions",
             lambda o, p, b=10000.0: _rope(o, p, b)),
    _Mistake("unrotate not turned", "your outputs are not turned at all: apply R_i^T (RoPE at -positions) to row i",
             lambda o, p, b=10000.0: o.clone()),
    _Mistake("unrotate half layout", "you paired coordinate ℓ with ℓ + d/2 (the half layout): the chapter's "
             "rotation pairs neighbours (2ℓ, 2ℓ + 1)",
             lambda o, p, b=10000.0: _rope(o, -p, b, layout="half")),
    _Mistake("unrotate base ignored", "your function ignores its base argument",
             lambda o, p, b=10000.0: _rope(o, -p)),
    _Mistake("unrotate exponent", "your frequencies are b^(-ℓ/d): the exponent of pair ℓ is 2ℓ/d",
             lambda o, p, b=10000.0: _rope(o, -p, b, exponent=1.0)),
    _Mistake("unrotate by index", "you turned back by 0, ..., L-1 (the row index, or positions counted from the "
             "first, positions - positions[0]) instead of the given positions",
             lambda o, p, b=10000.0: _rope(o, -torch.arange(o.shape[-2]), b)),
    _Mistake("unrotate float32 angles", "your angles i θ_ℓ are formed in float32: at a position such as 50,000 "
             "float32 keeps about 3 decimals of the angle, and the sine and cosine inherit the error; form the "
             "angles in float64 (positions.double() * theta.double()), then cast the result to the input's dtype",
             lambda o, p, b=10000.0: _float32_rope(o, -p, b), tolerance=3e-2),
]


def _float32_rope(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """RoPE with its angles formed in float32, as ``positions.float()[:, None] * theta.float()`` does."""
    dim = x.shape[-1]
    theta = (base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)).float()
    angles = (positions.float()[:, None] * theta).double()
    cos, sin = angles.cos(), angles.sin()
    even, odd = x.double()[..., 0::2], x.double()[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2).to(x.dtype)


def _unrotate_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    outputs, positions, base = case.args
    transformed = (("twice", -2 * positions), ("by half", -positions / 2), ("in reverse order", -positions.flip(0)))
    for how, wrong in transformed:
        if _close(got, apply_rope(outputs.double(), wrong, base=base), atol=1e-4):
            return (f"you turned the rows back by their positions {how}: row i is turned back by R_i^T, RoPE at "
                    "-positions[i], once")
    for shift in (-2, -1, 1, 2):
        if _close(got, apply_rope(outputs.double(), -(positions + shift), base=base), atol=1e-4):
            return (f"you turned row i back by positions[i] {shift:+d}: turn it back by its own position, R_i^T is "
                    "RoPE at -positions[i]")
    used = _positions_used(got, outputs, base, "interleaved", near=-positions)
    if used is not None and (said := _positions_text(-used, positions, "you turn back")) is not None:
        return said
    dim = outputs.shape[-1]
    for name, part in (("first", slice(0, dim // 2)), ("last", slice(dim // 2, dim))):
        if not _close(got[..., part], expected[..., part], atol=1e-4) and _close(
                got[..., part], outputs.double()[..., part], atol=1e-4):
            return (f"your {name} d/2 coordinates are not turned back, they equal the outputs': R_i^T turns every "
                    "pair of coordinates, all d/2 of them")
    return _ladder_slip(got, outputs.shape[-1], base,
                        lambda theta: apply_rope(outputs.double(), -positions, frequencies=theta))


def _unrotate_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    # The last setting is realistic for a long context: positions near 50,000, where float32 angles are 1e-3 off.
    for heads, length, dim, start, base in [(2, 5, 8, 0, 10000.0), (3, 4, 16, 7, 100.0), (1, 6, 4, 1000, 10000.0),
                                            (2, 4, 32, 50_000, 10000.0)]:
        outputs = torch.randn(heads, length, dim, generator=generator)
        positions = torch.arange(start, start + length)
        cases.append(_Case((outputs, positions, base),
                           f"fn(outputs: ({heads}, {length}, {dim}), "
                           f"positions={start}..{start + length - 1}, base={base:g})"))
    return cases


@_public
def check_unrotated_outputs(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(outputs, positions, base=10000.0)``: every output row ``i`` turned back by ``R_i^T``.

    ``outputs`` has shape ``(..., L, d)``; the answer has the same shape (within 1e-4). One hidden
    setting has positions near 50,000, where angles formed in float32 are visibly off. Named
    mistakes: rotated forward, not turned, the half layout, base ignored, exponent ``ℓ/d``, row
    indices instead of positions, angles formed in float32; otherwise a slip of the frequency ladder.
    """
    return _simple_checker(
        "outputs turned back", fn, _unrotate_cases, reference_unrotated_outputs, _UNROTATE_MISTAKES,
        ["row i is turned back by R_i^T, at shifted positions and other bases too"],
        what="the outputs", atol=1e-4, properties=[_unrotate_property],
    )


# --------------------------------------------------------------------------- ex-ropea-6


def reference_linear_rope_attention(q, k, v, base=10000.0):
    """Causal linear attention, φ = elu + 1, RoPE on φ(q) and φ(k) in the numerator only."""
    from posenc import apply_rope

    phi_q = torch.nn.functional.elu(q) + 1
    phi_k = torch.nn.functional.elu(k) + 1
    numerators = torch.tril(apply_rope(phi_q, base=base) @ apply_rope(phi_k, base=base).transpose(-1, -2))
    denominators = torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True)
    return numerators @ v / denominators


def _linear(q, k, v, base=10000.0, rotate_denominator=False, rotate=True, causal=True, phi_after=False,
            feature=True):
    def phi(x):
        return torch.nn.functional.elu(x) + 1 if feature else x

    q, k, v = q.double(), k.double(), v.double()
    if phi_after:
        rot_q, rot_k = phi(_rope(q, None, base)), phi(_rope(k, None, base))
    elif rotate:
        rot_q, rot_k = _rope(phi(q), None, base), _rope(phi(k), None, base)
    else:
        rot_q, rot_k = phi(q), phi(k)
    mask = torch.tril if causal else (lambda x: x)
    numerators = mask(rot_q @ rot_k.transpose(-1, -2))
    plain = (rot_q @ rot_k.transpose(-1, -2)) if rotate_denominator else (phi(q) @ phi(k).transpose(-1, -2))
    return numerators @ v / mask(plain).sum(-1, keepdim=True)


_LINEAR_MISTAKES = [
    _Mistake("linear values rotated", "you rotated the values too: RoPE turns φ(q) and φ(k) in the numerator's "
             "scores only; the values v are averaged as they are",
             lambda q, k, v, b=10000.0: _linear(q, k, _rope(v.double(), None, b), b)),
    _Mistake("linear rotated denominator", "your denominator is rotated too: the normaliser must stay "
             "unrotated, Σ_j φ(q_i)^T φ(k_j), a sum of positive terms",
             lambda q, k, v, b=10000.0: _linear(q, k, v, b, rotate_denominator=True)),
    _Mistake("linear no rope", "your numerator is not rotated: rotate φ(q_i) by R_i and φ(k_j) by R_j",
             lambda q, k, v, b=10000.0: _linear(q, k, v, b, rotate=False)),
    _Mistake("linear not causal", "your sums run over all keys: causal attention sums over j <= i only "
             "(running sums, or tril of the pair matrix)",
             lambda q, k, v, b=10000.0: _linear(q, k, v, b, causal=False)),
    _Mistake("linear phi after rotation", "you applied the feature map after the rotation, φ(R_i q_i): rotate "
             "the features, R_i φ(q_i), so that the scores depend on offsets only",
             lambda q, k, v, b=10000.0: _linear(q, k, v, b, phi_after=True)),
    _Mistake("linear no feature map", "you used q and k without the feature map φ(x) = elu(x) + 1",
             lambda q, k, v, b=10000.0: _linear(q, k, v, b, feature=False)),
    _Mistake("linear no denominator", "your outputs are not normalised: divide row i by Σ_{j<=i} φ(q_i)^T φ(k_j), "
             "the unrotated sum of the same scores",
             lambda q, k, v, b=10000.0: _linear(q, k, v, b) * _linear_denominators(q, k)),
    _Mistake("linear only keys rotated", "only your keys are rotated: rotate φ(q_i) by R_i too, so that the score "
             "depends on the offset, (R_i φ(q_i))^T (R_j φ(k_j)) = φ(q_i)^T R_(j-i) φ(k_j)",
             lambda q, k, v, b=10000.0: _linear_one_side(q, k, v, b)),
]


def _linear_denominators(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    phi_q, phi_k = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    return torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True)


def _linear_one_side(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, base: float) -> torch.Tensor:
    phi_q, phi_k = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    numerators = torch.tril(phi_q @ _rope(phi_k, None, base).transpose(-1, -2))
    return numerators @ v.double() / _linear_denominators(q, k)


def _linear_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    for length, dim, base in [(12, 8, 10000.0), (7, 16, 100.0), (20, 4, 10000.0)]:
        q, k, v = (torch.randn(length, dim, generator=generator, dtype=torch.float64) for _ in range(3))
        cases.append(_Case((q, k, v, base), f"fn(q, k, v: ({length}, {dim}), base={base:g})"))
    return cases


@_public
def check_linear_rope_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, v, base=10000.0)``: causal linear attention with RoPE, inputs ``(n, d)``.

    ``o_i = Σ_{j<=i} (R_i φ(q_i))^T (R_j φ(k_j)) v_j / Σ_{j<=i} φ(q_i)^T φ(k_j)`` with
    ``φ = elu + 1`` (within 1e-4; a loop with running sums and a quadratic formula both pass).
    Named mistakes: the denominator rotated, no rotation, not causal, φ after the rotation, no φ,
    no denominator, only the keys rotated; otherwise another feature map (relu, exp, softplus, ...)
    or a denominator that is not causal.
    """
    return _simple_checker(
        "linear attention with RoPE", fn, _linear_cases, reference_linear_rope_attention, _LINEAR_MISTAKES,
        ["the outputs match the quadratic formula with an unrotated denominator"],
        what="the outputs", atol=1e-4, properties=[_linear_property],
    )


# --------------------------------------------------------------------------- ex-ropeb-5


def reference_decode_positions(cache_len, num_new):
    """Positions of ``num_new`` tokens decoded after ``cache_len`` cached ones."""
    return torch.arange(cache_len, cache_len + num_new)


_DECODE_MISTAKES = [
    _Mistake("decode zero", "every new token is at position 0 (the position-0 bug): all offsets to the cache "
             "become 0 and RoPE encodes no order; the new tokens continue after the cache",
             lambda c, n: torch.zeros(n)),
    _Mistake("decode restart", "your positions restart at 0 at every step (arange(num_new)): positions are "
             "counted from the start of the sequence, so they start at cache_len",
             lambda c, n: torch.arange(n)),
    _Mistake("decode off by one", "your positions start at cache_len + 1: with cache_len tokens at 0, ..., "
             "cache_len - 1 the next one is at cache_len",
             lambda c, n: torch.arange(c + 1, c + n + 1)),
    _Mistake("decode one before", "your positions start at cache_len - 1, the position of the last cached token",
             lambda c, n: torch.arange(c - 1, c + n - 1)),
    _Mistake("decode same position", "all your new tokens get the same position: token t of the step is at "
             "cache_len + t",
             lambda c, n: torch.full((n,), c)),
    _Mistake("decode one too many", "you returned num_new + 1 positions (range(cache_len, cache_len + num_new + 1)): "
             "the new tokens are at cache_len, ..., cache_len + num_new - 1",
             lambda c, n: torch.arange(c, c + n + 1)),
    _Mistake("decode whole sequence", "you returned the positions of the whole sequence, arange(cache_len + "
             "num_new): return only those of the new tokens",
             lambda c, n: torch.arange(c + n)),
]


def _decode_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """What a list of new positions is, against cache_len, ..., cache_len + num_new - 1."""
    cache_len, num_new = case.args
    if got.shape != expected.shape:
        return None
    if num_new > 1 and bool((got == got[0]).all()):
        return (f"all your new tokens get the same position, {int(got[0])}: token t of the step is at cache_len + t, "
                "one position each")
    if num_new > 1 and bool(torch.equal(got.flip(0), expected)):
        return ("your positions are in decreasing order: token t of the step is at cache_len + t, so they increase "
                "(range(cache_len, cache_len + num_new))")
    shift = got - expected
    if not bool((shift == shift[0]).all()):
        return None
    amount = int(shift[0])
    # One case can fit several slips (with one new token a start one early is also the last num_new cached positions):
    # every slip this case fits is said, and the largest failed case, the one with most new tokens, is reported.
    readings = [reading for fits, reading in (
        (amount == -1, "start one early, at cache_len - 1 (the position of the last cached token)"),
        (amount == -num_new, "end at cache_len - 1 (those of the last num_new cached tokens)"),
        (num_new > 1 and amount == 1 - num_new, "end at cache_len (range(cache_len - num_new + 1, cache_len + 1))"),
        (amount == 1, "start one late, at cache_len + 1"),
        (amount == num_new, "start at cache_len + num_new"),
        (num_new > 1 and amount == num_new - 1, "start at cache_len + num_new - 1"),
        (amount == -cache_len != 0, "start at 0"),
    ) if fits]
    if not readings:
        return None
    said = readings[0] if len(readings) == 1 else (
        "either " + " or ".join(readings) + f" (with cache_len = {cache_len}, num_new = {num_new} these are the same "
        "positions)")
    return f"your positions {said}: the new tokens start at cache_len, the first free position after the cache"


def _decode_cases(generator: torch.Generator) -> list[_Case]:
    return [_Case((c, n), f"fn(cache_len={c}, num_new={n})") for c, n in [(5, 1), (0, 4), (12, 3), (100, 1), (3, 2)]]


@_public
def check_decode_positions(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(cache_len, num_new)``: the positions of ``num_new`` tokens decoded after a cache.

    The answer is ``cache_len, ..., cache_len + num_new - 1`` (a tensor or a list). Named mistakes:
    position 0 for every token, a restart at 0, off by one either way, one shared position, the
    whole sequence; otherwise one shared position, or positions shifted by ``num_new`` either way, ending at
    ``cache_len`` or starting at ``cache_len + num_new - 1``, read on the case with most new tokens (where one case
    fits several of these, as with one new token, each is said).
    """
    return _simple_checker(
        "positions while decoding", fn, _decode_cases, reference_decode_positions, _DECODE_MISTAKES,
        ["new tokens continue after the cache, with or without a prompt"],
        what="the positions", atol=0.0, rtol=0.0, properties=[_decode_property, _decode_steps],
        axes="there is one position per new token, num_new of them: range(cache_len, cache_len + num_new), whose end "
             "is cache_len + num_new (excluded)",
    )


# --------------------------------------------------------------------------- ex-ropeb-9


def reference_streaming_cache(cached, window, sinks=4):
    """Keep the sinks and the last ``window`` keys, moved to positions sinks..sinks+window-1 by one rotation."""
    from posenc import apply_rope

    total = cached.shape[-2]
    shift = total - window - sinks
    moved = apply_rope(cached[..., total - window :, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def _stream(cached, window, sinks=4, shift_of=None, direction=-1, rotate=True, rotate_sinks=False, reencode=False):
    total = cached.shape[-2]
    shift = total - window - sinks if shift_of is None else shift_of(total, window, sinks)
    kept = cached[..., total - window :, :]
    if reencode:
        moved = apply_rope(kept, torch.arange(sinks, sinks + window))
    elif rotate:
        moved = apply_rope(kept, torch.full((window,), direction * shift))
    else:
        moved = kept
    first = cached[..., :sinks, :]
    if rotate_sinks:
        first = apply_rope(first, torch.full((sinks,), -shift))
    return torch.cat((first, moved), dim=-2)


def _stream_float32(cached: torch.Tensor, window: int, sinks: int = 4) -> torch.Tensor:
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = _float32_rope(cached[..., total - window :, :], torch.full((window,), -shift), 10000.0)
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


_STREAM_MISTAKES = [
    _Mistake("stream wrong way", "you rotated the window keys forward by n - w - sinks: they move to earlier "
             "positions, so the rotation is by -(n - w - sinks)",
             lambda c, w, s=4: _stream(c, w, s, direction=1)),
    _Mistake("stream not rotated", "your window keys are not rotated: they keep their old positions n - w, ..., "
             "n - 1 and must move to sinks, ..., sinks + w - 1",
             lambda c, w, s=4: _stream(c, w, s, rotate=False)),
    _Mistake("stream forgot sinks", "your shift is n - w: the window starts at position `sinks` in the cache, so "
             "the shift is n - w - sinks",
             lambda c, w, s=4: _stream(c, w, s, shift_of=lambda n, w_, s_: n - w_)),
    _Mistake("stream rotated sinks", "you rotated the sinks too: they keep positions 0, ..., sinks - 1 and need "
             "no rotation",
             lambda c, w, s=4: _stream(c, w, s, rotate_sinks=True)),
    _Mistake("stream re-encoded", "you applied RoPE at the new positions to keys that are already rotated: a "
             "cached key is R_j k, so it needs R_(new - old), one rotation by the difference",
             lambda c, w, s=4: _stream(c, w, s, reencode=True)),
    _Mistake("stream off by one", "your shift is off by one (n - w - sinks ± 1): the last key, at n - 1, must "
             "land at sinks + w - 1",
             lambda c, w, s=4: _stream(c, w, s, shift_of=lambda n, w_, s_: n - w_ - s_ + 1)),
    _Mistake("stream float32 angles", "your rotation's angles are formed in float32: for a shift of thousands of "
             "positions float32 keeps few decimals of the angle; form shift · θ_ℓ in float64, then cast",
             lambda c, w, s=4: _stream_float32(c, w, s), tolerance=3e-2),
    _Mistake("stream off by one below", "your shift is off by one (n - w - sinks ± 1): the last key, at n - 1, "
             "must land at sinks + w - 1",
             lambda c, w, s=4: _stream(c, w, s, shift_of=lambda n, w_, s_: n - w_ - s_ - 1)),
]


def _stream_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Which keys the window kept, when it is not the last ``window`` (a slice off by some keys)."""
    cached, window, sinks = case.args
    total = cached.shape[-2]
    for early in (1, 2, -1):
        start = total - window - early
        if start < sinks or start + window > total:
            continue
        kept = cached[..., start:start + window, :]
        for shift in (total - window - sinks, start - sinks):
            moved = apply_rope(kept, torch.full((window,), -shift))
            if _close(got, torch.cat((cached[..., :sinks, :], moved), dim=-2), atol=1e-4):
                return (f"your window holds the keys at positions {start}..{start + window - 1}: it must be the last "
                        f"window keys, {total - window}..{total - 1} (cached[..., -window:, :] or "
                        "cached[..., n - window:, :])")
    if got.shape == expected.shape and _close(got, torch.cat((expected[..., sinks:, :], expected[..., :sinks, :]),
                                                             dim=-2), atol=1e-4):
        return (f"your cache puts the window ahead of the sinks: the {sinks} sinks come first (positions "
                f"0..{sinks - 1}) and the moved window after them, torch.cat((sinks, window), dim=-2)")
    if _close(got, expected.flip(-2), atol=1e-4):
        return "your cache is in reverse order: the sinks come first, then the window, oldest key first"
    unmoved = _held_keys(got[..., sinks:, :], cached, 0)
    if unmoved is not None and unmoved != list(range(total - window, total)):
        return (f"your window holds the keys at positions {_runs_text(unmoved)}, not moved: it must be the last window "
                f"keys, {total - window}..{total - 1}, each moved back by n - w - sinks = {total - window - sinks}")
    kept_sinks = _held_keys(got[..., :sinks, :], cached, 0)
    if kept_sinks is not None and kept_sinks != list(range(sinks)):
        return (f"your sinks are the keys at positions {_runs_text(kept_sinks)}: the attention sinks are the "
                f"first sinks keys, 0..{sinks - 1}, kept as they are (cached[..., :sinks, :])")
    shift = next((t for t in range(0, total) if _close(got[..., sinks:, :], apply_rope(
        cached[..., total - window:, :], torch.full((window,), -t)), atol=1e-4)), None) if total <= 4096 else None
    if shift is not None and shift != total - window - sinks:
        return (f"your window keys are moved back by {shift} positions; the last key, at n - 1 = {total - 1}, must "
                f"land at sinks + w - 1 = {sinks + window - 1}, a shift of n - w - sinks = {total - window - sinks}")
    held = _held_keys(got[..., sinks:, :], cached, total - window - sinks)
    if held is not None and held != list(range(total - window, total)):
        return (f"your window holds the keys at positions {_runs_text(held)} (each moved by the right rotation): "
                f"it must be the last window keys, {total - window}..{total - 1}, each once, in order")
    return _cache_layout(got, cached, window, sinks) or _ladder_slip(got[..., sinks:, :], cached.shape[-1], 10000.0, (
        lambda theta: apply_rope(cached[..., total - window:, :], torch.full((window,), -(total - window - sinks)),
                                 frequencies=theta)))


def _stream_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    # The last cache is long (100,000 keys), so that the shift is large: angles formed in float32 are visibly off.
    # The leading axes vary (none, heads, batch and heads): the token axis is -2 whatever comes before it.
    for lead, total, dim, window, sinks in [((2,), 40, 8, 10, 4), ((1,), 20, 16, 5, 4), ((3,), 30, 8, 6, 2),
                                            ((), 24, 8, 7, 4), ((2, 3), 26, 8, 6, 4), ((1,), 100_000, 16, 6, 4)]:
        raw = torch.randn(*lead, total, dim, generator=generator)
        cases.append(_Case((apply_rope(raw).contiguous(), window, sinks),
                           f"fn(cached: {(*lead, total, dim)} rotated at 0..{total - 1}, "
                           f"window={window}, sinks={sinks})"))
    return cases


@_public
def check_streaming_cache(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(cached, window, sinks=4)``: a StreamingLLM cache from keys rotated at ``0..n-1``.

    The answer, shape ``(..., sinks + window, d)``, equals the raw keys of the sinks and of the last
    ``window`` tokens encoded at positions ``0, ..., sinks + window - 1`` (within 1e-4). Named
    mistakes: rotation the wrong way, no rotation, the sinks forgotten in the shift, the sinks
    rotated, RoPE re-applied at the new positions, the shift off by one, angles in float32 (one
    hidden cache holds 100,000 keys, so that the shift is large).
    """
    return _simple_checker(
        "StreamingLLM cache", fn, _stream_cases, reference_streaming_cache, _STREAM_MISTAKES,
        ["sinks kept, window keys moved by one rotation each, for 6 hidden caches with 0 to 2 leading axes (one of "
         "100,000 keys)"],
        what="the cache", atol=1e-4, properties=[_stream_property], sizes=_stream_sizes,
    )


def _stream_sizes(shape: tuple[int, ...], case: _Case) -> str | None:
    """What a cache of the wrong length holds: how many sinks ahead of the window."""
    _, window, sinks = case.args
    kept = shape[-2] - window if len(shape) >= 2 else -1
    if kept == sinks or kept < 0:
        return None
    if kept == 0:
        return (f"your cache has {shape[-2]} keys, as many as the window: you dropped the sinks (or put them in place "
                f"of the window's oldest keys); the cache keeps the {sinks} sinks and the last {window} keys, sinks + "
                f"window = {sinks + window} of them")
    return (f"your cache has {shape[-2]} keys, window + {kept}: with the window of {window}, that is {kept} sinks "
            f"where the argument asks for sinks = {sinks} (a fixed number in the code ignores it)")


# --------------------------------------------------------------------------- ex-ropeb-10


def reference_rope_matrix_2d_blocks(row, column, dim, base=10000.0):
    """Blocks of four: block ℓ turns (4ℓ, 4ℓ+1) by row θ'_ℓ and (4ℓ+2, 4ℓ+3) by column θ'_ℓ, θ'_ℓ = b^(-4ℓ/d)."""
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for frequency in theta.tolist():
        for position in (row, column):
            angle = torch.tensor(position * frequency, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([angle.cos(), -angle.sin()]),
                                       torch.stack([angle.sin(), angle.cos()])]))
    return torch.block_diag(*blocks)


def _blocks(row, column, dim, base=10000.0, exponent=4.0, sign=1.0, swap=False):
    theta = base ** (-exponent * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for frequency in theta.tolist():
        for position in ((column, row) if swap else (row, column)):
            angle = torch.tensor(position * frequency, dtype=torch.float64)
            c, s = angle.cos(), sign * angle.sin()
            blocks.append(torch.stack([torch.stack([c, -s]), torch.stack([s, c])]))
    return torch.block_diag(*blocks)


_BLOCK_MISTAKES = [
    _Mistake("blocks ladder", "your frequencies are the 1-D ladder b^(-2ℓ/d): the blocks use θ'_ℓ = b^(-4ℓ/d), "
             "the frequencies of RoPE of dimension d/2",
             lambda r, c, d, b=10000.0: _blocks(r, c, d, b, exponent=2.0)),
    _Mistake("blocks transposed", "your 2 x 2 blocks turn the wrong way ([[cos, sin], [-sin, cos]]): either the "
             "blocks are transposed or the positions are negated (both give these numbers); the rotation by φ is "
             "[[cos φ, -sin φ], [sin φ, cos φ]]",
             lambda r, c, d, b=10000.0: _blocks(r, c, d, b, sign=-1.0)),
    _Mistake("blocks swapped", "your rows and columns are swapped: the first pair of each block turns by the row "
             "position, the second by the column",
             lambda r, c, d, b=10000.0: _blocks(r, c, d, b, swap=True)),
    _Mistake("blocks axial", "you built the axial matrix (a row half, then a column half): this exercise groups "
             "the coordinates in blocks of four, (4ℓ, 4ℓ+1) by row and (4ℓ+2, 4ℓ+3) by column",
             lambda r, c, d, b=10000.0: rope_matrix_2d(r, c, d, b)),
    _Mistake("blocks base ignored", "your function ignores its base argument",
             lambda r, c, d, b=10000.0: _blocks(r, c, d)),
    _Mistake("blocks exponent eight", "your exponent is 8ℓ/d: block ℓ has frequency b^(-4ℓ/d)",
             lambda r, c, d, b=10000.0: _blocks(r, c, d, b, exponent=8.0)),
]


def _blocks_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """The angle each 2 x 2 diagonal block turns by, against position · θ'_ℓ: a factor on every angle."""
    row, column, dim, base = case.args
    if got.shape != expected.shape or dim % 4:
        return None
    starts = range(0, dim, 2)
    block = [got[k:k + 2, k:k + 2].double() for k in starts]
    if not all(torch.allclose(b.T @ b, torch.eye(2, dtype=torch.float64), atol=1e-6) for b in block):
        return "a 2 x 2 diagonal block of your matrix is not a rotation ([[cos φ, -sin φ], [sin φ, cos φ]])"
    for name, signs in (("row", (-1, 1)), ("column", (1, -1)), ("row and column", (-1, -1))):
        if _close(got, reference_rope_matrix_2d_blocks(signs[0] * row, signs[1] * column, dim, base), atol=1e-6):
            return f"your {name} blocks turn the wrong way, by minus the position: each turns by +position · θ'_ℓ"
    mine = torch.tensor([math.atan2(float(b[1, 0]), float(b[0, 0])) for b in block], dtype=torch.float64)
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    right = torch.stack((row * theta, column * theta), dim=-1).flatten()
    big = (right.abs() > 1e-3) & (right.abs() < math.pi / 2)  # angles that atan2 reads without wrapping
    if not bool(big.any()):
        return None
    ratios = mine[big] / right[big]
    ratio = float(ratios[0])
    if math.isclose(ratio, base ** (-4 / dim), rel_tol=1e-4) and bool(torch.allclose(ratios, ratios[:1].expand_as(
            ratios), rtol=1e-4)):
        return "your block index ℓ starts at 1: block ℓ = 0, the first, turns by θ'_0 = 1 times the position"
    if abs(ratio - 1) > 1e-4 and bool(torch.allclose(ratios, torch.full_like(ratios, ratio), rtol=1e-4)):
        return (f"every block of your matrix turns by {ratio:.4g} times its angle: block (4ℓ, 4ℓ+1) turns by the row "
                "position times θ'_ℓ and (4ℓ+2, 4ℓ+3) by the column position times θ'_ℓ, the positions as given")
    return None


def _block_cases(generator: torch.Generator) -> list[_Case]:
    return [_Case((r, c, d, b), f"fn(row={r}, column={c}, dim={d}, base={b:g})")
            for r, c, d, b in [(3, 5, 16, 10000.0), (2, 7, 8, 100.0), (4, 1, 12, 10000.0), (1.5, 2.5, 16, 50.0)]]


@_public
def check_rope_matrix_2d_blocks(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(row, column, dim, base=10000.0)``: the ``(d, d)`` matrix of 2-D RoPE in blocks of four.

    Block ``ℓ`` turns coordinates ``(4ℓ, 4ℓ+1)`` by ``row θ'_ℓ`` and ``(4ℓ+2, 4ℓ+3)`` by
    ``column θ'_ℓ``, with ``θ'_ℓ = b^(-4ℓ/d)`` (within 1e-5). Named mistakes: the 1-D ladder, blocks
    transposed, row and column swapped, the axial layout, base ignored, exponent ``8ℓ/d``.
    """
    return _simple_checker(
        "2-D RoPE in blocks of four", fn, _block_cases, reference_rope_matrix_2d_blocks, _BLOCK_MISTAKES,
        ["the block matrix is right for 4 hidden settings (real positions included)"],
        what="the matrix", properties=[_blocks_property],
    )
