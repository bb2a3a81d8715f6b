"""Checkers of the relative-position exercises on tables and shifts: Shaw's rows and the skew.

- :func:`~posenc.exercises.check_shaw_index`: the row of Shaw et al.'s table that each
  query-key pair reads, ``clip(j - i, -c, c) + c``, with cached queries;
- :func:`~posenc.exercises.check_relative_shift`: the relative shift ("skew") of
  Transformer-XL, with a memory of cached keys.

The checkers of T5's buckets and ALiBi's slopes are in :mod:`posenc.exercises.t5_buckets` and
:mod:`posenc.exercises.alibi_slopes`.
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
    _expect_integer,
    _expect_shape,
    _expect_tensor,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _unchanged,
)

__all__ = ["check_shaw_index", "check_relative_shift"]


# --------------------------------------------------------------------------- Shaw et al.'s row index


def _shaw_rows(q_len: int, k_len: int, max_distance: int, query_offset: int, *, sign: int = 1, low: int | None = None,
               high: int | None = None, shift: bool = True, shift_first: bool = False) -> torch.Tensor:
    """Row numbers of Shaw et al.'s table, with knobs for the typical mistakes (reference by default)."""
    offsets = sign * (torch.arange(k_len)[None, :] - (query_offset + torch.arange(q_len))[:, None])
    low = -max_distance if low is None else low
    high = max_distance if high is None else high
    if shift_first:
        return (offsets + max_distance).clamp(low, high)
    return offsets.clamp(low, high) + (max_distance if shift else 0)


@_public
def check_shaw_index(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's row index of Shaw et al.'s table ``fn(q_len, k_len, max_distance, query_offset=0)``.

    The result is the ``(q_len, k_len)`` integer tensor of the rows that query ``r`` (at position
    ``i = query_offset + r``) and key ``j`` read from a table of ``2c + 1`` rows, ``c`` =
    ``max_distance``: ``clip(j - i, -c, c) + c``, as ``clipped_relative_positions(...) + c`` in
    :mod:`posenc.relative`. The hidden cases cover square and cached (``q_len < k_len`` with
    ``query_offset = k_len - q_len``) shapes, a chunk of queries followed by later keys
    (``query_offset < k_len - q_len``, also with no offset), ``c = 0`` and ``c`` beyond every offset.

    Diagnosed mistakes: ``i - j`` instead of ``j - i``; the shift by ``c`` missing (negative
    rows); the shift added before clipping to ``[-c, c]``; clipping to ``[0, 2c]`` before the
    shift; clipping to ``c - 1``; ``query_offset`` ignored; a float or boolean dtype (another
    integer dtype, such as int32, passes with a note), wrong shape; the
    row of a pair named when nothing else is recognised; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        # The last two cases put the queries before later keys (query_offset < k_len - q_len, a chunk of a longer
        # text): an answer that places them at the end, k_len - q_len + r, fails there, and one that counts the keys
        # with q_len fails with and without an offset, so that its failures are not read as query_offset's.
        cases = [(6, 6, 2, 0), (10, 10, 3, 0), (1, 1, 0, 0), (5, 5, 0, 0), (4, 4, 16, 0), (3, 9, 2, 6), (1, 12, 4, 11),
                 (5, 9, 3, 4), (4, 10, 3, 2), (3, 7, 2, 0)]
        causes: list[dict[str, str]] = []  # the causes that reproduce each case whose rows were wrong
        for q_len, k_len, max_distance, offset in cases:
            tags = {"offset"} if offset else set()
            session.run(partial(_shaw_case, session, q_len, k_len, max_distance, offset, causes), tags)
        # A cause is named only when it reproduces every case with wrong rows: on one case two slips can coincide.
        keys = list(dict.fromkeys(key for found in causes for key, message in found.items() if message))
        common = [key for key in keys if all(key in found for found in causes)]
        for key in keys:
            session.problems.pop(key, None)
        if common:
            message = next(found[common[0]] for found in causes if found.get(common[0]))
            session.problems = {common[0]: message, **session.problems}
        elif keys:
            first = next(message for found in causes for message in found.values() if message)
            text = first.split(": ", 2)
            session.problems.setdefault("rows", f"{text[0]}: {text[1]}. The row of pair (i, j) is clip(j - i, -c, c) "
                                        "+ c")
        if session.only_failed_with("offset"):
            session.problem(
                "offset hint",
                "only the cases with query_offset > 0 failed: query r sits at position i = query_offset + r (in cached "
                "decoding the new queries are the last tokens), so the offset is j - (query_offset + r)",
            )
        return [
            f"matches clipped_relative_positions(...) + max_distance on {session.cases} hidden cases: square and "
            "cached shapes (query_offset > 0), max_distance from 0 to 16",
            "row of pair (i, j) = clip(j - i, -c, c) + c, an integer in [0, 2c]",
        ]

    return _run_checker("Shaw et al.'s row index", fn, body, reading=_probing(
        fn, ("rows",), _shaw_probe_reference,
        [_Case((6, 6, 2), "probe"), _Case((4, 9, 3), "probe", {"query_offset": 5}), _Case((10, 10, 3), "probe")],
        "the rows", ("q_len", "k_len", "max_distance")))


def _shaw_probe_reference(q_len: int, k_len: int, max_distance: int, query_offset: int = 0) -> torch.Tensor:
    return _shaw_rows(q_len, k_len, max_distance, query_offset)


def _shaw_case(session: _Session, q_len: int, k_len: int, max_distance: int, offset: int,
               causes: list[dict[str, str]] | None = None) -> None:
    if offset:
        call = f"fn({q_len}, {k_len}, {max_distance}, query_offset={offset})"
        returned = session.call(call, q_len, k_len, max_distance, query_offset=offset)
    else:
        call = f"fn({q_len}, {k_len}, {max_distance})"
        returned = session.call(call, q_len, k_len, max_distance)
    got = _expect_tensor(returned, "rows", call)
    keys_hint = (f"; your key axis has q_len = {q_len} entries: the keys run over k_len = {k_len} (torch.arange(k_len))"
                 if got.dim() == 2 and got.shape[-1] == q_len != k_len else "")
    _expect_shape(got, (q_len, k_len), "rows", call, f" (q_len, k_len): one row number per query-key pair{keys_hint}")
    _expect_integer(session, got, "rows", call)
    got = got.long()
    expected = _shaw_rows(q_len, k_len, max_distance, offset)
    if torch.equal(got, expected):
        return
    c = max_distance
    r, j = (int(index) for index in (got != expected).nonzero()[0])
    i = offset + r
    text = (
        f"{call}: query {r} (position i = {i}) and key j = {j}, offset j - i = {j - i}, read row "
        f"clip({j - i}, -{c}, {c}) + {c} = {int(expected[r, j])}; got {int(got[r, j])}"
    )
    variants: list[tuple[dict[str, Any], str, str]] = [
        ({"sign": -1}, "sign", "you use i - j; the book's offset is j - i (key minus query), so keys after the query "
         "read the rows above c"),
        ({"shift": False}, "no shift", "the shift by c is missing: offsets run from -c to c, rows from 0 to 2c, "
         f"so add c = {c} after clipping (a negative row would silently index the table from its end)"),
        ({"shift_first": True}, "clip after shift", "you add c before clipping to [-c, c]: clip the offset first, "
         "then add c, clip(j - i, -c, c) + c (or clip j - i + c to [0, 2c])"),
        ({"low": 0, "high": 2 * c}, "clip to rows", "you clip the offset to [0, 2c] and then add c: [0, 2c] is the "
         "range of the rows; the offset is clipped to [-c, c]"),
        ({"low": -c + 1, "high": c - 1}, "c - 1", "you clip to [-(c - 1), c - 1]: Shaw et al. clip to [-c, c], and "
         "the table has 2c + 1 rows"),
        ({"low": -c, "high": c - 1}, "c - 1", "you clip the positive offsets to c - 1: the range is [-c, c], both "
         "ends included"),
    ]
    found: dict[str, str] = {}  # every cause that reproduces these rows, in order; the first is said
    offsets = torch.arange(k_len)[None, :] - (offset + torch.arange(q_len))[:, None]
    both_signs = bool((offsets > 0).any()) and bool((offsets < 0).any())
    if not both_signs:
        found["absolute"] = ""  # "" : the cause cannot show in this case, no evidence either way
    for shift_by in (c, 0):
        if both_signs and torch.equal(got, offsets.abs().clamp(max=c) + shift_by):
            found.setdefault("absolute", f"{text}: your rows come from |j - i|, the distance without its sign, so a "
                             "key k places before the query reads the same row as one k places after: Shaw et al.'s "
                             "table has one row per signed offset, clip(j - i, -c, c) + c")
    for knobs, key, explanation in variants:
        if key == "c - 1" and c == 0:  # with c = 0 the range [-(c - 1), c - 1] is empty: nothing to tell apart
            found.setdefault(key, "")
            continue
        if torch.equal(got, _shaw_rows(q_len, k_len, c, offset, **knobs)):
            found.setdefault(key, f"{text}: {explanation}")
            if not offset:  # without an offset, ignoring it cannot show
                found.setdefault(f"offset + {key}", "")
        if offset and torch.equal(got, _shaw_rows(q_len, k_len, c, 0, **knobs)):
            found.setdefault(f"offset + {key}", f"{text}: query_offset is ignored (query r sits at query_offset + "
                             f"r); and {explanation}")
    if not offset:
        found.setdefault("offset", "")
    if offset != k_len - q_len and torch.equal(got, _shaw_rows(q_len, k_len, c, k_len - q_len)):
        found.setdefault("queries at the end", f"{text}: you place query r at k_len - q_len + r, at the end of the "
                         "keys, instead of at query_offset + r: here the queries are followed by later keys "
                         f"(query_offset = {offset}, not k_len - q_len = {k_len - q_len}); use query_offset")
    if offset and torch.equal(got, _shaw_rows(q_len, k_len, c, 0)):
        found.setdefault("offset", f"{text}: query_offset is ignored: query r sits at position query_offset + r, "
                         "so in cached decoding the newest keys are the nearest, not the farthest")
    if not offset:
        found.setdefault("offset on keys", "")
    elif torch.equal(got, _shaw_rows(q_len, k_len, c, -offset)):
        found.setdefault("offset on keys", f"{text}: you added query_offset to the key positions (j + query_offset - "
                         "r): it belongs to the queries, query r sits at i = query_offset + r and key j at j, so the "
                         "offset is j - (query_offset + r)")
    shift = int((got - expected).flatten()[0])
    if bool((got - expected == shift).all()):
        found.setdefault(f"rows off by {shift}", f"{text}: every row is off by {shift:+d}: the clipping is right, "
                         f"but the shift is c {shift:+d} instead of c; the rows run 0 .. 2c, clip(j - i, -c, c) + c")
    if causes is not None:
        causes.append(found)
    named = next((name for name, message in found.items() if message), None)
    if named is not None:
        raise _Problem(named, found[named])
    low, high = int(got.min()), int(got.max())
    if low < 0 or high > 2 * c:
        unclipped = _shaw_rows(q_len, k_len, c, offset, low=-k_len - q_len - offset, high=k_len + q_len + offset)
        cause = (": the offsets are not clipped to [-c, c] before the shift by c (far pairs share the first or the "
                 "last row)") if torch.equal(got, unclipped) else ": clip(j - i, -c, c) + c stays in [0, 2c]"
        raise _Problem("rows out of range", f"{text}: your rows run from {low} to {high}, outside the table's 2c + 1 = "
                       f"{2 * c + 1} rows 0 .. 2c{cause}")
    if not bool((got.diff(dim=-1) >= 0).all()):
        raise _Problem("rows order", f"{text}: along a query's row your rows do not grow with the key j: the row "
                       "must increase with the offset j - i (a sign or an axis is reversed)")
    raise _Problem("rows", f"{text}. The row of pair (i, j) is clip(j - i, -c, c) + c")


# --------------------------------------------------------------------------- the relative shift


def _shift_reference(rel_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``out[..., r, j] = rel_logits[..., r, j + Lq - 1 - r]`` by a gather, and where that column exists."""
    q_len, k_len = rel_logits.shape[-2:]
    columns = torch.arange(k_len)[None, :] + (q_len - 1 - torch.arange(q_len))[:, None]
    visible = columns <= k_len - 1
    gathered = torch.gather(rel_logits, -1, columns.clamp(max=k_len - 1).expand(*rel_logits.shape[:-2], -1, -1))
    return gathered, visible


def _shift_variant(rel_logits: torch.Tensor, kind: str) -> torch.Tensor | None:
    """The typical wrong relative shifts (reshape tricks that keep the wrong rows or pad the wrong side)."""
    *batch, q_len, k_len = rel_logits.shape
    if kind == "first rows":
        padded = torch.nn.functional.pad(rel_logits, (1, 0))
        return padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :].reshape(*batch, q_len, k_len)
    if kind == "pad right":
        padded = torch.nn.functional.pad(rel_logits, (0, 1))
        return padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :].reshape(*batch, q_len, k_len)
    if kind == "unshifted":
        return rel_logits
    if kind == "flipped":
        return _shift_reference(rel_logits.flip(-1))[0]
    return None


@_public
def check_relative_shift(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's relative shift (skew) ``fn(rel_logits) -> (..., Lq, Lk)``, with a memory.

    ``rel_logits`` has shape ``(..., Lq, Lk)``, ``Lq <= Lk``: ``Lq`` queries at the *last*
    positions ``i = Lk - Lq + r`` of ``Lk`` keys (the keys of the segment and, before them, a
    cached memory, as in Transformer-XL), and column ``c`` holds ``q_r · a_δ`` for the offset
    ``δ = c - (Lk - 1)``, from ``-(Lk - 1)`` to 0. The result must hold ``q_r · a_(j - i)`` at
    ``(r, j)`` for every visible key, ``j <= i``: ``rel_logits[..., r, j + Lq - 1 - r]``. Entries
    above (future keys, hidden by the causal mask) are not checked. The hidden cases have square
    and non-square shapes, leading batch and head dimensions, float32 and float64 inputs.

    Diagnosed mistakes: the first ``Lq`` rows of the reshaped matrix kept instead of the last
    (every row moved up by one); the zero column padded on the right; no shift at all; the table
    read backwards; a reshape that assumes ``Lq == Lk``; dtype or shape changed; the input
    modified in place; otherwise, the column every visible entry was read from as one formula in ``r``, ``j``,
    ``Lq`` and ``Lk`` (modulo ``Lk`` for a roll, or clamped), or the entry the wrong value was taken from;
    exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        shapes = [((6, 6), torch.float64), ((2, 3, 5, 5), torch.float32), ((1, 1), torch.float64),
                  ((3, 8), torch.float64), ((2, 4, 4, 7), torch.float32), ((1, 5), torch.float64),
                  ((2, 7, 12), torch.float64)]
        failures: list[tuple[str, set[str]]] = []
        answers: list[tuple[torch.Tensor, torch.Tensor]] = []
        for shape, dtype in shapes:
            rel_logits = torch.randn(*shape, generator=generator, dtype=torch.float64).to(dtype)
            tags = {"memory"} if shape[-2] != shape[-1] else set()
            session.run(partial(_shift_case, session, rel_logits, failures, answers), tags)
        # A mistake is named only when it explains every case whose values were wrong.
        common = set.intersection(*(kinds for _, kinds in failures)) if failures else set()
        named = [kind for kind in _SHIFT_EXPLANATIONS if kind in common]
        if named:
            for key in [key for key in session.problems if key == "shift" or key in _SHIFT_EXPLANATIONS]:
                del session.problems[key]
            session.problems[named[0]] = f"{failures[0][0]}: {_SHIFT_EXPLANATIONS[named[0]]}"
        elif "shift" in session.problems and (formula := _source_formula(answers)) is not None:
            session.problems["shift"] = f"{formula}\n{session.problems['shift']}"
        if session.failed_exactly_with("memory"):
            session.problem(
                "memory hint",
                "your shift works when Lq == Lk but not with a memory (Lq < Lk): pad to (..., Lq, Lk + 1), read the "
                "same memory as (..., Lk + 1, Lq), drop the first row and read the rest as (..., Lq, Lk)",
            )
        return [
            f"entry (r, j) holds q_r · a_(j - i), i = Lk - Lq + r, for every visible key j <= i, in {session.cases} "
            "hidden cases: square and with a memory (Lq < Lk), with batch and head dimensions, float32 and float64",
            "keeps the dtype and leaves rel_logits unchanged",
        ]

    probes = [_Case((torch.randn(shape, generator=torch.Generator().manual_seed(_SEED + 2), dtype=torch.float64),),
                    "probe") for shape in ((5, 5), (3, 7), (2, 4, 6))]
    return _run_checker("relative shift (skew)", fn, body, reading=_probing(
        fn, ("shift",), lambda rel_logits: _shift_reference(rel_logits)[0], probes, "the shifted logits",
        ("rel_logits",), output=_visible_only))


def _visible_only(shifted: Any) -> Any:
    """The entries of a shifted table that the exercise defines (keys up to the query), the others set to 0."""
    if not isinstance(shifted, torch.Tensor) or shifted.dim() < 2:
        return shifted
    q_len, k_len = shifted.shape[-2:]
    visible = torch.arange(k_len)[None, :] <= torch.arange(q_len)[:, None] + k_len - q_len
    return torch.where(visible, shifted, torch.zeros_like(shifted))


_SHIFT_EXPLANATIONS = {
    "first rows": "every entry is read 1 row above and 1 column to the right of the right one (the previous "
    "query's row): you keep the first Lk rows of the (..., Lk + 1, Lq) view, all but the last; drop the first row "
    "instead ([..., 1:, :]): keeping the first moves every row up by one, so entry (r, j) holds the previous query "
    "with the offset one step too near",
    "pad right": "every entry is read one column to the right of its offset (column j + Lq - r instead of "
    "j + Lq - 1 - r; the diagonal gets 0): an index off by one, or the zero column padded on the right: the zero "
    "column goes on the left, (1, 0) in F.pad; with indices, entry (r, j) is rel_logits[..., r, j + Lq - 1 - r]",
    "unshifted": "these are the unshifted logits: column c of row r holds offset c - (Lk - 1), and row r must move "
    "left by Lq - 1 - r places so that column j holds offset j - i",
    "flipped": "you read the table backwards: column c of rel_logits holds the offset δ = c - (Lk - 1) (the "
    "most negative first, offset 0 last), not -δ",
}


def _shift_case(session: _Session, rel_logits: torch.Tensor, failures: list[tuple[str, set[str]]],
                answers: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
    *batch, q_len, k_len = rel_logits.shape
    given = rel_logits.clone()
    call = f"fn({_describe('rel_logits', rel_logits)}) with Lq = {q_len}, Lk = {k_len}"
    returned = session.call(call, given)
    _unchanged(session, {"rel_logits": rel_logits}, {"rel_logits": given}, call)
    got = _expect_tensor(returned, "shifted logits", call)
    _expect_shape(got, tuple(rel_logits.shape), "shifted logits", call, " (..., Lq, Lk), the shape of rel_logits")
    if got.dtype != rel_logits.dtype:
        session.problem("dtype", f"{call} returned dtype {_dtype(got.dtype)}; expected {_dtype(rel_logits.dtype)}, the "
                        "dtype of rel_logits: the shift only moves entries")
    expected, visible = _shift_reference(rel_logits)
    visible = visible.expand_as(expected)
    if torch.equal(got.to(rel_logits.dtype)[visible], expected[visible]):
        return
    wrong = visible & (got.to(rel_logits.dtype) != expected)
    index = tuple(int(i) for i in wrong.nonzero()[0])
    r, j = index[-2:]
    i = k_len - q_len + r
    text = (
        f"{call}: entry (r = {r}, j = {j}), query at position i = {i}, offset j - i = {j - i}, should be "
        f"rel_logits[..., {r}, {j - i + k_len - 1}] = {_num(float(expected[index]))}, got {_num(float(got[index]))}"
    )
    answers.append((rel_logits, got.to(rel_logits.dtype)))
    kinds = set()
    for kind in _SHIFT_EXPLANATIONS:
        candidate = _shift_variant(rel_logits, kind)
        if candidate is not None and not torch.equal(candidate[visible], expected[visible]) and torch.equal(
            got.to(rel_logits.dtype)[visible], candidate[visible]
        ):
            kinds.add(kind)
    failures.append((text, kinds))
    if q_len > 1 and torch.equal(got.to(rel_logits.dtype).flip(-2)[visible], expected[visible]):
        raise _Problem("rows flipped", f"{text}: your rows are in reverse order: row r must hold query r, the query at "
                       "position Lk - Lq + r (drop the flip)")
    if q_len == k_len and torch.equal(got.to(rel_logits.dtype).transpose(-2, -1)[visible], expected[visible]):
        raise _Problem("transposed", f"{text}: your result is transposed: it holds entry (r, j) at (j, r); rows are "
                       "the queries r and columns the keys j, as in rel_logits (drop the final transpose)")
    value = got.to(rel_logits.dtype)[index]
    sources = (rel_logits[index[:-2]] == value).nonzero() if value != 0 else torch.empty(0, 2)
    if value == 0:
        where = "0, the value of the zero padding"
    elif len(sources):
        source_r, source_c = (int(v) for v in sources[0])
        where = f"rel_logits[..., {source_r}, {source_c}] (query {source_r}, offset {source_c - k_len + 1})"
    else:
        where = "a value that is not an entry of rel_logits: the shift should only move entries"
    if (own_row := _own_row_reading(got.to(rel_logits.dtype), rel_logits, visible)) is not None:
        raise _Problem("shift side", f"{text}: {own_row}")
    raise _Problem("shift", f"{text}, which is {where}{_shift_pattern(got.to(rel_logits.dtype), rel_logits, wrong)}")


def _own_row_reading(got: torch.Tensor, rel_logits: torch.Tensor, visible: torch.Tensor) -> str | None:
    """Name a skew padded on the right: the entries read from their own row are at column ``j - r``.

    The right column is ``j + Lq - 1 - r``. A skew padded on the right that drops the last row reads ``j - r`` (row r
    moves right by r) for the entries it takes from their own row, and the previous row or the padding for the
    others; an index written as ``j - r`` does the same. Only entries found exactly once in their own row count, and
    they must be most of the visible ones, or every visible entry must be the right-padded table's.
    """
    q_len, k_len = rel_logits.shape[-2:]
    if q_len < 2 or k_len < 3:
        return None
    constants, counted = set(), 0
    for index in visible.nonzero().tolist()[:400]:
        *batch, r, j = index
        sources = (rel_logits[(*batch, r)] == got[tuple(index)]).nonzero().flatten().tolist()
        if len(sources) == 1:
            constants.add(sources[0] - j + r)
            counted += 1
    if constants != {0} or (2 * counted < min(int(visible.sum()), 400) and not _padded_right(got, rel_logits, visible)):
        return None
    return (f"the entries you read from the query's own row are at column j - r, {q_len - 1} column"
            f"{'s' if q_len > 2 else ''} to the left of the right one, j + Lq - 1 - r: row r moves right by r instead "
            "of left by Lq - 1 - r. That is what the zero column padded on the right gives when the last row of the "
            "(..., Lk + 1, Lq) view is dropped (F.pad(x, (0, 1)), then [..., :-1, :]), or an index j - r: the skew "
            "pads on the left, F.pad(x, (1, 0)), and drops the first row")


def _padded_right(got: torch.Tensor, rel_logits: torch.Tensor, visible: torch.Tensor) -> bool:
    """Whether every visible entry is the flat (..., Lq, Lk + 1) right-padded table read at row r, column j - r."""
    *batch, q_len, k_len = rel_logits.shape
    flat = torch.nn.functional.pad(rel_logits, (0, 1)).reshape(*batch, q_len * (k_len + 1))
    rows, columns = torch.arange(q_len)[:, None], torch.arange(k_len)[None, :]
    start = rows * (k_len + 1) + columns - rows  # row r's entry j - r of the padded rows, spilling into row r - 1
    inside = (start >= 0).expand_as(visible)
    read = torch.gather(flat, -1, start.clamp(min=0).flatten().expand(*batch, -1)).reshape(got.shape)
    return bool(inside[visible].all()) and torch.equal(read[visible], got[visible])


def _shift_pattern(got: torch.Tensor, rel_logits: torch.Tensor, wrong: torch.Tensor) -> str:
    """Where every wrong entry was read from, when they all share one displacement from the right entry."""
    q_len, k_len = rel_logits.shape[-2:]
    moves = set()
    for index in wrong.nonzero().tolist()[:200]:
        *batch, r, j = index
        value = got[tuple(index)]
        if value == 0:
            continue
        sources = (rel_logits[tuple(batch)] == value).nonzero()
        if len(sources) != 1:
            return ""
        source_r, source_c = (int(v) for v in sources[0])
        moves.add((source_r - r, source_c - (j + q_len - 1 - r)))
        if len(moves) > 1:
            return ""
    if len(moves) != 1:
        return ""
    rows, columns = moves.pop()
    parts = []
    if rows:
        parts.append(f"{abs(rows)} row{'s' if abs(rows) > 1 else ''} {'below' if rows > 0 else 'above'}")
    if columns:
        parts.append(f"{abs(columns)} column{'s' if abs(columns) > 1 else ''} to the "
                     f"{'right' if columns > 0 else 'left'}")
    return (f"; every wrong entry is read {' and '.join(parts)} of the right one, rel_logits[..., r, j + Lq - 1 - r]"
            if parts else "")


def _source_formula(answers: list[tuple[torch.Tensor, torch.Tensor]]) -> str | None:
    """The column every visible entry of the answer was read from, as one formula in r, j, Lq and Lk on every case.

    Entry ``(r, j)`` must be ``rel_logits[..., r, j + Lq - 1 - r]``; an answer that reads every visible entry from its
    own row at ``a j + b r + c`` (``a``, ``b`` in -1, 0, 1; ``c`` in terms of Lq and Lk) is said by that formula, the
    index the student computed. Cases where entries repeat (a value found twice in its row) cannot show it.
    """
    fits: set[str] | None = None
    last_column_only = True  # every visible entry reads column Lk - 1, the offset 0
    for rel_logits, got in answers:
        *_, q_len, k_len = rel_logits.shape
        if k_len < 3:  # too few columns to tell formulas apart
            continue
        visible = _shift_reference(rel_logits)[1].expand_as(got)
        last_column_only &= bool((got == rel_logits[..., -1:]).expand_as(got)[visible].all())
        constants = {"0": 0, "Lq - 1": q_len - 1, "Lq": q_len, "Lk - 1": k_len - 1, "Lk": k_len,
                     "Lk - Lq": k_len - q_len, "Lq - 2": q_len - 2, "1": 1}
        found = set()
        for a, b in ((1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1), (-1, -1), (0, -1), (0, 1)):
            for text, c in [*constants.items(), *((f"-({t})", -v) for t, v in constants.items() if v)]:
                rows, columns = torch.arange(q_len)[:, None], torch.arange(k_len)[None, :]
                source = a * columns + b * rows + c
                inside = ((source >= 0) & (source < k_len)).expand_as(visible)
                terms = [f"{'' if a == 1 else '-'}j" if a else "", f"{'+' if b == 1 else '-'} r" if b else ""]
                said = " ".join(t for t in terms if t).lstrip("+ ") + (
                    f" - {text[2:-1]}" if text.startswith("-(") and " " not in text else f" - {text[1:]}"
                    if text.startswith("-(") else f" + {text}" if c else "")
                gathered = torch.gather(rel_logits, -1, source.clamp(0, k_len - 1).expand_as(rel_logits))
                if bool(inside[visible].all()) and torch.equal(gathered[visible], got[visible]):
                    found.add(said)
                if not bool(inside[visible].all()) and torch.equal(gathered[visible], got[visible]):
                    found.add(f"{said}, clamped to 0 .. Lk - 1")
                zeroed = torch.where(inside, gathered, torch.zeros((), dtype=gathered.dtype))  # a shift filled with 0
                if not bool(inside[visible].all()) and torch.equal(zeroed[visible], got[visible]):
                    found.add(f"{said}, and 0 where it runs past the end of the row")
                wrapped = torch.gather(rel_logits, -1, (source % k_len).expand_as(rel_logits))  # a roll: mod Lk
                if not bool(inside[visible].all()) and torch.equal(wrapped[visible], got[visible]):
                    found.add(f"({said}) mod Lk")
        fits = found if fits is None else fits & found
    if not fits:
        return None
    if last_column_only:
        return ("every visible entry of yours, each key at or before its query, reads the last column Lk - 1, which "
                "holds the offset 0: your column index lands at or beyond the last column for every past key and is "
                "clamped there, as when the offset is taken as i - j instead of j - i (column (i - j) + Lk - 1); the "
                "right one is rel_logits[..., r, j + Lq - 1 - r] (column c holds the offset c - (Lk - 1), so column "
                "j + Lq - 1 - r holds j - i)")
    formula = sorted(fits, key=len)[0]
    roll = (": a roll (torch.roll) wraps the columns around, and by the wrong amount or the wrong way; the skew moves "
            "row r left by Lq - 1 - r") if "mod" in formula else ""
    if formula.startswith("j + r") and not roll:
        roll = (": you moved row r left by r, an amount that grows with r; the skew runs the other way, row r moves "
                "left by Lq - 1 - r (the last query keeps its row as it is)")
    index, _, zeros = formula.partition(", and 0 where")
    zeros = f" (0 where {zeros.strip()})" if zeros else ""
    return (f"on every case your entry (r, j) is rel_logits[..., r, {index}]{zeros}{roll}: the right one is "
            "rel_logits[..., r, j + Lq - 1 - r] (column c holds the offset c - (Lk - 1), so column j + Lq - 1 - r "
            "holds j - i)")
