"""Evaluation: accuracy and loss of a trained model on fresh sequences, by length and by position, and
the entropy of its attention.

Shape legend:
    - ``B``: batch size (number of sequences)
    - ``L``: sequence length, the BOS token included
    - ``h``: number of heads
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .._validation import check_int
from .config import TrainConfig
from .model import TinyCausalLM
from .tasks import IGNORE, make_batch, sample_positions
from .training import _on

__all__ = ["Evaluation", "attention_entropy", "evaluate", "evaluate_by_position"]


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
        model: a trained :class:`~posenc.experiments.model.TinyCausalLM`.
        config: the task (and its options) to evaluate on.
        length: sequence length ``L`` (may exceed the training length).
        num_sequences: number of sequences.
        batch_size: sequences per forward pass.
        beyond_table: passed to :meth:`TinyCausalLM.forward <posenc.experiments.model.TinyCausalLM.forward>`
            (``learned`` models only).

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
        model: a :class:`~posenc.experiments.model.TinyCausalLM`.
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
