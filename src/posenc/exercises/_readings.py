"""Reading a wrong answer for what it says about the slip, whatever the exercise.

The readings here need no mistake model: a constant factor or offset on every entry, a count that is an average
(``_reduction``), a nan and the empty sum that makes it, the sizes of a PyTorch shape error named as axes of the
arguments, two arguments of the same kind used in each other's place, an answer in reverse order or with one block
of columns of the opposite sign, an answer right to three significant digits only, and the arguments the answer does
not use, found by a probe of the student's function (each argument changed alone, on every hidden case).
``posenc.exercises.comparing`` reads them off a failed case when no typical mistake explains the answer; the family
modules use some of them in their own readings (which cached keys a cache holds, how decoding positions step).
Nothing here names a cause that one case alone could suggest: a reading is a fact about the answer, or, for the
probe, about every hidden case.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..rotary import apply_rope
from .checking import _SEED, _close, _dtype, _num, _Problem, _type_name

__all__: list[str] = []


@dataclass(frozen=True)
class _Case:
    """One hidden input: arguments and how the report shows the call."""

    args: tuple[Any, ...]
    shown: str
    kwargs: dict[str, Any] | None = None


def _as_values(value: object, what: str, call: str) -> torch.Tensor:
    """A student's return value (tensor, number, NumPy array, tuple of numbers) as a float64 tensor."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
    elif isinstance(value, bool) or value is None:
        raise _Problem("return type", f"{call} returned {_type_name(value)}; expected {what}")
    elif isinstance(value, (int, float)):
        tensor = torch.tensor(float(value), dtype=torch.float64)
    elif type(value).__module__ == "numpy":
        try:
            tensor = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            raise _Problem("return type", f"{call} returned {_type_name(value)}; expected {what}") from None
    elif isinstance(value, (list, tuple)):
        try:
            tensor = torch.tensor([float(item) for item in value], dtype=torch.float64)  # type: ignore[arg-type]
        except (TypeError, ValueError, RuntimeError):
            raise _Problem(
                "return type", f"{call} returned {_type_name(value)} that is not a sequence of numbers; expected {what}"
            ) from None
    else:
        raise _Problem("return type", f"{call} returned {_type_name(value)}; expected {what}")
    if tensor.is_complex() or tensor.dtype == torch.bool:
        raise _Problem("dtype", f"{call} returned values of dtype {_dtype(tensor.dtype)}; expected "
            f"{what} (real numbers)")
    return tensor.double()


def _index_text(index: tuple[int, ...]) -> str:
    return f"index {index}" if len(index) != 1 else f"index {index[0]}"


_MET_SIZES = re.compile(r"(?:inner sizes|an axis of size) (\d+) (?:and|with one of size) (\d+)")


def _sizes_of_arguments(message: str, reference: Callable[..., Any], case: _Case) -> str | None:
    """Which axes of the arguments the two sizes of a shape error are: "6 is y.shape[0]; 2 is z.shape[0]"."""
    match = _MET_SIZES.search(message)
    if match is None:
        return None
    names = list(inspect.signature(reference).parameters)
    arguments = [(names[i] if i < len(names) else f"argument {i + 1}", arg) for i, arg in enumerate(case.args)]
    arguments += list((case.kwargs or {}).items())
    said = []
    for size in dict.fromkeys(int(group) for group in match.groups()):
        axes = [f"{name}.shape[{axis}]" for name, arg in arguments if isinstance(arg, torch.Tensor)
                for axis in range(arg.dim()) if arg.shape[axis] == size]
        if axes:
            said.append(f"{size} is {' = '.join(axes[:3])}")
    if not said:
        return None
    return ("in this call " + "; ".join(said) + ": the two sizes come from these axes, so one of your tensors is built "
            "from another argument or axis than you meant")


def _perturbed(value: object, generator: torch.Generator) -> object | None:
    """Another value of the same kind and shape as an argument, or None when it has no such neighbour."""
    if isinstance(value, bool) or not isinstance(value, (int, float, torch.Tensor)):
        return None
    if isinstance(value, int):
        return 2 * value if value else 1  # doubled, not + 1: a size used as d // 2 or d // 4 must change too
    if isinstance(value, float):
        return value * 1.37 if value else 0.5
    if value.is_floating_point():
        noise = torch.randn(value.shape, generator=generator, dtype=torch.float64)
        return (value.double() + noise * max(float(value.double().abs().mean()), 0.1)).to(value.dtype)
    if value.dtype == torch.bool or value.is_complex():
        return None
    return value + 1


def _argument_use(
    fn: Callable[..., Any], reference: Callable[..., Any], case: _Case, what: str, names: Sequence[str] = ()
) -> dict[str, bool]:
    """For each argument the reference depends on in ``case``: whether the answer changes when it alone changes.

    A probe of the student's function itself: each argument in turn is given another value of its kind (a tensor
    of the same shape, the next integer); an argument whose change moves the reference but leaves the answer exactly
    as it was is not used there. Arguments that cannot be moved alone, or that the reference ignores here, are left
    out.
    """
    names = list(names) or list(inspect.signature(reference).parameters)
    generator = torch.Generator().manual_seed(_SEED + 1)
    kwargs = case.kwargs or {}
    slots: list[tuple[int | str, str]] = [
        (index, names[index] if index < len(names) else f"argument {index + 1}") for index in range(len(case.args))]
    found: dict[str, bool] = {}
    try:
        before = _as_values(fn(*_copies(case.args), **kwargs), what, case.shown)
        reference_before = _as_values(reference(*_copies(case.args), **kwargs), what, case.shown)
    except Exception:  # noqa: BLE001 (a case the answer cannot run: no evidence)
        return found
    for where, name in [*slots, *((key, key) for key in kwargs)]:
        value = case.args[where] if isinstance(where, int) else kwargs[str(where)]
        other = _perturbed(value, generator)
        if other is None:
            continue
        args = tuple(other if index == where else arg for index, arg in enumerate(_copies(case.args)))
        changed_kwargs = {key: other if key == where else arg for key, arg in kwargs.items()}
        try:
            moved = _as_values(reference(*_copies(args), **changed_kwargs), what, case.shown)
            answer = _as_values(fn(*_copies(args), **changed_kwargs), what, case.shown)
        except Exception:  # noqa: S112 (this argument cannot be moved alone; no evidence either way)
            continue
        if _close(moved, reference_before, 0.0, 0.0):
            continue
        found[name] = not (answer.shape == before.shape and bool(torch.equal(answer, before)))
    return found


def _swapped_arguments(
    reference: Callable[..., Any], got: torch.Tensor, expected: torch.Tensor, case: _Case, what: str
) -> str | None:
    """Two arguments of the same kind used in each other's place: the answer is the reference with them swapped."""
    names = list(inspect.signature(reference).parameters)
    args = case.args
    for first in range(len(args)):
        for second in range(first + 1, len(args)):
            a, b = args[first], args[second]
            same = (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                    and not torch.equal(a, b)) or (type(a) in (int, float) and type(a) is type(b) and a != b)
            if not same:
                continue
            swapped = list(_copies(args))
            swapped[first], swapped[second] = swapped[second], swapped[first]
            try:
                value = _as_values(reference(*swapped, **(case.kwargs or {})), what, case.shown)
            except Exception:  # noqa: S112 (a swap the reference cannot take)
                continue
            if value.shape == got.shape and _close(got, value) and not _close(value, expected):
                one, other = (names[i] if i < len(names) else f"argument {i + 1}" for i in (first, second))
                return (f"your answer is the right one for {one} and {other} swapped: you use {one} where {other} "
                        f"belongs and {other} where {one} belongs")
    return None


def _unused_arguments(
    unused_everywhere: Callable[[], dict[str, bool]], got: torch.Tensor, expected: torch.Tensor, case: _Case,
    what: str,
) -> str | None:
    """The arguments that no hidden case shows the answer using, though the reference uses them."""
    unused = [name for name, unused in unused_everywhere().items() if unused and name != "-"]
    if not unused:
        return None
    listed = " and ".join(unused)
    return (f"changing {listed} alone leaves your answer exactly as it was, on every hidden input, while {what} "
            f"should change: your answer does not depend on {listed} (your function does not use "
            f"{'them' if len(unused) > 1 else 'it'}, or uses {'them' if len(unused) > 1 else 'it'} where "
            f"{'they have' if len(unused) > 1 else 'it has'} no effect)")


_FACTORS = {2.0: "2", 0.5: "1/2", math.pi: "π", 1 / math.pi: "1/π", 2 * math.pi: "2π", 1 / (2 * math.pi): "1/(2π)",
            3.0: "3", 1 / 3: "1/3", 4.0: "4", 0.25: "1/4"}


def _constant_change(got: torch.Tensor, expected: torch.Tensor, case: _Case, what: str) -> str | None:
    """The same factor or the same offset on every entry: a missing factor, a sign, a start off by some amount."""
    if not bool(torch.isfinite(got).all()) or got.numel() < 1:
        return None
    where = "" if got.numel() == 1 else " on every entry"
    what = what.removeprefix("the ")
    verb, one = ("are", "ones") if what.endswith("s") and not what.endswith("bias") else ("is", "one")
    got, expected = got.double().flatten(), expected.double().flatten()
    big = expected.abs() > 1e-9
    if bool(big.any()) and bool((got[~big].abs() < 1e-9).all()):
        ratios = got[big] / expected[big]
        ratio = float(ratios[0])
        if bool((got.abs() < 1e-12).all()):
            return f"your {what} {verb} 0{where}: a term that should remain cancels out, or nothing was computed"
        if bool(torch.allclose(ratios, torch.full_like(ratios, ratio), rtol=1e-6, atol=0.0)) and abs(ratio - 1) > 1e-6:
            if math.isclose(ratio, -1.0, rel_tol=1e-6):
                have = "have" if verb == "are" else "has"
                return f"your {what} {have} the opposite sign of the expected {one}{where}: a sign is flipped"
            size = abs(ratio)
            for factor, unit in ((180 / math.pi, "degrees (180/π, math.degrees)"),
                                 (math.pi / 180, "radians from degrees (π/180, math.radians)")):
                if math.isclose(size, factor, rel_tol=1e-6):
                    return (f"your {what} {verb} {size:.6g} times the expected {one}{where}, the factor that converts "
                            f"to {unit}: no unit conversion belongs here, angles and wavelengths stay in radians and "
                            "positions")
            named = next((text for value, text in _FACTORS.items() if math.isclose(size, value, rel_tol=1e-6)), None)
            sign = " and the opposite sign" if ratio < 0 else ""
            if named is None:
                return f"your {what} {verb} {ratio:.6g} times the expected {one}{where}: a constant factor is wrong"
            how = (f"a factor {named} too many" if size > 1 else
                   f"a factor {_FACTORS[next(v for v in _FACTORS if math.isclose(v, 1 / size, rel_tol=1e-6))]} "
                   "missing")
            return f"your {what} {verb} {named} times the expected {one}{where}{sign}: {how}"
    if got.numel() >= 2:
        shift = float(got[0] - expected[0])
        if abs(shift) > 1e-9 and bool(torch.allclose(got - expected, torch.full_like(got, shift), atol=1e-9,
                                                           rtol=0.0)):
            shown = f"{shift:+.6g}"
            return f"every entry of your {what} is off by the same amount, {shown}: a start or an offset is wrong"
    return None


def _reduction(got: torch.Tensor, expected: torch.Tensor, sizes: dict[str, int]) -> str | None:
    """Which count a constant factor is: an average where a sum is due (1/n), or a sum counted n times."""
    got, expected = got.double().flatten(), expected.double().flatten()
    big = expected.abs() > 1e-9
    if not bool(big.any()) or not bool(torch.isfinite(got).all()) or not bool((got[~big].abs() < 1e-9).all()):
        return None
    ratios = got[big] / expected[big]
    ratio = float(ratios[0])
    if not bool(torch.allclose(ratios, torch.full_like(ratios, ratio), rtol=1e-6, atol=0.0)):
        return None
    for name, size in sizes.items():
        if size > 1 and math.isclose(ratio, 1 / size, rel_tol=1e-6):
            return (f"1/{size} of the expected ones on every entry: you divided by {name} (an average where a sum "
                    "is due)")
        if size > 1 and math.isclose(ratio, size, rel_tol=1e-6):
            return f"{size} times the expected ones on every entry: you multiplied by {name}, {size}"
    return None


def _nonfinite(got: torch.Tensor, what: str) -> str:
    """Where an answer is nan or inf, and what usually makes it so (an empty sum, a division by zero)."""
    bad = ~torch.isfinite(got)
    index = tuple(int(i) for i in bad.nonzero()[0])
    value = float(got[index])
    where = f"{value} at {_index_text(index)} of {what}"
    if got.dim() >= 2:
        row = index[:-1]
        count = int(bad[row].sum())
        where += f" ({count} of {got.shape[-1]} entries of row {row[0] if len(row) == 1 else row} are not finite)"
    if math.isnan(value):
        cause = ("a nan comes from 0/0, inf - inf or 0 · inf: typically a softmax or an average over an empty "
                 "set (every score of the row -inf, a causal sum that starts after its own position, a count of 0)")
    else:
        cause = ("an inf comes from a division by zero, the log of 0, an exp that overflows, or an entry filled "
                 "with ±inf (a mask applied to the answer itself)")
    return f"{where}: {cause}"


def _copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(arg.clone() if isinstance(arg, torch.Tensor) else arg for arg in args)


def _decode_steps(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Decoding positions that do not step by 1 (``case.args`` = cache_len, num_new): an end included, another step."""
    cache_len, num_new = case.args
    if got.shape != expected.shape or num_new < 2:
        return None
    steps = sorted({_num(float(step)) for step in got.double().diff()})
    if steps == ["1"]:
        return None
    ends = (f"yours run from {_num(float(got[0]))} to {_num(float(got[-1]))} in steps of {', '.join(steps)}; the "
            f"new tokens are at cache_len, ..., cache_len + num_new - 1 = {cache_len}..{cache_len + num_new - 1}, "
            "one apart")
    if float(got[-1]) == cache_len + num_new:
        ends += (": your last position is cache_len + num_new, one past the last new token (torch.linspace includes "
                 "its end, torch.arange(cache_len, cache_len + num_new) does not)")
    return f"your positions do not step by 1: {ends}"


def _low_precision(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Right to about three significant digits only: the arithmetic or the result in half precision."""
    if got.shape != expected.shape or not bool(torch.isfinite(got).all()) or torch.equal(expected, expected.round()):
        return None  # integers (positions, counts) off by one are a slip of the formula, not a rounding
    scale = float(expected.double().abs().max())
    error = float((got.double() - expected.double()).abs().max())
    if scale == 0 or not 1e-5 * scale < error <= 2e-3 * scale:
        return None
    return (f"your answer is right to about three significant digits only (error up to {error:.1e}, for values up "
            f"to {scale:.3g}), what half precision (float16, bfloat16) gives: if you compute or return in it, use "
            "float32 or float64; if not, a small term of the formula is off")


def _held_keys(window: torch.Tensor, cached: torch.Tensor, shift: int) -> list[int] | None:
    """Which cached key each row of the window is, once moved back by the shift, if every row is one of them."""
    if window.shape[:-2] != cached.shape[:-2] or window.shape[-1] != cached.shape[-1] or cached.shape[-2] > 4096:
        return None
    back = apply_rope(window.double(), torch.full((window.shape[-2],), shift)).flatten(0, -3).transpose(0, 1)
    keys = cached.double().flatten(0, -3).transpose(0, 1).flatten(1)
    distances = torch.cdist(back.flatten(1), keys)
    nearest = distances.argmin(dim=-1)
    if not bool((distances.gather(1, nearest[:, None]) < 1e-3).all()):
        return None
    return [int(j) for j in nearest]


def _order_and_sign(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """An answer in reverse order, or with the opposite sign on one block of its last axis."""
    if got.shape != expected.shape or got.numel() < 2 or not bool(torch.isfinite(got).all()):
        return None
    got, expected = got.double(), expected.double()
    for first in range(got.dim()):
        for second in range(first + 1, got.dim()):
            exchanged = expected.transpose(first, second)
            if got.shape[first] == got.shape[second] > 1 and not _close(exchanged, expected) and _close(got, exchanged):
                return (f"your answer has its axes {first - got.dim()} and {second - got.dim()} exchanged (the same "
                        "sizes here, so the shape cannot show it): check which axis each index runs over")
    for axis in range(got.dim()):
        flipped = expected.flip(axis)
        if got.shape[axis] > 1 and not _close(flipped, expected) and _close(got, flipped):
            return f"your answer is in reverse order along axis {axis - got.dim()}: the right entries, the wrong order"
    if got.dim() >= 1 and got.shape[-1] > 1:
        opposite = torch.isclose(got, -expected, atol=1e-6) & (expected.abs() > 1e-6)
        same = torch.isclose(got, expected, atol=1e-6)
        columns = [int(c) for c in range(got.shape[-1]) if bool(opposite[..., c].any())]
        if columns and bool((opposite | same).all()) and columns == list(range(columns[0], columns[-1] + 1)):
            return (f"your columns {columns[0]}..{columns[-1]} have the opposite sign, the others are right: a minus "
                    "sign slipped into that part of the formula")
    return None


def _shape_values(
    got: torch.Tensor, expected: torch.Tensor, case: _Case, names: Sequence[str], what: str
) -> str | None:
    """A wrong shape read from the values: one number still to multiply an argument, or a tensor still to reduce."""
    if got.dim() == 0 and expected.dim() > 0:
        for name, arg in zip(names, case.args, strict=False):
            if isinstance(arg, torch.Tensor) and arg.shape == expected.shape and _close(float(got) * arg.double(),
                                                                                           expected.double()):
                return (f"your function returns one number, {float(got):.6g}, where {what} of shape "
                        f"{tuple(expected.shape)} are expected: it is the right factor, still to multiply {name}")
    if expected.dim() == 0 and got.numel() > 1:
        reductions = {"max": got.max(), "abs().max()": got.abs().max(), "sum": got.sum(), "mean": got.mean(),
                      "min": got.min()}
        found = next((name for name, value in reductions.items() if _close(value.double(), expected.double())), None)
        if found is not None:
            return (f"your function returns a tensor of shape {tuple(got.shape)} whose .{found}() is the right "
                    f"answer: {what} is one number, so reduce over every axis (the .{found}() of the whole tensor, "
                    "then .item())")
    return None
