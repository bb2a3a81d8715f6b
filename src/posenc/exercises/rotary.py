"""Checkers of the rotary exercises: RoPE on a tensor of queries or keys, in one and two dimensions.

:func:`~posenc.exercises.check_apply_rope` compares the student's rotation with :func:`posenc.rotary.apply_rope` for
the chosen layout, and checks the property that makes RoPE relative: the score of a rotated query and key depends
only on their offset. It recognises a rotation in the wrong direction, the other layout, ``positions`` or ``base``
ignored, and a map that is not a rotation at all. :func:`~posenc.exercises.check_apply_rope_2d` does the same for
axial 2-D RoPE on a grid of patches (:func:`posenc.rope2d.apply_rope_2d`), and recognises both halves rotated by the
same positions, rows and columns swapped, and the frequencies of the wrong dimension.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from .._validation import check_choice
from ..rotary import ROPE_LAYOUTS, apply_rope, rope_frequencies
from ._angles import (
    _halves_positions,
    _pairing,
    _positions_text,
    _positions_used,
    _rope_bound,
    _rounding_sized,
    _token_errors,
    _unrotated_pairs,
)
from ._probes import _rope_2d_probe_reference, _rope_2d_probes, _rope_probe_reference, _rope_probes
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

__all__ = ["check_apply_rope", "check_apply_rope_2d"]


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
        "column index 2ℓ, as in torch.arange(0, d, 2) / d",
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


# --------------------------------------------------------------------------- 2-D RoPE


def _rope_2d_variant(
    x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor, base: float, kind: str | None = None
) -> torch.Tensor:
    """Axial 2-D RoPE (the reference when ``kind`` is None) or one of its typical mistakes."""
    dim = x.shape[-1]
    first_positions, second_positions = rows, columns
    frequencies = None
    if kind == "rows twice":
        second_positions = rows
    elif kind == "columns twice":
        first_positions = columns
    elif kind == "swapped":
        first_positions, second_positions = columns, rows
    elif kind == "full dim":
        frequencies = rope_frequencies(dim, base)[: dim // 4]
    elif kind == "base":
        base = 10000.0
    if kind == "strided":
        evens = apply_rope(x[..., 0::2], rows, base=base)
        odds = apply_rope(x[..., 1::2], columns, base=base)
        return torch.stack((evens, odds), dim=-1).flatten(-2)
    layout = "half" if kind == "half" else "interleaved"
    first, second = x.chunk(2, dim=-1)
    if frequencies is not None:
        rotated = (apply_rope(first, first_positions, frequencies=frequencies, layout=layout),
                   apply_rope(second, second_positions, frequencies=frequencies, layout=layout))
    else:
        rotated = (apply_rope(first, first_positions, base=base, layout=layout),
                   apply_rope(second, second_positions, base=base, layout=layout))
    return torch.cat(rotated, dim=-1)


@_public
def check_apply_rope_2d(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's axial 2-D RoPE ``fn(x, rows, columns, base=10000.0) -> tensor like x``.

    ``x`` has shape ``(..., n, d)``, ``d`` a multiple of 4; ``rows`` and ``columns`` are 1-D
    tensors of the ``n`` grid positions. The result must equal
    :func:`posenc.rope2d.apply_rope_2d`: the first ``d/2`` coordinates rotated by 1-D RoPE of
    dimension ``d/2`` (interleaved pairs) at the rows, the last ``d/2`` at the columns; keep the
    shape and dtype of ``x``; and leave ``x`` unchanged. The hidden cases include grids of
    patches, shuffled and real-valued positions, batch and head dimensions, float32 and base
    100; a property case checks that scores depend only on the 2-D offset.

    Diagnosed mistakes: both halves rotated by the rows (or by the columns); rows and columns
    swapped; each half given the frequencies of the full dimension ``d`` instead of ``d/2``;
    even and odd coordinates split instead of halves; the half layout inside each half; the
    base ignored; dtype or shape changed; ``x`` modified in place; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)

        def grid(height: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
            cells = torch.arange(height * width)
            return cells // width, cells % width

        shuffled = torch.randperm(6, generator=generator)
        cases = [
            (torch.randn(6, 8, generator=generator, dtype=torch.float64), *grid(2, 3), None),
            (torch.randn(2, 3, 12, 16, generator=generator).float(), *grid(3, 4), None),
            (torch.randn(6, 4, generator=generator, dtype=torch.float64), shuffled, (shuffled * 7) % 5, None),
            (torch.randn(5, 32, generator=generator, dtype=torch.float64),
             torch.tensor([0.5, 2.0, 9.0, -3.0, 40.0], dtype=torch.float64),
             torch.tensor([1.0, 0.25, 31.0, 6.0, -2.0], dtype=torch.float64), 100.0),
            (torch.randn(1, 9, 8, generator=generator, dtype=torch.float64), *grid(3, 3), 100.0),
        ]
        for x, rows, columns, base in cases:
            session.run(partial(_rope_2d_case, session, x, rows, columns, base))
        session.run(partial(_rope_2d_relative_case, session, generator))
        return [
            f"matches posenc.apply_rope_2d on {session.cases - 1} hidden cases: grids of patches, shuffled and "
            "real-valued positions, batch and head dimensions, float32 and float64, base 100",
            "scores between rotated queries and keys depend only on the 2-D offset (row and column differences)",
            "keeps the shape and dtype of x and leaves x unchanged",
        ]

    return _run_checker("axial 2-D rotary position embedding", fn, body,
                        reading=_probing(fn, ("rope 2d values",), _rope_2d_probe_reference, _rope_2d_probes(),
                                         "the rotated vectors", ("x", "rows", "columns"), atol=1e-3, rtol=1e-3))


def _rope_2d_call(
    session: _Session, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor, base: float | None
) -> tuple[Any, str]:
    given = x.clone()
    parts = [_describe("x", x), f"rows={_values(rows, limit=6)}", f"columns={_values(columns, limit=6)}"]
    kwargs = {} if base is None else {"base": base}
    if base is not None:
        parts.append(f"base={base:g}")
    call = f"fn({', '.join(parts)})"
    returned = session.call(call, given, rows.clone(), columns.clone(), **kwargs)
    _unchanged(session, {"x": x}, {"x": given}, call)
    return returned, call


def _rope_2d_case(
    session: _Session, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor, base: float | None
) -> None:
    returned, call = _rope_2d_call(session, x, rows, columns, base)
    got = _expect_tensor(returned, "a tensor like x", call)
    _expect_shape(got, tuple(x.shape), "a tensor", call, " (the shape of x)")
    if got.dtype != x.dtype:
        session.problem("dtype", f"{call} returned dtype {_dtype(got.dtype)}; expected {_dtype(x.dtype)}, the dtype "
                        "of x: cast the result back with .to(x.dtype)")
    _expect_floating(got, "a tensor", call, f"{_dtype(x.dtype)}, the dtype of x")
    got = got.double()
    actual_base = 10000.0 if base is None else base
    expected = _rope_2d_variant(x.double(), rows, columns, actual_base)
    tolerance = 1e-5 if x.dtype == torch.float32 else 1e-9
    if _close(got, expected, atol=tolerance, rtol=tolerance):
        return
    dim = x.shape[-1]
    explanations = {
        "rows twice": "both halves are rotated by the rows: the second half (the last d/2 coordinates) must be "
        "rotated by the columns",
        "columns twice": "both halves are rotated by the columns: the first half must be rotated by the rows",
        "swapped": "rows and columns are swapped: the first half is rotated by the rows, the second by the columns",
        "full dim": f"each half uses the frequencies of the full dimension d = {dim}, base^(-2ℓ/d), ℓ < d/4: each half "
        f"is a 1-D RoPE of dimension d/2 = {dim // 2}, with θ_ℓ = base^(-2ℓ/(d/2)) = base^(-4ℓ/d)",
        "strided": "you split the coordinates into evens and odds; axial RoPE splits them into halves, "
        "x[..., :d/2] (rows) and x[..., d/2:] (columns), each with interleaved pairs",
        "half": "inside each half you pair (ℓ, ℓ + d/4), the half layout; this exercise uses interleaved pairs "
        "(2ℓ, 2ℓ+1) in each half, as posenc.apply_rope does by default",
        "base": f"your function ignores its base argument: called with base={actual_base:g}, it uses base 10000",
    }
    for kind, explanation in explanations.items():
        if kind == "base" and actual_base == 10000.0:
            continue
        candidate = _rope_2d_variant(x.double(), rows, columns, actual_base, kind)
        if _close(got, candidate, atol=tolerance, rtol=tolerance):
            raise _Problem(kind, f"in {call}: {explanation}")
    for name, integer in (("truncated", torch.trunc), ("floored", torch.floor), ("rounded", torch.round)):
        exact = torch.equal(integer(rows), rows) and torch.equal(integer(columns), columns)
        if rows.is_floating_point() and not exact:
            candidate = _rope_2d_variant(x.double(), integer(rows), integer(columns), actual_base)
            if _close(got, candidate, atol=tolerance, rtol=tolerance):
                raise _Problem("integer positions", f"in {call}: your rotation uses the positions {name} to integers: "
                               "rows and columns may be real numbers (interpolated grids); keep them in floating point")
    both = apply_rope(apply_rope(x.double(), rows, base=actual_base), columns, base=actual_base)
    if _close(got, both, atol=tolerance, rtol=tolerance):
        raise _Problem("both on whole", f"in {call}: you rotated the whole vector twice, at the row and then at the "
                       "column (R_column R_row x): the two rotations add their angles in every pair, so only row + "
                       "column counts; rotate the first d/2 coordinates at the row and the last d/2 at the column")
    whole = {"the rows": rows, "the columns": columns, "the token index (raster order)": torch.arange(x.shape[-2])}
    for name, positions in whole.items():
        if _close(got, apply_rope(x.double(), positions, base=actual_base), atol=tolerance, rtol=tolerance):
            raise _Problem("1-D", f"in {call}: you applied one 1-D RoPE of dimension d = {dim} to the whole vector, at "
                           f"{name}: axial RoPE rotates the first d/2 coordinates at the row and the last d/2 at the "
                           "column, each half a 1-D RoPE of dimension d/2, so that both the row and the column "
                           "enter")
    halves = {"first half (the rows)": slice(0, dim // 2), "second half (the columns)": slice(dim // 2, dim)}
    for (name, part), where in zip(halves.items(), (rows, columns), strict=True):
        bases = {f"base² = {actual_base ** 2:g}": actual_base ** 2,
                 f"√base = {actual_base ** 0.5:g}": actual_base ** 0.5, "10000": 10000.0}
        theta = actual_base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
        for factor in (0.5, 2.0):
            if not _close(got[..., part], expected[..., part], atol=tolerance, rtol=tolerance) and _close(
                    got[..., part], apply_rope(x.double()[..., part], where, frequencies=factor * theta),
                    atol=tolerance, rtol=tolerance):
                raise _Problem("half frequencies", f"in {call}: your {name} turns at {factor:g} times the frequencies "
                               "of 1-D RoPE of dimension d/2, base^(-2ℓ/(d/2)): use them as they are")
        for shown, other in bases.items():
            if other != actual_base and not _close(got[..., part], expected[..., part], atol=tolerance,
                                                   rtol=tolerance) and _close(got[..., part], apply_rope(
                    x.double()[..., part], where, base=other), atol=tolerance, rtol=tolerance):
                raise _Problem("half base", f"in {call}: your {name} rotates with the base {shown}, not the base "
                               f"{actual_base:g} given: both halves use the same base")
    for name, part in halves.items():
        if not _close(got[..., part], expected[..., part], atol=tolerance, rtol=tolerance) and _close(
            got[..., part], x.double()[..., part], atol=tolerance, rtol=tolerance
        ):
            raise _Problem(f"unrotated {name}", f"in {call}: the {name} is not rotated, it equals x's own coordinates: "
                           "rotate x[..., :d/2] at the rows and x[..., d/2:] at the columns, each a 1-D RoPE of "
                           "dimension d/2, and concatenate the two")
    read = _halves_positions(got, x.double(), rows, columns, actual_base)
    index = _first_difference(got, expected, atol=tolerance)
    coordinate, token = index[-1], index[-2]
    half = "first half (rows)" if coordinate < dim // 2 else "second half (columns)"
    should, was = _distinct(float(expected[index]), float(got[index]))
    raise _Problem(
        "rope 2d values", (f"{read}\n" if read else "") +
        f"in {call}: token {token} (row {_num(float(rows[token]))}, column {_num(float(columns[token]))}), coordinate "
        f"{coordinate}, in the {half}, should be {should}, got {was}; the first d/2 coordinates are rotated by 1-D "
        "RoPE of dimension d/2 at the row, the last d/2 at the column",
    )


def _rope_2d_relative_case(session: _Session, generator: torch.Generator) -> None:
    dim, side = 8, 4
    q, k = (torch.randn(dim, generator=generator, dtype=torch.float64) for _ in range(2))
    cells = torch.arange(side * side)
    rows, columns = cells // side, cells % side
    rotated = []
    for vector in (q, k):
        x = vector.expand(side * side, -1).clone()
        call = (
            f"fn(x of shape ({side * side}, {dim}) (float64) holding the same vector at every cell of a "
            f"{side}x{side} grid)"
        )
        returned = session.call(call, x, rows.clone(), columns.clone())
        got = _expect_tensor(returned, "a tensor like x", call)
        _expect_shape(got, tuple(x.shape), "a tensor", call, " (the shape of x)")
        _expect_floating(got, "a tensor", call, "float64, the dtype of x")
        rotated.append(got.double())
    scores = rotated[0] @ rotated[1].T
    row_offset = rows[None, :] - rows[:, None]
    column_offset = columns[None, :] - columns[:, None]
    for a in range(side * side):
        for b in range(side * side):
            same = (row_offset == row_offset[a, b]) & (column_offset == column_offset[a, b])
            spread = float(scores[same].max() - scores[same].min())
            if spread > 1e-6 * (1 + float(scores.abs().max())):
                session.problem(
                    "relative 2d",
                    "scores are not relative: with the same query vector at every cell and the same key vector at "
                    f"every cell, the pairs of cells with 2-D offset ({int(row_offset[a, b])}, "
                    f"{int(column_offset[a, b])}) get scores from {_num(float(scores[same].min()))} to "
                    f"{_num(float(scores[same].max()))}; axial RoPE gives R(i)ᵀR(j) = R(j - i) for each half",
                )
                return
