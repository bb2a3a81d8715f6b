r"""Stretching a trained RoPE model: new frequencies at inference, and a fine-tune at the new length.

Chapter 9 applies every context-extension rule of :mod:`posenc.scaling` to the rotary layers of
a trained :class:`~posenc.experiments.model.TinyCausalLM` and measures it beyond the training length,
first zero-shot, then after the same fine-tune at the target length for every rule (as Chen et al.
2023 fine-tune position interpolation), scored at checkpoints: at step 100 it has seen a tenth of the
base's pre-training tokens, by step 300 three tenths. The model store
(:mod:`posenc.store`) keeps the fine-tuned models; this module holds what both need.

Shapes: ``B`` batch, ``h`` heads, ``n`` tokens, ``d`` head dimension.

Rules (:data:`STRETCH_RULES`), for a model trained at length ``L`` and a factor ``s``:

- ``rope``: the trained frequencies (nothing changes);
- ``pi``: :func:`~posenc.scaling.pi_frequencies`, every frequency divided by ``s``;
- ``ntk``: :func:`~posenc.scaling.ntk_frequencies`, the base times ``s^(d/(d-2))``;
- ``dynamic-ntk``: :func:`~posenc.scaling.dynamic_ntk_frequencies` at the current length ``n``;
- ``yarn``: :func:`~posenc.scaling.yarn_frequencies` as ``transformers`` computes them (ramp
  linear in the pair index), with the attention factor ``0.1 ln s + 1``;
- ``yarn-paper``: the YaRN paper's ramp, linear in the turns ``r = L/lambda`` between
  ``alpha = 1`` and ``beta = 32`` (:func:`~posenc.scaling.llama3_frequencies` with those two
  factors), with the same attention factor;
- ``llama3``: :func:`~posenc.scaling.llama3_frequencies` with factors 1 and 4, no attention factor.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from . import scaling
from ._validation import check_choice, check_int, check_positive_float
from .experiments import IGNORE, TinyCausalLM, TrainConfig, make_batch
from .multihead import MultiHeadSelfAttention
from .rotary import RotaryEmbedding, apply_rope, rope_frequencies

__all__ = ["STRETCH_RULES", "FineTune", "StretchedRotary", "fine_tune", "rule_frequencies", "stretch"]

STRETCH_RULES = ("rope", "pi", "ntk", "dynamic-ntk", "yarn", "yarn-paper", "llama3")
"""The rules :func:`stretch` can apply, in the order of chapter 9."""
YARN_PAPER_RAMP = (1.0, 32.0)
"""``(alpha, beta)`` of the YaRN paper's ramp, in turns over the training length."""


def rule_frequencies(
    rule: str, dim: int, *, base: float, factor: float, train_len: int, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """The frequencies and the attention factor of ``rule`` (see the module's table).

    Args:
        rule: one of :data:`STRETCH_RULES`.
        dim: rotated head dimension ``d`` (even).
        base: the trained base ``b``.
        factor: scale factor ``s`` (> 0).
        train_len: training length ``L``.
        seq_len: current length ``n``; required by ``dynamic-ntk`` only.

    Returns:
        ``((d/2,) float64 frequencies, attention factor)``; the factor multiplies the rotated
        queries and keys (so the logits by its square).

    Raises:
        ValueError: for an unknown rule, a bad number, or ``dynamic-ntk`` without ``seq_len``.
    """
    rule = check_choice("rule", rule, STRETCH_RULES)
    factor = check_positive_float("factor", factor)
    train_len = check_int("train_len", train_len, minimum=1)
    if rule == "rope":
        return rope_frequencies(dim, base), 1.0
    if rule == "pi":
        return scaling.pi_frequencies(dim, base, factor=factor), 1.0
    if rule == "ntk":
        return scaling.ntk_frequencies(dim, base, factor=factor), 1.0
    if rule == "dynamic-ntk":
        if seq_len is None:
            raise ValueError("rule 'dynamic-ntk' needs seq_len, the length of the current input")
        frequencies = scaling.dynamic_ntk_frequencies(
            dim, base, factor=factor, original_max_position=train_len, seq_len=seq_len
        )
        return frequencies, 1.0
    if rule == "yarn":
        return scaling.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len)
    temperature = scaling.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len)[1]
    low, high = YARN_PAPER_RAMP if rule == "yarn-paper" else (1.0, 4.0)
    frequencies = scaling.llama3_frequencies(
        dim, base, factor=factor, low_freq_factor=low, high_freq_factor=high, original_max_position=train_len
    )
    return frequencies, temperature if rule == "yarn-paper" else 1.0


class StretchedRotary(nn.Module):
    """A rotary layer with the frequencies of a stretch rule, output times its attention factor.

    Args:
        dim: head dimension ``d``; base, layout: those of the trained layer.
        rule, factor, train_len: as :func:`rule_frequencies`.

    Input ``x``: ``(B, h, n, d)``; ``positions``: ``(n,)``, ``(B, n)`` or ``None`` (``0..n-1``).
    Returns the rotated ``x``, same shape and dtype.
    """

    def __init__(self, dim: int, *, base: float, layout: str, rule: str, factor: float, train_len: int) -> None:
        super().__init__()
        self.dim, self.base, self.layout = dim, base, layout
        self.rule, self.factor, self.train_len = rule, factor, train_len
        rule_frequencies(rule, dim, base=base, factor=factor, train_len=train_len, seq_len=train_len)  # validate

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """Rotate ``x`` ``(B, h, n, d)`` to ``positions`` with the rule's frequencies, times its factor."""
        seq_len = x.shape[-2] if positions is None else int(positions.max()) + 1
        frequencies, attention_factor = rule_frequencies(
            self.rule, self.dim, base=self.base, factor=self.factor, train_len=self.train_len, seq_len=seq_len
        )
        return attention_factor * apply_rope(x, positions, layout=self.layout, frequencies=frequencies)

    def extra_repr(self) -> str:
        return f"rule={self.rule!r}, factor={self.factor:g}, train_len={self.train_len}"


def stretch(model: TinyCausalLM, rule: str, *, factor: float, train_len: int) -> TinyCausalLM:
    """Give every rotary layer of ``model`` the frequencies of ``rule``, in place.

    Args:
        model: a trained :class:`~posenc.experiments.model.TinyCausalLM` with ``position="rope"``.
        rule: one of :data:`STRETCH_RULES`.
        factor: scale factor ``s``.
        train_len: the length ``L`` the model was trained at.

    Returns:
        ``model`` itself (its weights are untouched; only the rotary layers change).

    Raises:
        TypeError: if ``model`` is not a TinyCausalLM.
        ValueError: if it has no rotary layers, or for a bad rule or number.
    """
    if not isinstance(model, TinyCausalLM):
        raise TypeError(f"model must be a TinyCausalLM, got {type(model).__name__}")
    layers = []
    for block in model.blocks:
        attention = cast(MultiHeadSelfAttention, block.attention)
        layer = attention.rotary
        if not isinstance(layer, RotaryEmbedding | StretchedRotary):
            raise ValueError("stretch needs a model with position='rope'")
        layers.append((attention, layer))
    for attention, layer in layers:
        stretched = StretchedRotary(
            layer.dim, base=layer.base, layout=layer.layout, rule=rule, factor=factor, train_len=train_len
        )
        setattr(attention, "rotary", stretched)  # noqa: B010 (the attribute is typed as RotaryEmbedding)
    return model


@dataclass(frozen=True)
class FineTune:
    """A fine-tune of a stored RoPE model at the stretched length under a stretch rule.

    Attributes:
        base: the store family of the trained model (same seed).
        rule: one of :data:`STRETCH_RULES` (not ``dynamic-ntk``, whose frequencies change with ``n``).
        factor: scale factor ``s``; the fine-tune runs at ``length = s L``.
        steps: optimiser steps (constant learning rate, AdamW, gradients clipped at 1).
        learning_rate: AdamW learning rate.
        batch_size: sequences of length ``s L`` per step.
        checkpoints: steps after which the store scores the model on fixed sequences (``0``:
            before the first update, the rule zero-shot), increasing, at most ``steps``.
    """

    base: str
    rule: str
    factor: float = 4.0
    steps: int = 100
    learning_rate: float = 1e-3
    batch_size: int = 16
    checkpoints: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_choice("rule", self.rule, tuple(r for r in STRETCH_RULES if r != "dynamic-ntk"))
        check_positive_float("factor", self.factor)
        check_int("steps", self.steps, minimum=1)
        check_positive_float("learning_rate", self.learning_rate)
        check_int("batch_size", self.batch_size, minimum=1)
        steps = [check_int("checkpoints entry", step, minimum=0) for step in self.checkpoints]
        if steps != sorted(set(steps)) or (steps and steps[-1] > self.steps):
            raise ValueError(f"checkpoints must increase from 0 and not pass steps={self.steps}, "
                             f"got {self.checkpoints}")


def fine_tune(
    model: TinyCausalLM,
    config: TrainConfig,
    plan: FineTune,
    seed: int,
    on_checkpoint: Callable[[int, TinyCausalLM], None] | None = None,
) -> tuple[TinyCausalLM, list[float], float]:
    """Stretch ``model`` by ``plan.rule`` and train it ``plan.steps`` steps at length ``s L``.

    The data are ``config``'s task at the new length, drawn from a generator seeded with
    ``seed`` (a stream different from the one the model was trained on).

    Args:
        model, config: the trained model and its training configuration.
        plan: the fine-tune.
        seed: seeds the fine-tune's data.
        on_checkpoint: called as ``on_checkpoint(step, model)`` (in evaluation mode, training
            resumes after it) at every step of ``plan.checkpoints``; its time is not counted.

    Returns:
        ``(model in evaluation mode, the training losses, seconds)``.

    Raises:
        TypeError, ValueError: as :func:`stretch`, or for a negative seed.
    """
    seed = check_int("seed", seed, minimum=0)
    stretch(model, plan.rule, factor=plan.factor, train_len=config.train_len)
    length = round(plan.factor * config.train_len)
    data = torch.Generator().manual_seed(1_000_003 + seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=plan.learning_rate, weight_decay=0.01)
    losses: list[float] = []
    seconds = 0.0

    def checkpoint(step: int) -> None:
        if on_checkpoint is not None and step in plan.checkpoints:
            on_checkpoint(step, model.eval())

    checkpoint(0)
    for step in range(1, plan.steps + 1):
        start = time.perf_counter()
        model.train()
        tokens, labels = make_batch(config, plan.batch_size, length, generator=data)
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        seconds += time.perf_counter() - start
        checkpoint(step)
    return model.eval(), losses, seconds
