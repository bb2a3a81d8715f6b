"""The book's families of stored models, one section per chapter; each adds its families with
``register(ModelSpec(...))``, in the order ``make train`` trains them."""

from __future__ import annotations

from typing import Any

from .. import corpus, multihead, stretch
from ..experiments import StopRule, TrainConfig
from .registry import ModelSpec, register, spec

__all__ = [
    "CH8_BUDGET",
    "CH8_WATCH",
    "CH4_LOOKBACK",
    "CH4_SHAW_CLIPS",
    "CH8_RANDOMIZED",
    "CH8_RANDOMIZED_RANGE",
    "CH8_OFFSETS",
    "CH8_SEEDS",
    "CH8_TASKS",
    "CH8_TEXT_SEEDS",
    "CH9_CHECKPOINTS",
    "CH9_FACTOR",
    "CH9_FINETUNE_RULES",
    "CH9_FINETUNE_TASK",
    "CH9_GEOMETRIES",
    "CH9_TASKS",
    "CH9_TENTH",
    "ch8_config",
]


# --------------------------------------------------------------------------- chapter 8
# The matrix: 2 tasks x 7 schemes x 5 seeds, d_model 64, 4 heads of dimension 16, 2 layers,
# batch 32, L = 32, AdamW 3e-3, 100 warm-up steps. The anchors below (randomized positions, random
# offsets, three-layer ALiBi) train with a constant rate until the held-out accuracy at L reaches
# 0.99 of its ceiling (checked every 50 steps, cap 2000); the matrix trains every model for one
# common budget, 2000 steps with a cosine decay, and records when the same rule was first met.
CH8_TASKS = ("lookback", "recall")
"""The tasks of chapter 8's matrix (:func:`posenc.experiments.tasks.make_batch`)."""
CH8_SHAW_CLIP = 16  # half the training length: Shaw's far vector is trained
CH8_BUDGET = 2000
"""Optimiser steps of every model of chapter 8's matrix, whatever its scheme (the common budget)."""
CH8_WATCH = StopRule(threshold=0.99, check_every=50, num_sequences=512)
"""The rule recorded, not obeyed, for the matrix (0.99 on two consecutive checks, each on 512 fresh
sequences of length L)."""


def ch8_config(task: str, position: str, **changes: Any) -> TrainConfig:
    """Chapter 8's training configuration for ``task`` and ``position`` (fields overridable)."""
    options: dict[str, Any] = {
        "task": task, "position": position, "vocab_size": 16, "dim": 64,
        "num_heads": 4, "num_layers": 2, "train_len": 32, "steps": 2000, "batch_size": 32,
        "learning_rate": 3e-3, "schedule": "constant", "warmup_steps": 100,
        "shaw_clip": CH8_SHAW_CLIP if position == "shaw" else None,
    }
    options.update(changes)
    return TrainConfig(**options)


def _budget_family(
    name: str, task: str, position: str, description: str, rope_base: float | None = None, **changes: Any
) -> None:
    register(ModelSpec(name, ch8_config(task, position, steps=CH8_BUDGET, schedule="cosine", **changes),
                       seeds=CH8_SEEDS[task], stop=None, watch=CH8_WATCH, eval_scales=(1,),
                       description=description, rope_base=rope_base))


# (The synthetic Markov language of the second edition gave way to real text, ch8-text-*; a
# family's fingerprint does not depend on its list of seeds, so seeds can be added here.)
CH8_SEEDS = {"lookback": (0, 1, 2, 3, 4), "recall": (0, 1, 2, 3, 4)}
"""The training seeds of chapter 8's families, by task."""
for _task in CH8_TASKS:
    for _position in multihead.POSITION_SCHEMES:
        _budget_family(f"ch8-{_task}-{_position}", _task, _position, f"chapter 8 matrix: {_task}, {_position}")

# NoPE with a third layer (Kazemnejad et al. 2023 trained deeper NoPE models), at the same budget.
for _task in CH8_TASKS:
    _budget_family(f"ch8-{_task}-none-3layers", _task, "none", f"chapter 8: NoPE with three layers, {_task}",
                   num_layers=3)


# What ALiBi needs on look-back: within the matrix's cap, two layers come close on every seed but
# do not meet the stopping rule; a third layer lets it build the offset from content.
register(ModelSpec("ch8-lookback-alibi-3layers", ch8_config("lookback", "alibi", num_layers=3),
                   seeds=CH8_SEEDS["lookback"], description="chapter 8: ALiBi on look-back with three layers"))


# The anchor of Ruoss et al. (2023), in miniature: both tasks trained, checked and evaluated at L
# positions drawn from 0..32L-1 and sorted (the paper draws from 2048 positions and trains at
# lengths up to 40), so that no evaluated position is new, even at 16L. The cap is three times the
# matrix's: with random gaps, "three tokens back" is no longer a fixed distance, and look-back
# takes longer to learn.
CH8_RANDOMIZED = ("learned", "sinusoidal", "rope")
"""The schemes trained at randomized positions (Ruoss et al. 2023), on both tasks."""
CH8_RANDOMIZED_RANGE = 32 * 32
"""The range ``0..CH8_RANDOMIZED_RANGE - 1`` that randomized positions are drawn from (32 L)."""
for _task in CH8_TASKS:
    for _position in CH8_RANDOMIZED:
        register(ModelSpec(f"ch8-{_task}-{_position}-randpos",
                           ch8_config(_task, _position, randomized_positions=CH8_RANDOMIZED_RANGE, steps=6000),
                           seeds=CH8_SEEDS[_task],
                           description=f"chapter 8 anchor (Ruoss et al. 2023): randomized positions, {_task}, "
                                       f"{_position}"))


# Random offsets (the second edition's exercise 4): every training batch placed at positions
# o, o + 1, ... with o drawn from 0..7L, so that the absolute schemes meet every position up to 8L.
CH8_OFFSETS = ("sinusoidal", "learned")
"""The schemes trained on look-back at random offsets (``random_offsets = 7 L``)."""
for _position in CH8_OFFSETS:
    register(ModelSpec(f"ch8-lookback-{_position}-offsets",
                       ch8_config("lookback", _position, random_offsets=7 * 32), seeds=CH8_SEEDS["lookback"],
                       description=f"chapter 8: look-back at random offsets 0..7L, {_position}"))

# Real text: a character-level language model of every scheme on the corpus of posenc.corpus
# (d_model 64, 4 heads, 2 layers, L = 64, 1500 steps with warm-up and cosine decay), scored by
# validation loss at every position up to 8L.
CH8_TEXT_SEEDS = (0, 1, 2, 3, 4)
"""The training seeds of chapter 8's text models (families ``ch8-text-<scheme>``)."""
for _position in multihead.POSITION_SCHEMES:
    register(ModelSpec(f"ch8-text-{_position}", corpus.text_config(_position), seeds=CH8_TEXT_SEEDS, stop=None,
                       eval_scales=(1, 2, 4, 8), description=f"chapter 8 real text: {_position}"))


# --------------------------------------------------------------------------- chapter 4
# One layer (so that no offset can be composed from two smaller ones), look-back k = 4, otherwise
# chapter 8's setting. T5: which bias does each bucket learn? Shaw: the clipping distance as an
# ablation; offset 4 has a vector of its own only when c >= 5 (clip(-4) = clip(-5) = -4 at c = 4).
CH4_LOOKBACK = 4
"""The offset of chapter 4's one-layer look-back models."""
CH4_SHAW_CLIPS = (2, 4, 5, 8)
"""The clipping distances of chapter 4's Shaw ablation."""
register(ModelSpec("ch4-lookback-t5", ch8_config("lookback", "t5", lookback=CH4_LOOKBACK, num_layers=1, steps=600),
                   seeds=(0, 1, 2), description="chapter 4: the buckets a one-layer T5-bias model learns"))
for _clip in CH4_SHAW_CLIPS:
    register(ModelSpec(f"ch4-lookback-shaw-c{_clip}",
                       ch8_config("lookback", "shaw", lookback=CH4_LOOKBACK, num_layers=1, steps=400, shaw_clip=_clip),
                       seeds=(0, 1, 2), description=f"chapter 4: Shaw's clipping distance c = {_clip} (ablation)"))
# Can a second layer compose offset 4 from clipped offsets when the clip hides it?
register(ModelSpec("ch4-lookback-shaw-c2-2layers",
                   ch8_config("lookback", "shaw", lookback=CH4_LOOKBACK, num_layers=2, steps=400, shaw_clip=2),
                   seeds=(0, 1, 2), description="chapter 4: Shaw's clip c = 2 with two layers"))


# --------------------------------------------------------------------------- chapter 9
# RoPE models with heads of dimension 32 (16 pairs, so that PI, NTK and YaRN differ in kind), trained
# as chapter 8's matrix (2000 steps, cosine decay, the rule watched), in two geometries: base 10 000,
# where 3 of the 16 pairs turn within L = 32, and base 10, where 12 do (Llama 2 at 4K: 46 of 64). On
# recall, the task no rule solves zero-shot, every rule is fine-tuned at L' = 4L, 16 sequences a
# step, scored at its checkpoints: at step 100 it has seen a tenth of the base's pre-training
# tokens, and it runs on to 300 to show whether the orderings at 100 hold; the control, "rope",
# fine-tunes at 4L with the trained frequencies.
CH9_TASKS = ("lookback", "recall")
"""The tasks of chapter 9's base RoPE models (heads of dimension 32)."""
CH9_GEOMETRIES: dict[str, float | None] = {"": None, "-b10": 10.0}
"""Chapter 9's geometries, as a family-name suffix and its rotary base (``None``: the default 10 000):
``ch9-<task>-rope`` and ``ch9-<task>-rope-b10``, ``ch9-recall-<rule>-ft`` and ``ch9-recall-<rule>-ft-b10``."""
CH9_FINETUNE_TASK = "recall"
"""The task chapter 9 fine-tunes at the target length."""
CH9_FINETUNE_RULES = ("rope", "pi", "ntk", "yarn", "yarn-paper")
"""The rules of :mod:`posenc.stretch` that chapter 9 fine-tunes (``rope`` is the control)."""
CH9_FACTOR = 4.0
"""Chapter 9's scale factor ``s``: fine-tunes run at ``L' = s L``."""
CH9_CHECKPOINTS = (0, 10, 25, 50, 100, 200, 300)
"""The fine-tune steps at which chapter 9's fine-tunes are scored (the last is the whole fine-tune)."""
CH9_TENTH = 100
"""The fine-tune step at which a fine-tune of chapter 9 has seen a tenth of its base's pre-training tokens."""

for _suffix, _base in CH9_GEOMETRIES.items():
    for _task in CH9_TASKS:
        _budget_family(f"ch9-{_task}-rope{_suffix}", _task, "rope",
                       f"chapter 9 base: {_task}, rope, head dim 32, base {_base or 10_000:g}",
                       rope_base=_base, num_heads=2)
    for _rule in CH9_FINETUNE_RULES:
        _base_family = f"ch9-{CH9_FINETUNE_TASK}-rope{_suffix}"
        register(ModelSpec(f"ch9-{CH9_FINETUNE_TASK}-{_rule}-ft{_suffix}", spec(_base_family).config,
                           seeds=spec(_base_family).seeds, stop=None, eval_scales=(1, 2, 4, 8),
                           finetune=stretch.FineTune(_base_family, _rule, factor=CH9_FACTOR,
                                                     steps=CH9_CHECKPOINTS[-1], checkpoints=CH9_CHECKPOINTS),
                           description=f"chapter 9 fine-tune: {CH9_FINETUNE_TASK}, {_rule} at "
                                       f"{CH9_FACTOR:g} L, base {_base or 10_000:g}"))
