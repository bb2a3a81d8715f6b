"""What a training run is: the task and model it trains (:class:`TrainConfig`) and when it stops
(:class:`StopRule`)."""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_choice, check_int, check_positive_float
from ..multihead import POSITION_SCHEMES

__all__ = ["SCHEDULES", "TASKS", "StopRule", "TrainConfig"]


TASKS = ("lookback", "recall", "markov")
"""The synthetic tasks of :func:`~posenc.experiments.tasks.make_batch`."""


SCHEDULES = ("cosine", "constant")
"""Learning-rate schedules of :class:`TrainConfig` (both after a linear warm-up)."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a trained model, apart from the seed.

    Two runs with equal configs and seeds produce the same weights (on the same machine and
    thread count), which is what :func:`~posenc.experiments.training.train_or_load` relies on to cache them.

    Attributes:
        task: one of :data:`TASKS`.
        position: one of :data:`~posenc.multihead.POSITION_SCHEMES`.
        vocab_size: number of content tokens ``V``.
        dim: model dimension ``D``.
        num_heads: heads per layer ``h``.
        num_layers: number of transformer blocks.
        train_len: training length ``L`` (tokens per sequence, BOS included).
        steps: optimiser steps.
        batch_size: sequences per step.
        learning_rate: peak AdamW learning rate (linear warm-up, then ``schedule``).
        schedule: ``"cosine"`` (decay to zero at ``steps``) or ``"constant"`` after the warm-up.
        warmup_steps: linear warm-up steps (default: 10 % of ``steps``).
        lookback: the offset ``k`` of the ``lookback`` task.
        recall_position: the position ``p`` of the ``recall`` task.
        max_len: rows of the ``learned`` table (default :attr:`table_len`: ``train_len`` plus
            ``random_offsets``, or ``randomized_positions`` if that is larger).
        random_offsets: if > 0, every training batch is placed at positions
            ``o, o + 1, ...`` with ``o`` drawn uniformly from ``0..random_offsets``.
        randomized_positions: if > 0, every batch is placed at distinct positions drawn from
            ``0..randomized_positions - 1`` and sorted (the randomized positional encodings of
            Ruoss et al. 2023), in training and, as in the paper, in the stopping rule's check and
            in evaluation too (:func:`~posenc.experiments.tasks.sample_positions`).
        shaw_clip: Shaw's clipping distance (default: the table length).
    """

    task: str
    position: str
    vocab_size: int = 16
    dim: int = 32
    num_heads: int = 4
    num_layers: int = 2
    train_len: int = 32
    steps: int = 300
    batch_size: int = 32
    learning_rate: float = 3e-3
    lookback: int = 3
    recall_position: int = 3
    max_len: int | None = None
    random_offsets: int = 0
    schedule: str = "cosine"
    warmup_steps: int | None = None
    randomized_positions: int = 0
    shaw_clip: int | None = None

    def __post_init__(self) -> None:
        check_choice("task", self.task, TASKS)
        check_choice("position", self.position, POSITION_SCHEMES)
        check_int("vocab_size", self.vocab_size, minimum=2)
        check_int("num_heads", self.num_heads, minimum=1)
        check_int("dim", self.dim, minimum=self.num_heads)
        if self.dim % self.num_heads or (self.position == "rope" and (self.dim // self.num_heads) % 2):
            raise ValueError(f"dim={self.dim} must split into num_heads={self.num_heads} heads (of even size for rope)")
        check_int("num_layers", self.num_layers, minimum=1)
        check_int("steps", self.steps, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_positive_float("learning_rate", self.learning_rate)
        check_int("lookback", self.lookback, minimum=1)
        check_int("recall_position", self.recall_position, minimum=1)
        check_int("train_len", self.train_len, minimum=max(self.lookback, self.recall_position) + 2)
        if self.max_len is not None:
            check_int("max_len", self.max_len, minimum=1)
        check_int("random_offsets", self.random_offsets, minimum=0)
        check_choice("schedule", self.schedule, SCHEDULES)
        if self.warmup_steps is not None:
            check_int("warmup_steps", self.warmup_steps, minimum=1)
        check_int("randomized_positions", self.randomized_positions, minimum=0)
        if self.randomized_positions and self.random_offsets:
            raise ValueError("random_offsets and randomized_positions cannot be combined")
        if self.randomized_positions and self.randomized_positions < self.train_len:
            raise ValueError(
                f"randomized_positions={self.randomized_positions} must be at least train_len={self.train_len}"
            )
        if self.shaw_clip is not None:
            check_int("shaw_clip", self.shaw_clip, minimum=1)

    @property
    def table_len(self) -> int:
        """Rows of the ``learned`` position table."""
        if self.max_len is not None:
            return self.max_len
        return max(self.train_len + self.random_offsets, self.randomized_positions)

    @property
    def warmup(self) -> int:
        """Warm-up steps actually used."""
        return self.warmup_steps if self.warmup_steps is not None else max(1, self.steps // 10)


@dataclass(frozen=True)
class StopRule:
    """Stop training once the model solves its task on a fixed held-out batch.

    Every ``check_every`` steps the model is scored on ``num_sequences`` held-out sequences of
    the training length (always the same ones); training stops when its accuracy reaches
    ``threshold`` times the *ceiling*: 1 for ``lookback`` and ``recall``, and for ``markov`` the
    accuracy of the true chain's most likely successor on the same sequences (no model can
    predict a random language better). ``TrainConfig.steps`` is the cap.

    Attributes:
        threshold: fraction of the ceiling to reach, in ``(0, 1]``.
        check_every: steps between checks (>= 1).
        num_sequences: held-out sequences (>= 1).
    """

    threshold: float = 0.99
    check_every: int = 50
    num_sequences: int = 256

    def __post_init__(self) -> None:
        check_positive_float("threshold", self.threshold)
        if self.threshold > 1:
            raise ValueError(f"threshold must be at most 1, got {self.threshold}")
        check_int("check_every", self.check_every, minimum=1)
        check_int("num_sequences", self.num_sequences, minimum=1)
