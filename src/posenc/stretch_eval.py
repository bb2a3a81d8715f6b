r"""Scoring stretched models position by position (chapter 9).

:mod:`posenc.stretch` gives a trained RoPE model the frequencies of a context-extension rule; this
module scores such models on one fixed batch, so that every rule and seed is compared on the same
tokens, and reports the scores by bands of positions (inside the training length ``L``, from ``L``
to the target ``L'``, beyond ``L'``), never as one mean that mixes them.

A rule whose frequencies depend on the current length (dynamic NTK) stretches every position of
one forward pass by the scale of the whole window. :func:`scores_by_position` can instead score
each band in the window that ends where the band ends, so that a band runs at the scale its own
length gives, as a model without a cache would when it reaches that length.

Shapes: ``B`` sequences, ``n`` tokens, ``d`` head dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
import torch.nn.functional as F

from ._validation import check_int
from .experiments import IGNORE, TinyCausalLM
from .multihead import MultiHeadSelfAttention
from .rotary import RotaryEmbedding
from .stretch import StretchedRotary, rule_frequencies, stretch

__all__ = ["ZERO_SHOT_ROWS", "doubling_windows", "row_scores", "scores_by_position", "stretch_row",
           "with_frequencies"]

ZERO_SHOT_ROWS: dict[str, tuple[str, float | None, bool]] = {
    "rope": ("rope", None, True),
    "pi": ("pi", None, True),
    "ntk": ("ntk", None, True),
    "dynamic-ntk, factor 1": ("dynamic-ntk", 1.0, True),
    "dynamic-ntk, factor s": ("dynamic-ntk", None, True),
    "yarn": ("yarn", None, True),
    "yarn, no temperature": ("yarn", None, False),
    "yarn-paper": ("yarn-paper", None, True),
    "llama3": ("llama3", None, True),
}
"""The zero-shot rows of chapter 9, as ``label -> (rule, factor, attention factor kept)``; a factor of
``None`` is the experiment's ``s``. Dynamic NTK runs at factor 1 (scale ``n/L``, so ``s`` at
``n = sL``, static NTK there) and at factor ``s`` (scale ``s n/L - (s - 1)``); YaRN also without
its temperature."""


def with_frequencies(model: TinyCausalLM, frequencies: torch.Tensor) -> TinyCausalLM:
    r"""Give every rotary layer of ``model`` the fixed ``frequencies``, with no attention factor.

    For a rule's frequencies without its temperature (YaRN's :math:`\sqrt{1/t}`), or trained
    frequencies with some pairs swapped for a rule's.

    Args:
        model: a :class:`~posenc.experiments.model.TinyCausalLM` with ``position="rope"`` (its
            rotary layers may already be stretched).
        frequencies: ``(d/2,)`` floating frequencies, ``d`` the head dimension.

    Returns:
        ``model`` itself, changed in place (weights untouched).

    Raises:
        TypeError: if ``model`` is not a TinyCausalLM or ``frequencies`` not a floating tensor.
        ValueError: if ``model`` has no rotary layers or ``frequencies`` has the wrong shape.
    """
    if not isinstance(model, TinyCausalLM):
        raise TypeError(f"model must be a TinyCausalLM, got {type(model).__name__}")
    layers = []
    for block in model.blocks:
        attention = cast(MultiHeadSelfAttention, block.attention)
        layer = attention.rotary
        if not isinstance(layer, RotaryEmbedding | StretchedRotary):
            raise ValueError("with_frequencies needs a model with position='rope'")
        layers.append((attention, layer))
    for attention, layer in layers:
        replacement = RotaryEmbedding(layer.dim, layout=layer.layout, frequencies=frequencies)
        setattr(attention, "rotary", replacement)  # noqa: B010 (typed as RotaryEmbedding)
    return model


def stretch_row(model: TinyCausalLM, row: str, *, factor: float, train_len: int) -> TinyCausalLM:
    """Stretch ``model`` in place by the rule of a row of :data:`ZERO_SHOT_ROWS`.

    Args:
        model: a TinyCausalLM with ``position="rope"``.
        row: a key of :data:`ZERO_SHOT_ROWS`.
        factor: the experiment's scale factor ``s``.
        train_len: the training length ``L``.

    Returns:
        ``model`` itself.

    Raises:
        ValueError: for an unknown row (or as :func:`~posenc.stretch.stretch`).
    """
    if row not in ZERO_SHOT_ROWS:
        raise ValueError(f"row must be one of {list(ZERO_SHOT_ROWS)}, got {row!r}")
    rule, row_factor, temperature = ZERO_SHOT_ROWS[row]
    factor = factor if row_factor is None else row_factor
    if temperature:
        return stretch(model, rule, factor=factor, train_len=train_len)
    layer = cast(MultiHeadSelfAttention, model.blocks[0].attention).rotary
    if layer is None:
        raise ValueError("stretch_row needs a model with position='rope'")
    frequencies = rule_frequencies(rule, layer.dim, base=layer.base, factor=factor, train_len=train_len)[0]
    return with_frequencies(model, frequencies)


def doubling_windows(train_len: int, length: int) -> list[int]:
    """Window ends ``L, 2L, 4L, ..., n`` for :func:`scores_by_position`, so that each octave of
    positions beyond ``L`` is scored at the scale of its end.

    Args:
        train_len: the training length ``L`` (>= 1).
        length: the input length ``n``.

    Returns:
        The increasing window ends, the last one ``n``.

    Raises:
        ValueError: unless ``n = L * 2^k`` for some ``k >= 0``.
    """
    train_len = check_int("train_len", train_len, minimum=1)
    length = check_int("length", length, minimum=train_len)
    ratio = length // train_len
    if length % train_len or ratio & (ratio - 1):
        raise ValueError(f"length={length} is not train_len={train_len} times a power of two")
    return [train_len * 2**k for k in range(ratio.bit_length())]


def row_scores(
    model: TinyCausalLM, row: str, tokens: torch.Tensor, labels: torch.Tensor, *, factor: float, train_len: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`scores_by_position` of ``model`` stretched by ``row`` (:func:`stretch_row`); dynamic
    NTK is scored in :func:`doubling_windows`, every other rule in one window.

    Args:
        model: a TinyCausalLM with ``position="rope"``, trained at ``train_len`` (changed in place).
        row: a key of :data:`ZERO_SHOT_ROWS`.
        tokens, labels: ``(B, n)`` batch, as :func:`scores_by_position`; for dynamic NTK ``n``
            must be ``train_len`` times a power of two.
        factor: the experiment's scale factor ``s``.
        train_len: the training length ``L``.

    Returns:
        ``(accuracy, loss)``, each ``(n,)`` float64.

    Raises:
        ValueError: as :func:`stretch_row`, :func:`doubling_windows` and :func:`scores_by_position`.
    """
    stretch_row(model, row, factor=factor, train_len=train_len)
    dynamic = ZERO_SHOT_ROWS[row][0] == "dynamic-ntk"
    ends = doubling_windows(train_len, tokens.shape[1]) if dynamic else None
    return scores_by_position(model, tokens, labels, window_ends=ends)


@torch.no_grad()
def scores_by_position(
    model: TinyCausalLM, tokens: torch.Tensor, labels: torch.Tensor, *, window_ends: Sequence[int] | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Accuracy and loss of ``model`` at every position of one batch, averaged over its sequences.

    Args:
        model: a :class:`~posenc.experiments.model.TinyCausalLM`.
        tokens: ``(B, n)`` input tokens.
        labels: ``(B, n)`` next-token labels, ``IGNORE`` (-100) where a position is not scored.
        window_ends: increasing ends ``e_1 < ... < e_k = n``; positions ``e_{i-1} .. e_i - 1``
            (from 0 for the first) are scored in the window ``tokens[:, :e_i]``. ``None``: one
            window of all ``n`` tokens. For frequencies that do not depend on the length, the
            two agree, since a causal model's output at a position ignores later tokens.

    Returns:
        ``(accuracy, loss)``, each ``(n,)`` float64 (loss in nats); NaN where no sequence is scored.

    Raises:
        TypeError: if ``model`` is not a TinyCausalLM.
        ValueError: if ``tokens`` and ``labels`` differ in shape or are not 2-D, or the window
            ends are not increasing and ending at ``n``.
    """
    if not isinstance(model, TinyCausalLM):
        raise TypeError(f"model must be a TinyCausalLM, got {type(model).__name__}")
    if tokens.dim() != 2 or tokens.shape != labels.shape:
        raise ValueError(f"tokens and labels must be (B, n) alike, got {tuple(tokens.shape)} and {tuple(labels.shape)}")
    length = tokens.shape[1]
    ends = [length] if window_ends is None else [check_int("window end", end, minimum=1) for end in window_ends]
    if any(b <= a for a, b in zip(ends, ends[1:], strict=False)) or ends[-1] != length:
        raise ValueError(f"window_ends must increase and end at n = {length}, got {list(ends)}")
    model.eval()
    logits = torch.cat([model(tokens[:, :end])[:, start:].float()
                        for start, end in zip([0, *ends[:-1]], ends, strict=True)], dim=1)
    scored = labels != IGNORE
    loss = F.cross_entropy(logits.transpose(1, 2), labels.clamp(min=0), reduction="none") * scored
    correct = (logits.argmax(-1) == labels) & scored
    count = scored.sum(0).double()
    count = torch.where(count > 0, count, torch.nan)
    return correct.sum(0) / count, loss.sum(0).double() / count
