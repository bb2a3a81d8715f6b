"""Checker of the grouped-query attention exercise: sharing key-value heads among query heads.

:func:`~posenc.exercises.check_repeat_kv` checks the function that expands ``h_kv`` key (or
value) heads to the ``h`` query heads of grouped-query attention, the operation of
``transformers``' ``repeat_kv``: query head ``g`` reads key-value head ``g // (h / h_kv)``, so
each key-value head serves a block of consecutive query heads. It recognises the classic
mistake, ``repeat`` (which tiles the heads, so query head ``g`` reads head ``g % h_kv``)
instead of ``repeat_interleave``, as well as the wrong axis or group size, and says which
key-value head every query head received.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from ._readings import _Case
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
    _describe,
    _dtype,
    _expect_shape,
    _expect_tensor,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _unchanged,
)

__all__ = ["check_repeat_kv"]


def _sources(got: torch.Tensor, kv: torch.Tensor) -> list[int | None]:
    """For every query head of ``got``, the key-value head it equals (None if none)."""
    heads = []
    for query_head in range(got.shape[-3]):
        match = None
        for kv_head in range(kv.shape[-3]):
            if torch.equal(got[..., query_head, :, :], kv[..., kv_head, :, :]):
                match = kv_head
                break
        heads.append(match)
    return heads


def _shown(heads: list[int | None]) -> str:
    return "[" + ", ".join("?" if head is None else str(head) for head in heads) + "]"


@_public
def check_repeat_kv(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's key-value head sharing ``fn(kv, num_heads) -> (..., num_heads, L, d)``.

    ``kv`` holds keys (or values) of shape ``(..., h_kv, L, d)``; ``num_heads`` is the number
    ``h`` of query heads, a multiple of ``h_kv``. The result must give query head ``g`` the
    key-value head ``g // (h / h_kv)``, like ``kv.repeat_interleave(h // h_kv, dim=-3)`` and
    ``transformers``' ``repeat_kv``. The hidden cases include multi-query attention
    (``h_kv = 1``), ordinary multi-head attention (``h_kv = h``, nothing to repeat), groups
    of 2 to 5, inputs with and without a batch dimension, float32 and float64.

    Diagnosed mistakes: ``repeat`` instead of ``repeat_interleave`` (query head ``g`` then
    reads head ``g % h_kv``); the repetition along the wrong axis; the group size ``h``
    instead of ``h / h_kv``; an extra axis left by ``expand`` without a ``reshape``; dtype
    changed; ``kv`` modified in place; otherwise, which key-value head each query head
    received; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        cases = [((2, 2, 5, 4), 4), ((1, 2, 3, 8), 8), ((2, 4, 3, 4), 8), ((3, 1, 4, 4), 4), ((1, 4, 3, 4), 4),
                 ((2, 5, 7), 10), ((3, 6, 2, 4), 12)]
        for shape, num_heads in cases:
            kv = torch.randn(*shape, generator=generator, dtype=torch.float64)
            if len(shape) == 4 and shape[0] == 2:
                kv = kv.float()
            session.run(partial(_repeat_kv_case, session, kv, num_heads), {"unbatched"} if len(shape) == 3 else ())
        if session.failed_exactly_with("unbatched"):
            session.problem(
                "unbatched",
                "only the input without a batch axis, kv of shape (h_kv, L, d), failed; the batched (batch, h_kv, L, "
                "d) ones passed: a step assumes the batch axis, usually the head axis counted from the front (dim=1, "
                "kv.shape[1]), which is the head axis only when a batch axis comes first. Count it from the end: "
                "kv.shape[-3], dim=-3",
            )
        return [
            f"matches kv.repeat_interleave(h // h_kv, dim=-3) on {session.cases} hidden cases: multi-query (h_kv = 1), "
            "multi-head (h_kv = h) and groups of 2 to 5, with and without a batch dimension",
            "query head g reads key-value head g // (h / h_kv): each key-value head serves consecutive query heads",
        ]

    generator = torch.Generator().manual_seed(_SEED + 2)
    probes = [_Case((torch.randn(shape, generator=generator), heads), "probe")
              for shape, heads in (((2, 2, 5, 4), 4), ((1, 3, 4, 6), 6), ((2, 4, 3, 5), 8))]
    return _run_checker("sharing key-value heads (grouped-query attention)", fn, body, reading=_probing(
        fn, ("heads", "mixed"), _repeat_kv_reference, probes, "the heads", ("kv", "num_heads")))


def _repeat_kv_reference(kv: torch.Tensor, num_heads: int) -> torch.Tensor:
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-3)


def _repeat_kv_case(session: _Session, kv: torch.Tensor, num_heads: int) -> None:
    num_kv_heads = kv.shape[-3]
    group = num_heads // num_kv_heads
    given = kv.clone()
    call = f"fn({_describe('kv', kv)}, num_heads={num_heads}) with h_kv = {num_kv_heads}"
    returned = session.call(call, given, num_heads)
    _unchanged(session, {"kv": kv}, {"kv": given}, call)
    got = _expect_tensor(returned, "expanded heads", call)
    shape = (*kv.shape[:-3], num_heads, *kv.shape[-2:])
    if tuple(got.shape) == (*kv.shape[:-2], group, *kv.shape[-2:]):
        raise _Problem("expand", f"{call} returned shape {tuple(got.shape)}; expected {shape}: after expanding to "
                       "(..., h_kv, group, L, d), merge the two head axes with a reshape to (..., h, L, d)")
    if num_kv_heads > 1 and tuple(got.shape) == (*kv.shape[:-3], num_kv_heads * num_heads, *kv.shape[-2:]):
        raise _Problem("group", f"{call} returned {num_kv_heads * num_heads} heads; expected {num_heads}: each of the "
                       f"h_kv = {num_kv_heads} key-value heads is repeated h / h_kv = {group} times, not h times")
    heads_got = got.shape[-3] if got.dim() == kv.dim() else 0
    if tuple(got.shape[:-3]) + tuple(got.shape[-2:]) == tuple(kv.shape[:-3]) + tuple(kv.shape[-2:]) and (
            heads_got != num_heads and heads_got % num_kv_heads == 0):
        raise _Problem("times", f"{call} returned {heads_got} heads; expected {num_heads}: you repeated each of the "
                       f"h_kv = {num_kv_heads} key-value heads {heads_got // num_kv_heads} times; each is shared by "
                       f"h / h_kv = {group} query heads, so repeat it h // h_kv times")
    names = {-1: "feature axis", -2: "sequence axis", -4: "batch axis"}
    for axis in range(-kv.dim(), 0):
        repeated = list(kv.shape)
        repeated[axis] *= group
        if group > 1 and axis != -3 and tuple(got.shape) == tuple(repeated):
            where = f"the {names.get(axis, f'axis {axis}')} (dim={axis + kv.dim()} of this {kv.dim()}-D kv)"
            raise _Problem("axis", f"{call} returned shape {tuple(got.shape)}; expected {shape}: you repeated "
                           f"along {where}; the "
                           "head axis of (..., h_kv, L, d) is dim=-3, counted from the end so that any leading axes "
                           "are left alone")
    _expect_shape(got, shape, "expanded heads", call, " (..., num_heads, L, d)")
    if got.dtype != kv.dtype:
        session.problem("dtype", f"{call} returned dtype {_dtype(got.dtype)}; expected {_dtype(kv.dtype)}, the dtype "
                        "of kv: sharing heads only copies them")
    expected_heads = (torch.arange(num_heads) // group).tolist()
    expected = kv[..., expected_heads, :, :]
    if torch.equal(got.to(kv.dtype), expected):
        return
    heads = _sources(got.to(kv.dtype), kv)
    text = (
        f"{call}: query heads 0 .. {num_heads - 1} should read key-value heads {_shown(expected_heads)}, yours read "
        f"{_shown(heads)}"
    )
    if heads == [g % num_kv_heads for g in range(num_heads)]:
        raise _Problem("repeat", f"{text}: you tiled the heads, the whole set of key-value heads repeated one after "
                       "the other (as repeat, cat, or an expand on a new axis before the head axis do), instead of "
                       "repeating each one in place (repeat_interleave(h // h_kv, dim=-3), or an expand on a new axis "
                       "after it); query heads are grouped in consecutive blocks "
                       "that share one key-value head, as in the checkpoints of grouped-query models")
    for axis in range(-kv.dim(), 0):
        if axis == -3 or group == 1:
            continue
        tiling = [1] * kv.dim()
        tiling[axis] = group
        spreads = (("repeat_interleave", kv.repeat_interleave(group, dim=axis)), ("repeat", kv.repeat(tiling)))
        for how, spread in spreads:
            if torch.equal(got.to(kv.dtype), spread.reshape(shape)):
                where = names.get(axis, f"axis {axis}")
                raise _Problem("reshaped axis", f"{text}: you repeated along the {where} (dim={axis + kv.dim()}, "
                               f"with {how}) and reshaped to (..., h, L, d), so the reshape cuts the copies into "
                               "heads of mixed rows: repeat along the head axis, dim=-3 (or expand a new axis right "
                               "after it, (..., h_kv, 1, L, d)), before reshaping")
    if None in heads:
        raise _Problem("mixed", f"{text} ('?': a head that is not a copy of any key-value head): every query head must "
                       "be an exact copy of one key-value head")
    raise _Problem("heads", f"{text}: query head g reads key-value head g // (h / h_kv)")
