"""Checker of the RoPE exercise: rotary position embedding on a tensor of queries or keys.

:func:`~posenc.exercises.check_apply_rope` compares the student's rotation with :func:`posenc.rotary.apply_rope` for
the chosen layout, and checks the property that makes RoPE relative: the score of a rotated query and key depends
only on their offset. It recognises a rotation in the wrong direction, the other layout, ``positions`` or ``base``
ignored, and a map that is not a rotation at all. The 2-D checker is in :mod:`posenc.exercises.rotary_2d`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from .._validation import check_choice
from ..rotary import ROPE_LAYOUTS, apply_rope, rope_angles
from ._angles import (
    _pairing,
    _pairs,
    _positions_text,
    _positions_used,
    _rope_bound,
    _rounding_sized,
    _token_errors,
    _unrotated_pairs,
)
from ._probes import _rope_probe_reference, _rope_probes
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
    _check_callable,
    _close,
    _describe,
    _distinct,
    _dtype,
    _expect_finite,
    _expect_floating,
    _expect_shape,
    _expect_tensor,
    _first_difference,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _unchanged,
    _values,
)
from .comparing import _ladder_slip

__all__ = ["check_apply_rope"]


# --------------------------------------------------------------------------- RoPE


def _rope_cases(generator: torch.Generator) -> list[dict[str, Any]]:
    def randn(*shape: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        return torch.randn(*shape, generator=generator, dtype=dtype)

    shuffled = torch.randperm(16, generator=generator)[:4]
    real = torch.tensor([0.5, 1.25, 2.0, 7.5, -3.0], dtype=torch.float64)
    return [
        {"x": randn(6, 8), "positions": None, "base": None, "tags": set()},
        {"x": randn(2, 3, 5, 16, dtype=torch.float32), "positions": None, "base": None, "tags": {"batch"}},
        {"x": randn(4, 8), "positions": shuffled, "base": None, "tags": set()},
        {"x": randn(5, 6), "positions": None, "base": 500.0, "tags": set()},
        {"x": randn(3, 2, 5, 4), "positions": real, "base": 500.0, "tags": {"batch", "real"}},
        {"x": randn(5, 10), "positions": real.float(), "base": None, "tags": {"real"}},
        {"x": randn(1, 8, 32, dtype=torch.float32), "positions": torch.arange(4000, 4008), "base": None,
         "tags": {"batch", "far"}},
        {"x": randn(4, 16), "positions": torch.tensor([5000, 12000, 50000, 7]), "base": None, "tags": {"far"}},
    ]


@_public
def check_apply_rope(fn: Callable[..., Any], layout: str = "interleaved") -> CheckResult:
    """Check a student's rotary embedding ``fn(x, positions=None, base=10000.0) -> tensor like x``.

    ``x`` has shape ``(..., L, d)``; ``positions`` is an optional 1-D tensor of ``L`` positions (integers or
    real numbers, default ``arange(L)``). The result must equal ``posenc.apply_rope(x, positions, base=base,
    layout=layout)``, keep the shape and dtype of ``x`` and leave ``x`` unchanged. The hidden cases include
    float32 and float64, leading batch and head dimensions, shuffled, real-valued and far positions and base
    500; two properties are tested as well: norms are preserved, and scores between rotated queries and keys
    depend only on the offset of their positions. For a float32 ``x``, angles formed in float32 are accepted,
    with a precision note: it is how the models of ``transformers`` form them (``position_ids.float() *
    inv_freq.float()`` in Llama's rotary embedding); the error, about ``|m| θ_ℓ · 2^-24`` radians, grows with
    the position, and so does the tolerance (``8 · 2^-23 · |m|`` of each token's norm). For a float64 ``x``
    they are rejected (a float64 input asks for float64 accuracy), and half or bfloat16 angles for either. The
    later exercises on precision at long range (:func:`check_unrotated_outputs`,
    :func:`check_streaming_cache`) ask for float64 angles and name float32 ones as a mistake.

    Diagnosed mistakes: not a rotation (norms change, e.g. evens and odds paired with ``cat(freqs, freqs)``);
    rotation in the wrong direction; the other layout; ``positions`` or ``base`` ignored; real positions
    truncated to integers; exponent ``ℓ/d`` instead of ``2ℓ/d``; scores not relative; failure with leading
    dimensions or real-valued positions; dtype or shape changed; ``x`` modified in place; exceptions.

    Args:
        fn: the student's function.
        layout: the layout the exercise asks for: ``"interleaved"`` (pairs ``(2ℓ, 2ℓ+1)``) or
            ``"half"`` (pairs ``(l, l + d/2)``).

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
        ValueError: if ``layout`` is not one of :data:`posenc.rotary.ROPE_LAYOUTS`.
    """
    _check_callable(fn)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        for case in _rope_cases(generator):
            tags = case["tags"] | ({"default positions"} if case["positions"] is None else set())
            session.run(partial(_rope_case, session, case, layout), tags)
        q, k = (torch.randn(8, generator=generator, dtype=torch.float64) for _ in range(2))
        session.run(partial(_rope_relative_case, session, q, k))
        if session.only_failed_with("batch") and not any("batch" in tags for tags in session.passed_tags):
            session.problem(
                "batch hint",
                "your function works on (L, d) inputs but not with leading batch and head dimensions: read "
                "seq_len, dim = x.shape[-2:], index coordinates with x[..., 0::2], and let the (L, d/2) angle "
                "table broadcast against (..., L, d/2)",
            )
        elif session.only_failed_with("batch") and session.only_failed_with("default positions"):
            session.problem(
                "default positions hint",
                "only the inputs with leading batch and head dimensions and no positions given failed: your default "
                "positions count along the wrong axis; the tokens run along x.shape[-2] (seq_len = x.shape[-2], "
                "not x.shape[0]), so the default is torch.arange(x.shape[-2])",
            )
        elif session.only_failed_with("far"):
            session.problem(
                "far hint",
                "only the cases with far positions (4000 and beyond) failed: form the angles m·θ_ℓ in float64 before "
                "cosines and sines (float32 angles suit a float32 x only); cast only the result to the dtype of x",
            )
        elif session.only_failed_with("real"):
            session.problem(
                "real hint",
                "only the cases with real-valued positions (such as 0.5 or -3.0) failed: positions may be real "
                "numbers, for instance interpolated ones; do not convert them to integers or use them as indices, "
                "form the angles as positions.to(torch.float64)[:, None] * theta[None, :]",
            )
        pairs = "(2ℓ, 2ℓ+1)" if layout == "interleaved" else "(ℓ, ℓ + d/2)"
        return [
            f"matches posenc.apply_rope(layout={layout!r}, pairs {pairs}) on {session.cases - 1} hidden cases: "
            "float32 and float64, with batch and head dimensions, shuffled, real-valued and far positions, base 500",
            "preserves norms (it is a rotation); scores between rotated queries and keys depend only on the offset",
            "keeps the shape and dtype of x and leaves x unchanged",
        ]

    return _run_checker(f"rotary position embedding ({layout} layout)", fn, body,
                        reading=_probing(fn, ("rope values",), partial(_rope_probe_reference, layout=layout),
                                         _rope_probes(), "the vectors", ("x", "positions"), atol=1e-3, rtol=1e-3))


def _rope_call(session: _Session, x: torch.Tensor, positions: torch.Tensor | None, base: float | None) -> tuple[
    Any, str, torch.Tensor
]:
    given = x.clone()
    parts = [_describe("x", x)]
    args: list[Any] = [given]
    kwargs: dict[str, Any] = {}
    if positions is not None:
        kind = "real-valued" if positions.is_floating_point() else "integers"
        parts.append(f"positions={_values(positions, limit=5)} ({kind}, {_dtype(positions.dtype)})")
        args.append(positions.clone())
    if base is not None:
        parts.append(f"base={base:g}")
        kwargs["base"] = base
    call = f"fn({', '.join(parts)})"
    returned = session.call(call, *args, **kwargs)
    _unchanged(session, {"x": x}, {"x": given}, call)
    return returned, call, given


def _rope_case(session: _Session, case: dict[str, Any], layout: str) -> None:
    x, positions, base = case["x"], case["positions"], case["base"]
    returned, call, _ = _rope_call(session, x, positions, base)
    got = _expect_tensor(returned, "a tensor like x", call)
    _expect_shape(got, tuple(x.shape), "a tensor", call, " (the shape of x)")
    if got.dtype != x.dtype:
        session.problem(
            "dtype",
            f"{call} returned dtype {_dtype(got.dtype)}; expected {_dtype(x.dtype)}, the dtype of x: RoPE must "
            "not change the dtype (compute the angles in float64 if you like, then cast back with .to(x.dtype))",
        )
    _expect_floating(got, "a tensor", call, f"{_dtype(x.dtype)}, the dtype of x")
    _expect_finite(got, "a tensor", call, "every rotated coordinate must be a finite number")
    got = got.double()
    actual_base = 10000.0 if base is None else base
    actual_positions = torch.arange(x.shape[-2]) if positions is None else positions
    expected = apply_rope(x.double(), actual_positions, base=actual_base, layout=layout)
    errors = _token_errors(got, expected, x)
    if bool((errors <= _rope_bound(actual_positions)).all()):
        if not bool((errors <= _rope_bound(actual_positions, strict=True)).all()):
            worst = int(torch.argmax(errors))
            found = (f"at position {_num(float(actual_positions[worst]))} your rotated vectors differ from the "
                     f"reference by {float(errors[worst]):.1e} of their norm, an error that grows with the position: "
                     "the angles seem to be formed in float32")
            if x.dtype == torch.float64:
                raise _Problem("precision", f"in {call}, x is float64, but {found}, which loses float64's accuracy: "
                               "form the angles, their cosines and sines in float64")
            session.note(
                "precision",
                f"precision note: {found}. This is accepted for a float32 x (transformers' models form them so), "
                "but the error keeps growing, to up to about 3e-3 of the norm at position 50,000: forming the angles "
                "in float64 and casting cos and sin to the dtype of x makes far positions exact to float32 rounding",
            )
        return
    if float(errors.max()) < 1e-2 and _rounding_sized(got, expected, x, actual_positions, actual_base, layout):
        worst = int(torch.argmax(errors))
        raise _Problem(
            "precision",
            f"in {call}: your result is close to the reference but not accurate enough: at position "
            f"{_num(float(actual_positions[worst]))} the rotated vector is off by {float(errors[worst]):.1e} of its "
            "norm, far beyond float32 rounding: compute the angles, their cosines and sines in float64 (or at least "
            "float32), not in half precision, and cast only the result to the dtype of x",
        )
    overwritten = _overwritten_pair(got, x.double(), actual_positions, actual_base, layout)
    if overwritten:
        raise _Problem("overwritten", f"in {call}: {overwritten}")
    norms_before = x.double().norm(dim=-1)
    ratio = got.norm(dim=-1) / norms_before.clamp(min=1e-12)
    if not bool(((ratio - 1).abs() < 1e-3).all()):
        index = tuple(int(i) for i in (~((ratio - 1).abs() < 1e-3)).nonzero()[0])
        position = float(actual_positions[index[-1]])
        raise _Problem(
            "norms",
            f"your function does not preserve norms, so it is not a rotation: in {call}, the token at position "
            f"{_num(position)} has norm {_num(float(norms_before[index]))} before and "
            f"{_num(float(got.norm(dim=-1)[index]))} after: check which coordinates you pair with which angle "
            "(pair k is "
            + ("(2ℓ, 2ℓ+1), rotated by m·θ_ℓ)" if layout == "interleaved" else "(l, l + d/2), rotated by m·θ_ℓ)")
            + ", and that each pair gets one cosine and one sine of the same angle, not cos twice or sin twice "
            "(cos² φ + sin² φ = 1 is what keeps the norm)",
        )
    raise _diagnose_rope(got, expected, x, actual_positions, actual_base, positions is not None, base is not None,
                         layout, call, session.fn)


def _diagnose_rope(
    got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor, positions: torch.Tensor, base: float,
    positions_given: bool, base_given: bool, layout: str, call: str, fn: Callable[..., Any],
) -> _Problem:
    other = "half" if layout == "interleaved" else "interleaved"
    pairs = {"interleaved": "interleaved pairs (2ℓ, 2ℓ+1)", "half": "pairs (ℓ, ℓ + d/2) of the half layout"}
    explanations = {
        "layout": f"you implemented the {other} layout, but this exercise asks for {pairs[layout]}",
        "direction": "you rotate the wrong way: your output equals RoPE at position -m (R_mᵀ instead of R_m); the "
        "rotation by φ maps the pair (a, b) to (a cos φ - b sin φ, a sin φ + b cos φ)",
        "base": f"your function ignores its base argument: called with base={base:g}, it uses base 10000",
        "positions": "your function ignores its positions argument: it rotates token t by t·θ_ℓ instead of by "
        "positions[t]·θ_ℓ",
        "truncated": "real-valued positions are truncated to integers (for instance 0.5 is treated as 0): keep "
        "them real, form the angles as positions.to(torch.float64)[:, None] * theta[None, :]",
        "exponent": "your frequencies are base^(-ℓ/d) instead of θ_ℓ = base^(-2ℓ/d): the exponent needs the "
        "column index 2ℓ, as in torch.arange(0, d, 2) / d (or, if your exponent has it, the base is its square "
        "root: both give these numbers)",
    }
    position_options: list[tuple[str | None, torch.Tensor]] = [(None, positions)]
    if positions_given:
        position_options.append(("positions", torch.arange(x.shape[-2])))
    if positions.is_floating_point() and not torch.equal(positions.trunc(), positions):
        position_options.append(("truncated", positions.trunc()))
    base_options: list[tuple[str | None, float]] = [(None, base)]
    if base_given and base != 10000.0:
        base_options.append(("base", 10000.0))
    candidates = []
    for (layout_key, variant_layout), (sign_key, sign), (position_key, variant_positions), (base_key, variant_base), (
        exponent_key, root
    ) in itertools.product(
        ((None, layout), ("layout", other)), ((None, 1), ("direction", -1)), position_options, base_options,
        ((None, False), ("exponent", True)),
    ):
        keys = [key for key in (layout_key, sign_key, position_key, base_key, exponent_key) if key is not None]
        if keys:
            candidates.append((keys, variant_layout, sign, variant_positions, variant_base, root))
    candidates.sort(key=lambda candidate: len(candidate[0]))
    for keys, variant_layout, sign, variant_positions, variant_base, root in candidates:
        candidate = apply_rope(
            x.double(),
            sign * variant_positions,
            base=math.sqrt(variant_base) if root else variant_base,
            layout=variant_layout,
        )
        if bool((_token_errors(got, candidate, x) <= _rope_bound(variant_positions)).all()):
            return _Problem(" + ".join(keys), f"in {call}: " + "; ".join(explanations[key] for key in keys))
    bound = _rope_bound(positions)
    for shift in (1, -1):
        candidate = apply_rope(x.double(), positions + shift, base=base, layout=layout)
        if bool((_token_errors(got, candidate, x) <= bound).all()):
            where = (f"your default positions start at {shift} instead of 0" if not positions_given else
                     f"your positions are the given ones {shift:+d}")
            return _Problem("positions shifted", f"in {call}: {where}: token t must be rotated by positions[t] θ_ℓ, "
                            "and the default positions are arange(L), from 0")
    transformed = {"in reverse order": positions.flip(0), "doubled": 2 * positions, "halved": positions / 2}
    for how, wrong in transformed.items():
        if not torch.equal(wrong, positions) and bool((_token_errors(got, apply_rope(
                x.double(), wrong, base=base, layout=layout), x) <= bound).all()):
            return _Problem("positions transformed", f"in {call}: your rotation uses the positions {how}: token t "
                            "must be rotated by positions[t] θ_ℓ, its own position")
    slip = _ladder_slip(got, x.shape[-1], base, lambda theta: apply_rope(x.double(), positions, frequencies=theta,
                                                                           layout=layout))
    if slip is not None:
        return _Problem("ladder", f"in {call}: {slip}")
    if (unrotated := _unrotated_pairs(got, expected, x, layout)) is not None:
        return _Problem("pairs not rotated", f"in {call}: {unrotated}")
    dim = x.shape[-1]
    for name, part in (("first", slice(0, dim // 2)), ("last", slice(dim // 2, dim))):
        if not _close(got[..., part], expected[..., part], atol=1e-6) and _close(got[..., part], x.double()[..., part],
                                                                                atol=1e-6):
            return _Problem("half not rotated", f"in {call}: your {name} d/2 coordinates are not rotated, they equal "
                            "x's: every pair of coordinates turns, d/2 pairs in all")
    at_zero = (positions == 0).nonzero().flatten()
    if len(at_zero) and not _close(got[..., at_zero, :], x.double()[..., at_zero, :], atol=1e-6, rtol=1e-6):
        return _Problem("position 0", f"in {call}: at position 0 your output is not x itself: RoPE at position 0 is "
                        "the identity (angle 0: cos 0 = 1 multiplies x, sin 0 = 0 multiplies its rotated copy); a cos "
                        "and a sin exchanged, or an angle that is not m θ_ℓ, moves it")
    used = _positions_used(got, x, base, layout)
    read = (_positions_text(used, positions) if used is not None else None) or _pairing(fn, dim, layout)
    index = _first_difference(got, expected, atol=1e-5 * float(x.double().abs().max()))
    should, was = _distinct(float(expected[index]), float(got[index]))
    return _Problem(
        "rope values", (f"{read}\n" if read else "") +
        f"in {call}: the token at position {_num(float(positions[index[-2]]))}, coordinate {index[-1]} should be "
        f"{should}, got {was}; pair ℓ = {pairs[layout]} is rotated by the angle m·θ_ℓ with θ_ℓ = base^(-2ℓ/d)",
    )


def _rope_relative_case(session: _Session, q: torch.Tensor, k: torch.Tensor) -> None:
    seq_len = 8
    queries, keys = q.expand(seq_len, -1).clone(), k.expand(seq_len, -1).clone()
    description = f"x of shape ({seq_len}, {q.numel()}) (float64) holding the same vector at every position"
    rotated = []
    for x in (queries, keys):
        call = f"fn({description})"
        returned = session.call(call, x)
        got = _expect_tensor(returned, "a tensor like x", call)
        _expect_shape(got, (seq_len, q.numel()), "a tensor", call, " (the shape of x)")
        _expect_floating(got, "a tensor", call, "float64, the dtype of x")
        _expect_finite(got, "a tensor", call, "every rotated coordinate must be a finite number")
        rotated.append(got.double())
    scores = rotated[0] @ rotated[1].T
    shifted_gap = (scores[1:, 1:] - scores[:-1, :-1]).abs()
    scale = 1 + float(scores.abs().max())
    if bool((shifted_gap <= 1e-6 * scale).all()):
        return
    if float(shifted_gap.max()) < 1e-2 * scale and "precision" in session.problems:
        return  # the imprecision already reported, not a mistake in the formula
    m, n = (int(i) for i in (shifted_gap == shifted_gap.max()).nonzero()[0])
    session.problem(
        "relative",
        "scores are not relative: with the same query vector q at every position and the same key vector k at "
        f"every position, the score of (query position {m}, key position {n}) is {_num(float(scores[m, n]))} but "
        f"that of ({m + 1}, {n + 1}) is {_num(float(scores[m + 1, n + 1]))}, with the same offset {n - m}. With "
        "RoPE, (R_m q)ᵀ(R_n k) = qᵀ R_(n-m) k depends on the positions only through n - m: rotate every pair of "
        "coordinates by the angle m·θ_ℓ, linear in the position m",
    )


def _overwritten_pair(got: torch.Tensor, x: torch.Tensor, positions: torch.Tensor, base: float, layout: str) -> str:
    """One coordinate of each pair computed from the other one after it was already rotated (a view overwritten)."""
    angles = rope_angles(positions, x.shape[-1], base)
    cos, sin = angles.cos(), angles.sin()
    (a, b), (new_a, new_b) = _pairs(x, layout), _pairs(got, layout)
    right_a, right_b = a * cos - b * sin, a * sin + b * cos
    readings = (  # (the coordinate that is right, the one computed from it after its rotation, what it then is)
        (new_a, right_a, new_b, right_b, new_a * sin + b * cos, "the second coordinate of each pair", "first"),
        (new_b, right_b, new_a, right_a, a * cos - new_b * sin, "the first coordinate of each pair", "second"),
    )
    for kept, kept_right, read, read_right, overwritten, which, other in readings:
        if _close(kept, kept_right) and _close(read, overwritten) and not _close(read_right, overwritten):
            return (f"{which} is computed from the {other} one after it was already rotated: your {other} "
                    "coordinates were written over (into x, or into a view of it such as x[..., 0::2]) before the "
                    "other half of the pair read them. Read both coordinates of the pair from the original values, "
                    "e.g. a, b = x[..., 0::2].clone(), x[..., 1::2].clone(), and build the result as a new tensor "
                    "(torch.stack or torch.cat), without writing into x")
    return ""
