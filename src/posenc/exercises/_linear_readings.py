"""Readings of a wrong answer to ``check_linear_rope_attention`` that none of its mistake models matches.

Causal linear attention with RoPE is ``o_i = Σ_{j<=i} (R_i φ(q_i))^T (R_j φ(k_j)) v_j / Σ_{j<=i} φ(q_i)^T φ(k_j)`` with
``φ = elu + 1``. The readings name: sums that leave key ``i`` out of query ``i``'s row (compared on the rows that are
finite, so that the nan of an empty first row is explained, not only reported); another feature map, on both sides
or on one; a numerator that is right over a denominator that is not.
"""

from __future__ import annotations

import torch

from ..rotary import apply_rope
from .checking import _close
from .comparing import _Case

__all__: list[str] = []


def _rope(x: torch.Tensor, positions: None, base: float) -> torch.Tensor:
    """The interleaved RoPE of the exercise at positions 0, 1, ..., in float64 frequencies."""
    dim = x.shape[-1]
    return apply_rope(x, positions, frequencies=base ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim))


_FEATURE_MAPS = {
    "relu(x) + 1": lambda x: torch.relu(x) + 1, "relu(x)": torch.relu, "exp(x)": torch.exp,
    "elu(x) (without + 1)": torch.nn.functional.elu, "softplus(x)": torch.nn.functional.softplus,
    "x itself (no feature map)": lambda x: x, "sigmoid(x)": torch.sigmoid, "tanh(x) + 1": lambda x: torch.tanh(x) + 1,
    "x²": lambda x: x**2, "|x|": torch.abs, "softmax(x) over the features": lambda x: x.softmax(-1),
    "exp(-x)": lambda x: torch.exp(-x), "x + 1": lambda x: x + 1,
}


def _linear_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Which feature map, and which denominator, the answer used."""
    q, k, v = (arg.double() for arg in case.args[:3])
    base = float(case.args[3])
    if (strict := _linear_strict(got.double(), q, k, v, base)) is not None:
        return strict
    for name, phi in _FEATURE_MAPS.items():
        phi_q, phi_k = phi(q), phi(k)
        numerators = torch.tril(_rope(phi_q, None, base) @ _rope(phi_k, None, base).T)
        denominators = torch.tril(phi_q @ phi_k.T).sum(-1, keepdim=True)
        if _close(got, numerators @ v / denominators, atol=1e-4):
            return (f"your feature map is {name}: this exercise's φ is elu(x) + 1 (torch.nn.functional.elu(x) + 1), "
                    "positive and smooth")
    def elu1(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.elu(x) + 1

    for side in ("queries", "keys"):
        for name, phi in _FEATURE_MAPS.items():
            phi_q, phi_k = (phi(q), elu1(k)) if side == "queries" else (elu1(q), phi(k))
            numerators = torch.tril(_rope(phi_q, None, base) @ _rope(phi_k, None, base).T)
            if _close(got, numerators @ v / torch.tril(phi_q @ phi_k.T).sum(-1, keepdim=True), atol=1e-4):
                return (f"your feature map on the {side} is {name}, while the other side gets elu(x) + 1: apply the "
                        "same φ = elu(x) + 1 to the queries and to the keys")
    phi_q, phi_k = elu1(q), elu1(k)
    numerators = torch.tril(_rope(phi_q, None, base) @ _rope(phi_k, None, base).T) @ v
    implied = numerators / got.double()
    if bool(torch.allclose(implied, implied[:, :1].expand_as(implied), rtol=1e-6)):
        full = (phi_q @ phi_k.T).sum(-1, keepdim=True)
        if _close(implied[:, :1], full):
            return ("your numerator is right but your denominator is not causal: it sums φ(q_i)^T φ(k_j) over every "
                    "key, where causal attention sums over j <= i only, like the numerator")
        return ("your numerator is right but your denominator is not Σ_{j<=i} φ(q_i)^T φ(k_j), the causal, "
                "unrotated sum of the same features")
    return None


def _linear_strict(got: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, base: float) -> str | None:
    """Name sums that leave key i out of query i's row (j < i), in the numerator, the denominator or both."""
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    scores = _rope(phi_q, None, base) @ _rope(phi_k, None, base).T
    for top, bottom, which in ((-1, -1, "both sums"), (-1, 0, "the numerator's sum"), (0, -1, "the denominator's sum")):
        model = torch.tril(scores, top) @ v / torch.tril(phi_q @ phi_k.T, bottom).sum(-1, keepdim=True)
        finite = torch.isfinite(model)
        if not torch.equal(finite, torch.isfinite(got)) or not _close(got[finite], model[finite], atol=1e-4):
            continue
        empty = (" Row 0 is 0/0 (nan): its sums are empty, since query 0 has no key before it." if not
                 bool(finite.all()) else "")
        return (f"in {which} query i's row runs over the keys j < i only: key i is left out of its own row (with "
                f"running sums, it is added after query i is answered, or tril(..., -1) drops the diagonal).{empty} "
                "Causal attention sums over j <= i: add key i to the sums before answering query i (tril with "
                "diagonal 0)")
    return None
