"""A small training kit: synthetic tasks, a tiny causal transformer, training, evaluation.

Chapter 8 trains one tiny model per position scheme and measures what each does beyond the
length it was trained on; chapter 9 reuses the trained RoPE models. Everything here runs on a
CPU in seconds (and on a GPU if one is present), is seeded, and caches trained weights on disk.

Shape legend:
    - ``B``: batch size (number of sequences)
    - ``L``: sequence length, the BOS token included
    - ``V``: number of content tokens; the model's vocabulary has ``V + 1`` entries (``BOS = V``)
    - ``D``: model dimension; ``h``: number of heads

The tasks (:data:`TASKS`) label every position of a sequence ``[BOS, x_1, ..., x_{L-1}]`` of
random content tokens; a label of :data:`IGNORE` means "not scored":

- ``"lookback"`` (relative): at position ``t`` output ``x_{t-k}``, the token ``k`` positions
  back (``k = lookback``). The answer depends on an offset only.
- ``"recall"`` (absolute): at every position ``t > p`` output ``x_p``, the token at the fixed
  position ``p = recall_position``. The answer depends on where the sequence starts.
- ``"markov"`` (language): the tokens follow a fixed random second-order Markov chain
  (:func:`markov_transitions`) and position ``t`` predicts ``x_{t+1}`` from ``x_{t-1}, x_t``;
  scored from ``t = 2`` on. Its per-position loss shows where a model stops working.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ._validation import check_choice, check_int, check_positive_float, check_tensor
from .absolute import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .multihead import POSITION_SCHEMES, MultiHeadSelfAttention

__all__ = [
    "BEYOND_TABLE",
    "IGNORE",
    "TASKS",
    "SCHEDULES",
    "Evaluation",
    "StopRule",
    "TinyCausalLM",
    "TrainConfig",
    "TrainingRun",
    "attention_entropy",
    "build_model",
    "cache_path",
    "evaluate",
    "evaluate_by_position",
    "heldout_batch",
    "make_batch",
    "markov_transitions",
    "sample_positions",
    "train",
    "train_or_load",
]

TASKS = ("lookback", "recall", "markov")
"""The synthetic tasks of :func:`make_batch`."""

IGNORE = -100
"""Label of a position that is not scored (the ``ignore_index`` of cross-entropy)."""

BEYOND_TABLE = ("error", "clip")
"""What a ``learned`` :class:`TinyCausalLM` does with a position past its table: refuse or clip."""
SCHEDULES = ("cosine", "constant")
"""Learning-rate schedules of :class:`TrainConfig` (both after a linear warm-up)."""
_CACHE_FORMAT = 1
_MARKOV_SEED = 20240101  # the language is part of the task, the same for every training seed


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a trained model, apart from the seed.

    Two runs with equal configs and seeds produce the same weights (on the same machine and
    thread count), which is what :func:`train_or_load` relies on to cache them.

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
            in evaluation too (:func:`sample_positions`).
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


# --------------------------------------------------------------------------- tasks


def markov_transitions(vocab_size: int) -> torch.Tensor:
    """The fixed random second-order Markov chain of the ``markov`` task.

    Each context ``(a, b)`` of two content tokens has a successor distribution concentrated on
    a few tokens (the normalised eighth powers of uniform draws), so the language is predictable
    from the last two tokens but not deterministic. The chain depends only on ``vocab_size``.

    Args:
        vocab_size: number of content tokens ``V`` (>= 2).

    Returns:
        ``(V, V, V)`` float64 tensor ``T`` with ``T[a, b, c] = P(next = c | previous two = a, b)``;
        every ``T[a, b]`` sums to 1.

    Raises:
        ValueError: if ``vocab_size < 2``.
    """
    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    generator = torch.Generator().manual_seed(_MARKOV_SEED + vocab_size)
    # A uniform draw raised to a high power is small except for a few entries: each context
    # gets a handful of likely successors.
    weights = torch.rand(vocab_size, vocab_size, vocab_size, dtype=torch.float64, generator=generator) ** 8
    return weights / weights.sum(-1, keepdim=True)


def make_batch(
    config: TrainConfig, batch_size: int, length: int, *, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``batch_size`` sequences of ``config.task`` with their labels.

    Args:
        config: the task and its options (``vocab_size``, ``lookback``, ``recall_position``).
        batch_size: number of sequences ``B`` (>= 1).
        length: tokens per sequence ``L``, BOS included; must leave at least one scored position.
        generator: random generator (default: torch's global one).

    Returns:
        ``(tokens, labels)``, both ``(B, L)`` ``torch.long``: ``tokens[:, 0]`` is BOS
        (``= vocab_size``), and ``labels[b, t]`` is the answer expected at position ``t`` or
        :data:`IGNORE`.

    Raises:
        ValueError: if ``batch_size < 1`` or ``length`` is too short for the task.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    first_scored = {"lookback": config.lookback + 1, "recall": config.recall_position + 1, "markov": 2}[config.task]
    length = check_int("length", length, minimum=first_scored + 1 + (config.task == "markov"))
    vocab = config.vocab_size
    content = torch.randint(vocab, (batch_size, length), generator=generator)
    if config.task == "markov":
        transitions = markov_transitions(vocab)
        for t in range(3, length):
            probabilities = transitions[content[:, t - 2], content[:, t - 1]]
            content[:, t] = torch.multinomial(probabilities, 1, generator=generator)[:, 0]
    tokens = content.clone()
    tokens[:, 0] = vocab
    labels = torch.full_like(tokens, IGNORE)
    if config.task == "lookback":
        labels[:, first_scored:] = tokens[:, first_scored - config.lookback : length - config.lookback]
    elif config.task == "recall":
        labels[:, first_scored:] = tokens[:, config.recall_position, None]
    else:
        labels[:, first_scored:-1] = tokens[:, first_scored + 1 :]
    return tokens, labels


# --------------------------------------------------------------------------- the model


class TinyCausalLM(nn.Module):
    """A tiny causal transformer: embeddings, pre-norm blocks of attention and MLP, logits.

    ``position`` selects how the model sees order. ``learned`` and ``sinusoidal`` add their
    encoding to the token embeddings once, at the input; the relative schemes (``shaw``,
    ``t5``, ``alibi``, ``rope``) act in every layer's :class:`~posenc.multihead.MultiHeadSelfAttention`;
    ``none`` has only the causal mask (NoPE). ``t5`` buckets are unidirectional (a causal
    model never sees the future), Shaw's clipping distance is ``max_len``.

    Args:
        vocab_size: number of content tokens ``V``; the vocabulary adds one BOS token.
        position: one of :data:`~posenc.multihead.POSITION_SCHEMES`.
        dim: model dimension ``D``.
        num_heads: heads per layer ``h``.
        num_layers: number of blocks.
        max_len: rows of the ``learned`` table; also the ``t5`` saturation distance and the
            ``shaw`` clipping distance unless ``shaw_clip`` is given.
        shaw_clip: optional ``shaw`` clipping distance.

    Shapes:
        ``forward(tokens)``: ``(B, L)`` integer tokens -> ``(B, L, V + 1)`` logits.

    Raises:
        ValueError: if a size is invalid or ``position`` is unknown.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        position: str,
        dim: int = 32,
        num_heads: int = 4,
        num_layers: int = 2,
        max_len: int = 32,
        shaw_clip: int | None = None,
    ) -> None:
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.position = check_choice("position", position, POSITION_SCHEMES)
        self.max_len = check_int("max_len", max_len, minimum=2)
        self.embedding = nn.Embedding(vocab_size + 1, dim)
        self.input_encoding: SinusoidalPositionalEncoding | LearnedPositionalEmbedding | None = None
        if position == "sinusoidal":
            self.input_encoding = SinusoidalPositionalEncoding(dim)
        elif position == "learned":
            self.input_encoding = LearnedPositionalEmbedding(max_len, dim)
        layer_position = "none" if position in ("sinusoidal", "learned") else position
        options: dict[str, object] = {}
        if position == "shaw":
            options["max_distance"] = max_len if shaw_clip is None else check_int("shaw_clip", shaw_clip, minimum=1)
        elif position == "t5":
            options.update(bidirectional=False, num_buckets=16, max_distance=max(max_len, 9))
        self.blocks = nn.ModuleList(
            _Block(dim, num_heads, layer_position, options)
            for _ in range(check_int("num_layers", num_layers, minimum=1))
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size + 1)

    def forward(
        self, tokens: torch.Tensor, positions: torch.Tensor | None = None, *, beyond_table: str = "error"
    ) -> torch.Tensor:
        """Logits for every position.

        Args:
            tokens: ``(B, L)`` integer tokens in ``[0, V]``.
            positions: optional 1-D tensor of ``L`` integer positions (default ``arange(L)``).
            beyond_table: what a ``learned`` model does with positions ``>= max_len``:
                ``"error"`` refuses (ValueError), ``"clip"`` gives them the last row of the table.

        Returns:
            ``(B, L, V + 1)`` logits.

        Raises:
            TypeError: if ``tokens`` is not an integer tensor.
            ValueError: if ``tokens`` is not 2-D or out of range, or a ``learned`` model meets a
                position beyond its table with ``beyond_table="error"``.
        """
        hidden, positions = self._embed(tokens, positions, beyond_table)
        for block in self.blocks:
            hidden = block(hidden, positions)
        return self.head(self.norm(hidden))

    def attention_weights(
        self, tokens: torch.Tensor, positions: torch.Tensor | None = None, *, beyond_table: str = "error"
    ) -> list[torch.Tensor]:
        """The attention weights of every layer, ``num_layers`` tensors of shape ``(B, h, L, L)``.

        Same arguments as :meth:`forward`.
        """
        hidden, positions = self._embed(tokens, positions, beyond_table)
        weights = []
        for block in self.blocks:
            hidden, layer_weights = block(hidden, positions, need_weights=True)
            weights.append(layer_weights)
        return weights

    def _embed(
        self, tokens: torch.Tensor, positions: torch.Tensor | None, beyond_table: str
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        tokens = check_tensor("tokens", tokens)
        if tokens.is_floating_point() or tokens.dtype == torch.bool:
            raise TypeError(f"tokens must be an integer tensor, got dtype {tokens.dtype}")
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (B, L), got {tuple(tokens.shape)}")
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) > self.vocab_size):
            raise ValueError(f"tokens must lie in [0, {self.vocab_size}] (BOS = {self.vocab_size})")
        check_choice("beyond_table", beyond_table, BEYOND_TABLE)
        hidden = self.embedding(tokens)
        if self.input_encoding is not None:
            table_positions = torch.arange(tokens.shape[1], device=tokens.device) if positions is None else positions
            if isinstance(self.input_encoding, LearnedPositionalEmbedding) and beyond_table == "clip":
                table_positions = table_positions.clamp(max=self.max_len - 1)
            hidden = self.input_encoding(hidden, table_positions)
        return hidden, positions


class _Block(nn.Module):
    """Pre-norm block: ``x + attn(norm(x))`` then ``x + mlp(norm(x))``."""

    def __init__(self, dim: int, num_heads: int, position: str, options: dict[str, object]) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = MultiHeadSelfAttention(dim, num_heads, position=position, **options)  # type: ignore[arg-type]
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None, need_weights: bool = False):  # type: ignore[no-untyped-def]
        attended, weights = self.attention(
            self.attention_norm(x), causal=True, positions=positions, need_weights=need_weights
        )
        x = x + attended
        x = x + self.mlp(self.mlp_norm(x))
        return (x, weights) if need_weights else x


def build_model(config: TrainConfig) -> TinyCausalLM:
    """The untrained :class:`TinyCausalLM` of ``config`` (initialised from torch's global generator)."""
    return TinyCausalLM(
        config.vocab_size,
        position=config.position,
        dim=config.dim,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        max_len=config.table_len,
        shaw_clip=config.shaw_clip,
    )


# --------------------------------------------------------------------------- training


@dataclass
class TrainingRun:
    """A trained model and how it got there.

    Attributes:
        config: the configuration it was trained with.
        seed: the training seed.
        model: the trained model, in evaluation mode.
        losses: training loss at every step.
        seconds: wall-clock training time (of the run that produced the weights).
        from_cache: True if the weights were loaded from the disk cache.
        stop_reason: ``"steps"`` (ran all ``config.steps``, no stopping rule), ``"threshold"``
            (the :class:`StopRule` was met) or ``"cap"`` (the rule was never met).
        checks: ``(step, held-out accuracy)`` at every check of the stopping rule.
    """

    config: TrainConfig
    seed: int
    model: TinyCausalLM
    losses: list[float] = field(repr=False)
    seconds: float
    from_cache: bool = False
    stop_reason: str = "steps"
    checks: list[tuple[int, float]] = field(default_factory=list, repr=False)

    @property
    def steps_run(self) -> int:
        """Optimiser steps actually taken."""
        return len(self.losses)


def _show_progress(progress: bool | None) -> bool:
    if progress is not None:
        return progress
    # The book's builds set POSENC_PROGRESS=0: a progress bar writes to stderr, which fails them.
    setting = os.environ.get("POSENC_PROGRESS")
    if setting is not None:
        return setting not in ("", "0", "false", "no")
    return "ipykernel" in sys.modules or sys.stderr.isatty()


def _default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


_HELDOUT_SEED = 987_654  # the stopping rule's held-out sequences, distinct from evaluation's


def heldout_batch(config: TrainConfig, num_sequences: int) -> tuple[torch.Tensor, torch.Tensor, float]:
    """The fixed held-out sequences of a :class:`StopRule` and the ceiling accuracy on them.

    Args:
        config: the task.
        num_sequences: number of sequences (>= 1), of length ``config.train_len``.

    Returns:
        ``(tokens, labels, ceiling)``: the batch, and the best accuracy any predictor can expect
        on it (1 for the deterministic tasks; for ``markov``, the accuracy of the true chain's
        most likely successor).
    """
    generator = torch.Generator().manual_seed(_HELDOUT_SEED)
    tokens, labels = make_batch(config, num_sequences, config.train_len, generator=generator)
    if config.task != "markov":
        return tokens, labels, 1.0
    best = markov_transitions(config.vocab_size).argmax(-1)  # (V, V): most likely successor
    scored = labels[:, 2:-1]
    oracle = best[tokens[:, 1:-2], tokens[:, 2:-1]]
    return tokens, labels, float((oracle == scored).double().mean())


def sample_positions(config: TrainConfig, length: int, generator: torch.Generator) -> torch.Tensor | None:
    """The positions of one batch of ``length`` tokens under ``config``.

    ``None`` (the model's default ``0, 1, ..., length - 1``) unless ``config`` trains at
    randomized positions; then ``length`` distinct positions drawn uniformly from
    ``0..config.randomized_positions - 1`` and sorted, as Ruoss et al. (2023) draw them in
    training and at test time alike.

    Args:
        config: the configuration.
        length: tokens per sequence.
        generator: the random generator to draw from.

    Returns:
        ``None``, or a ``(length,)`` int64 tensor of increasing positions.

    Raises:
        ValueError: if ``length`` is < 1 or exceeds ``config.randomized_positions``.
    """
    length = check_int("length", length, minimum=1)
    if not config.randomized_positions:
        return None
    if length > config.randomized_positions:
        raise ValueError(
            f"length={length} exceeds the randomized position range {config.randomized_positions}: "
            "a sequence needs distinct positions"
        )
    return torch.randperm(config.randomized_positions, generator=generator)[:length].sort().values


@torch.no_grad()
def _accuracy_on(model: nn.Module, tokens: torch.Tensor, labels: torch.Tensor, config: TrainConfig) -> float:
    """Accuracy on the stopping rule's held-out batch; at randomized positions, read in chunks of
    ``config.batch_size`` sequences, each at positions of its own (the same at every check)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    if config.randomized_positions:
        generator = torch.Generator().manual_seed(_HELDOUT_SEED)
        predictions = torch.cat([
            model(chunk.to(device), _on(sample_positions(config, chunk.shape[1], generator), device)).argmax(-1).cpu()
            for chunk in tokens.split(config.batch_size)
        ])
    else:
        predictions = model(tokens.to(device)).argmax(-1).cpu()
    model.train(was_training)
    mask = labels != IGNORE
    return float((predictions == labels)[mask].double().mean())


def _on(positions: torch.Tensor | None, device: torch.device) -> torch.Tensor | None:
    return None if positions is None else positions.to(device)


def train(
    config: TrainConfig,
    seed: int,
    *,
    device: torch.device | str | None = None,
    progress: bool | None = None,
    stop: StopRule | None = None,
) -> TrainingRun:
    """Train the model of ``config`` from scratch with ``seed``.

    The seed fixes the initial weights and the training data. AdamW (weight decay 0.01),
    gradient norm clipped at 1, linear warm-up then ``config.schedule``.

    Args:
        config: what to train.
        seed: non-negative integer seed.
        device: where to train (default: a GPU if present, else the CPU).
        progress: show a tqdm progress bar; default: as the environment variable
            ``POSENC_PROGRESS`` says (``0``, ``false``, ``no`` or empty: never; any other value:
            always), and when it is unset, only when run interactively (a Jupyter kernel or a
            terminal).
        stop: optional :class:`StopRule`; then ``config.steps`` is a cap.

    Returns:
        A :class:`TrainingRun` with the model on the CPU, in evaluation mode.

    Raises:
        TypeError: if ``config`` is not a :class:`TrainConfig` or ``stop`` not a :class:`StopRule`.
        ValueError: if ``seed`` is negative.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    if stop is not None and not isinstance(stop, StopRule):
        raise TypeError(f"stop must be a StopRule or None, got {type(stop).__name__}")
    seed = check_int("seed", seed, minimum=0)
    device = torch.device(device) if device is not None else _default_device()
    torch.manual_seed(seed)
    model = build_model(config).to(device)
    data = torch.Generator().manual_seed(seed)
    heldout = None if stop is None else heldout_batch(config, stop.num_sequences)
    checks: list[tuple[int, float]] = []

    def next_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        tokens, labels = make_batch(config, config.batch_size, config.train_len, generator=data)
        positions = None
        if config.random_offsets:
            offset = int(torch.randint(config.random_offsets + 1, (1,), generator=data))
            positions = torch.arange(offset, offset + config.train_len, device=device)
        elif config.randomized_positions:
            positions = _on(sample_positions(config, config.train_len, data), device)
        return tokens.to(device), labels.to(device), positions

    def met_stop_rule(step: int) -> str | None:
        if heldout is None or stop is None or (step + 1) % stop.check_every:
            return None
        accuracy = _accuracy_on(model, heldout[0], heldout[1], config)
        checks.append((step + 1, accuracy))
        return f"{accuracy:.3f}" if accuracy < stop.threshold * heldout[2] else ""

    losses, stopped, seconds = _optimise(
        model, config, next_batch, desc=f"{config.task}/{config.position}/seed {seed}", progress=progress,
        check=met_stop_rule,
    )
    stop_reason = "threshold" if stopped else "steps" if stop is None else "cap"
    return TrainingRun(config, seed, model.cpu().eval(), losses, seconds, stop_reason=stop_reason, checks=checks)


def _optimise(
    model: nn.Module,
    config: TrainConfig,
    next_batch: Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]],
    *,
    desc: str,
    progress: bool | None = None,
    check: Callable[[int], str | None] | None = None,
) -> tuple[list[float], bool, float]:
    """The training loop of every model in the book, synthetic tasks and real text alike.

    AdamW (weight decay 0.01), gradient norm clipped at 1, linear warm-up over
    ``config.warmup`` steps, then ``config.schedule``; at most ``config.steps`` steps of
    cross-entropy on the labelled positions.

    Args:
        model: the model to train, in place.
        config: its configuration (learning rate, schedule, steps).
        next_batch: returns ``(tokens, labels, positions)`` for the next step; ``positions`` is
            ``None`` for ``0, 1, ...``.
        desc: the progress bar's label.
        progress: as in :func:`train`.
        check: optional, called after every step with its index: ``None`` (nothing to report),
            a status for the progress bar (go on), or ``""`` (stop now).

    Returns:
        ``(losses, stopped, seconds)``: the loss of every step taken, whether ``check`` stopped
        the loop, and the wall time of the loop.
    """
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    warmup = config.warmup

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        if config.schedule == "constant":
            return 1.0
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, config.steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    steps = range(config.steps)
    bar = None
    if _show_progress(progress):
        from tqdm.auto import tqdm  # type: ignore[import-untyped]

        bar = tqdm(steps, desc=desc, leave=False)
    losses: list[float] = []
    stopped = False
    start = time.perf_counter()
    model.train()
    for step in bar if bar is not None else steps:
        tokens, labels, positions = next_batch()
        logits = model(tokens, positions)
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        status = None if check is None else check(step)
        if status == "":
            stopped = True
            break
        if status is not None and bar is not None:
            bar.set_postfix(heldout=status)
    if bar is not None:
        bar.close()
    return losses, stopped, time.perf_counter() - start


def cache_path(config: TrainConfig, seed: int, cache_dir: str | None = None) -> str:
    """Where :func:`train_or_load` keeps the weights of ``(config, seed)``.

    The file name is a hash of every field of ``config``, the seed and the cache format, so a
    changed setting never loads stale weights. The directory is ``cache_dir``, else the
    environment variable ``POSENC_CACHE_DIR``, else ``~/.cache/posenc``.

    Args:
        config: the training configuration.
        seed: the training seed.
        cache_dir: optional directory (a string or a ``pathlib.Path``).

    Returns:
        The path of the ``.pt`` file (which may not exist yet), as a string.
    """
    directory = cache_dir or os.environ.get("POSENC_CACHE_DIR") or Path.home() / ".cache" / "posenc"
    key = json.dumps({"config": asdict(config), "seed": seed, "format": _CACHE_FORMAT}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return str(Path(directory) / f"{config.task}-{config.position}-seed{seed}-{digest}.pt")


def train_or_load(
    config: TrainConfig,
    seed: int,
    *,
    cache_dir: str | None = None,
    device: torch.device | str | None = None,
    progress: bool | None = None,
) -> TrainingRun:
    """Load the model of ``(config, seed)`` from the disk cache, or train it and cache it.

    Chapters that need the same trained model (chapter 9 reuses chapter 8's RoPE models) call
    this with the same config and seed and get the same weights without training twice.

    Args:
        config: what to train.
        seed: non-negative integer seed.
        cache_dir: cache directory (default: ``POSENC_CACHE_DIR``, else ``~/.cache/posenc``;
            see :func:`cache_path`).
        device: where to train if training is needed.
        progress: as in :func:`train`.

    Returns:
        A :class:`TrainingRun`; ``from_cache`` says whether it was loaded.

    Raises:
        TypeError: if ``config`` is not a :class:`TrainConfig`.
        ValueError: if ``seed`` is negative.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    seed = check_int("seed", seed, minimum=0)
    path = Path(cache_path(config, seed, cache_dir))
    if path.is_file():
        saved = torch.load(path, map_location="cpu", weights_only=True)
        model = build_model(config)
        model.load_state_dict(saved["state_dict"])
        return TrainingRun(config, seed, model.eval(), list(saved["losses"]), float(saved["seconds"]), True)
    run = train(config, seed, device=device, progress=progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    torch.save({"state_dict": run.model.state_dict(), "losses": run.losses, "seconds": run.seconds}, partial)
    partial.replace(path)  # atomic: a concurrent reader never sees half a file
    return run


# --------------------------------------------------------------------------- evaluation

_EVALUATION_SEED = 123_456  # every model is evaluated on the same sequences


@dataclass(frozen=True)
class Evaluation:
    """Accuracy and loss over the scored positions of a set of sequences.

    Attributes:
        length: sequence length ``L`` evaluated.
        accuracy: fraction of scored positions where the most likely token is the label.
        loss: mean cross-entropy (nats) over the scored positions.
    """

    length: int
    accuracy: float
    loss: float


@torch.no_grad()
def _per_token(
    model: TinyCausalLM, config: TrainConfig, length: int, num_sequences: int, batch_size: int, beyond_table: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(correct, loss, scored)``, each ``(num_sequences, length)``."""
    num_sequences = check_int("num_sequences", num_sequences, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    generator = torch.Generator().manual_seed(_EVALUATION_SEED + length)
    # a generator of its own, so that every model is scored on the same tokens
    position_generator = torch.Generator().manual_seed(_EVALUATION_SEED + length + 1)
    device = next(model.parameters()).device
    model.eval()
    correct, losses, scored = [], [], []
    for start in range(0, num_sequences, batch_size):
        tokens, labels = make_batch(config, min(batch_size, num_sequences - start), length, generator=generator)
        positions = _on(sample_positions(config, length, position_generator), device)
        logits = model(tokens.to(device), positions, beyond_table=beyond_table).float().cpu()
        mask = labels != IGNORE
        safe = labels.clamp(min=0)
        losses.append(F.cross_entropy(logits.transpose(1, 2), safe, reduction="none") * mask)
        correct.append((logits.argmax(-1) == labels) & mask)
        scored.append(mask)
    return torch.cat(correct), torch.cat(losses), torch.cat(scored)


def evaluate(
    model: TinyCausalLM,
    config: TrainConfig,
    length: int,
    *,
    num_sequences: int = 256,
    batch_size: int = 64,
    beyond_table: str = "error",
) -> Evaluation:
    """Accuracy and loss of ``model`` on fresh sequences of ``config.task`` of length ``length``.

    The sequences depend only on the task and ``length`` (a fixed evaluation seed), so every
    model is scored on the same data.

    Args:
        model: a trained :class:`TinyCausalLM`.
        config: the task (and its options) to evaluate on.
        length: sequence length ``L`` (may exceed the training length).
        num_sequences: number of sequences.
        batch_size: sequences per forward pass.
        beyond_table: passed to :meth:`TinyCausalLM.forward` (``learned`` models only).

    Returns:
        An :class:`Evaluation`.

    Raises:
        ValueError: if a count is < 1, ``length`` is too short for the task, or it exceeds the
            range of a model trained at randomized positions.
    """
    correct, losses, scored = _per_token(model, config, length, num_sequences, batch_size, beyond_table)
    count = scored.sum()
    return Evaluation(length, float(correct.sum() / count), float(losses.sum() / count))


def evaluate_by_position(
    model: TinyCausalLM,
    config: TrainConfig,
    length: int,
    *,
    num_sequences: int = 256,
    batch_size: int = 64,
    beyond_table: str = "error",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Accuracy and loss at each position, averaged over sequences.

    Same arguments as :func:`evaluate`.

    Returns:
        ``(accuracy, loss)``, each ``(length,)`` float64; NaN at positions the task does not score.
    """
    correct, losses, scored = _per_token(model, config, length, num_sequences, batch_size, beyond_table)
    count = scored.sum(0).double()
    count = torch.where(count > 0, count, torch.nan)
    return correct.sum(0) / count, losses.sum(0).double() / count


@torch.no_grad()
def attention_entropy(model: TinyCausalLM, tokens: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of every query's attention distribution, per layer and head.

    A query that spreads its weight evenly over ``n`` keys has entropy ``log n``; one that
    looks at a single key has entropy 0.

    Args:
        model: a :class:`TinyCausalLM`.
        tokens: ``(B, L)`` integer tokens.

    Returns:
        ``(num_layers, h, L)`` float64 tensor: the entropy at each query position, averaged
        over the batch.
    """
    model.eval()
    entropies = []
    for weights in model.attention_weights(tokens):
        weights = weights.double()
        entropies.append(-(weights * weights.clamp(min=1e-300).log()).sum(-1).mean(0))
    return torch.stack(entropies)
