"""Evaluation: accuracy and loss of a trained model on fresh sequences, by length and by position
(on fixed sequences, or on sequences drawn from the caller's generator), accuracy in disjoint bands
of positions, and the entropy of its attention.

Shape legend:
    - ``B``: batch size (number of sequences)
    - ``L``: sequence length, the BOS token included
    - ``h``: number of heads
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F

from .._validation import check_int
from .config import TrainConfig
from .model import TinyCausalLM, _Block
from .tasks import IGNORE, make_batch, sample_positions
from .training import _on

__all__ = ["Evaluation", "accuracy_by_position", "attention_entropy", "band_means", "evaluate", "evaluate_by_position",
           "far_key_mask", "logits_with_key_masks", "mean_over_bands"]


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
def accuracy_by_position(
    model: TinyCausalLM,
    config: TrainConfig,
    length: int,
    *,
    generator: torch.Generator,
    num_sequences: int = 128,
    batch_size: int = 32,
    beyond_table: str = "error",
) -> torch.Tensor:
    """Accuracy at each position on sequences drawn from ``generator``.

    Unlike :func:`evaluate_by_position`, whose sequences are fixed once and for all, the caller
    chooses the sequences: a generator from :func:`~posenc.utils.seed_everything` lets a shifted-seed
    run score the model on other sequences. Tokens and positions (for a model trained at
    randomized positions, ``config.randomized_positions``) come from two streams, the second
    seeded from the first, so the tokens do not depend on how positions are drawn.

    Args:
        model: a trained :class:`~posenc.experiments.model.TinyCausalLM`.
        config: the task, and the range that randomized positions are drawn from.
        length: sequence length ``L`` (may exceed the training length).
        generator: the random generator the sequences are drawn from (advanced).
        num_sequences: number of sequences.
        batch_size: sequences per forward pass (a new draw of positions each).
        beyond_table: passed to :meth:`TinyCausalLM.forward <posenc.experiments.model.TinyCausalLM.forward>`.

    Returns:
        ``(length,)`` float64: the fraction of sequences answered correctly at each position; NaN
        at positions the task does not score.

    Raises:
        TypeError: if ``generator`` is not a ``torch.Generator``.
        ValueError: if a count is < 1, or ``length`` is too short for the task or exceeds the range
            of randomized positions.
    """
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    num_sequences = check_int("num_sequences", num_sequences, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    position_seed = int(torch.randint(2**62, (1,), generator=generator))
    position_generator = torch.Generator().manual_seed(position_seed)
    device = next(model.parameters()).device
    model.eval()
    correct = torch.zeros(length, dtype=torch.float64)
    scored = torch.zeros(length, dtype=torch.float64)
    for start in range(0, num_sequences, batch_size):
        tokens, labels = make_batch(config, min(batch_size, num_sequences - start), length, generator=generator)
        positions = _on(sample_positions(config, length, position_generator), device)
        predictions = model(tokens.to(device), positions, beyond_table=beyond_table).argmax(-1).cpu()
        mask = labels != IGNORE
        correct += ((predictions == labels) & mask).sum(0)
        scored += mask.sum(0)
    return correct / torch.where(scored > 0, scored, torch.nan)


def mean_over_bands(values: torch.Tensor, bands: Sequence[tuple[int, int]]) -> torch.Tensor:
    """The mean of ``values`` over each band of positions, ignoring NaN (unscored positions).

    Args:
        values: ``(..., n)`` scores by position.
        bands: ``(start, stop)`` half-open ranges of positions, ``0 <= start < stop <= n``.

    Returns:
        ``(..., len(bands))`` float tensor.

    Raises:
        ValueError: if ``bands`` is empty or a band is empty or out of range.
    """
    length = values.shape[-1]
    if not bands:
        raise ValueError("bands must not be empty")
    for start, stop in bands:
        if not 0 <= start < stop <= length:
            raise ValueError(f"band ({start}, {stop}) is not a non-empty range of 0..{length}")
    return torch.stack([values[..., start:stop].nanmean(-1) for start, stop in bands], dim=-1)



def band_means(accuracy: torch.Tensor, train_len: int, scales: Sequence[int] = (2, 4, 8)) -> dict[str, float]:
    """Mean accuracy in disjoint bands beyond the training length: ``L`` to ``s_1 L - 1``, then
    ``s_1 L`` to ``s_2 L - 1``, and so on, unscored (NaN) positions left out.

    Args:
        accuracy: ``(n,)`` accuracy by position, ``n >= scales[-1] * train_len``.
        train_len: the training length ``L``.
        scales: increasing integers > 1.

    Returns:
        ``{"L–2L": ..., "2L–4L": ..., "4L–8L": ...}`` for the default scales (an en dash between
        the ends; the first band starts at ``L``).

    Raises:
        ValueError: if ``train_len`` < 1, the scales are not increasing integers > 1, or
            ``accuracy`` is shorter than the last band.
    """
    train_len = check_int("train_len", train_len, minimum=1)
    scales = [check_int("scale", scale, minimum=2) for scale in scales]
    if not scales or any(low >= high for low, high in zip(scales, scales[1:], strict=False)):
        raise ValueError(f"scales must be increasing integers > 1, got {scales}")
    if accuracy.ndim != 1 or accuracy.shape[0] < scales[-1] * train_len:
        raise ValueError(f"accuracy must be 1-D with at least {scales[-1] * train_len} positions, "
                         f"got shape {tuple(accuracy.shape)}")
    ends = [1, *scales]
    names = [f"{'' if low == 1 else low}L–{high}L" for low, high in zip(ends, ends[1:], strict=False)]
    bands = [(low * train_len, high * train_len) for low, high in zip(ends, ends[1:], strict=False)]
    return dict(zip(names, mean_over_bands(accuracy, bands).tolist(), strict=True))


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


def far_key_mask(length: int, window: int, *, keep_first: bool = True) -> torch.Tensor:
    """Which keys lie outside each query's last ``window`` positions.

    Args:
        length: sequence length ``L``.
        window: the number of most recent keys a query keeps, itself included (``>= 1``).
        keep_first: if True, key 0 (BOS) is never far.

    Returns:
        ``(L, L)`` bool: True where key ``j`` is at least ``window`` positions before query ``i``.

    Raises:
        ValueError: if ``length`` or ``window`` is < 1.
    """
    length = check_int("length", length, minimum=1)
    window = check_int("window", window, minimum=1)
    queries, keys = torch.arange(length)[:, None], torch.arange(length)[None, :]
    far = queries - keys >= window
    if keep_first:
        far[:, 0] = False
    return far


@torch.no_grad()
def logits_with_key_masks(
    model: TinyCausalLM,
    tokens: torch.Tensor,
    keep: Sequence[torch.Tensor | None],
    *,
    beyond_table: str = "error",
) -> torch.Tensor:
    """Logits when each layer may attend only to the keys its mask keeps (an inference-time ablation).

    The causal mask still applies; ``keep[l]`` removes further keys in layer ``l``. With every
    entry None this is the model's own forward pass.

    Args:
        model: a :class:`~posenc.experiments.model.TinyCausalLM` (at its default positions).
        tokens: ``(B, L)`` integer tokens.
        keep: one entry per layer: None (every causal key) or a bool mask broadcastable to
            ``(B, h, L, L)``, True = may attend. Every query must keep at least one key.
        beyond_table: as in :meth:`TinyCausalLM.forward <posenc.experiments.model.TinyCausalLM.forward>`.

    Returns:
        ``(B, L, V + 1)`` logits.

    Raises:
        ValueError: if ``keep`` does not have one entry per layer.
    """
    if len(keep) != len(model.blocks):
        raise ValueError(f"keep needs one entry per layer ({len(model.blocks)}), got {len(keep)}")
    model.eval()
    hidden, positions = model._embed(tokens, None, beyond_table)
    for layer, mask in zip(model.blocks, keep, strict=True):
        block = cast(_Block, layer)  # nn.ModuleList items are typed as Module
        attended, _ = block.attention(block.attention_norm(hidden), mask=mask, causal=True, positions=positions)
        hidden = hidden + attended
        hidden = hidden + block.mlp(block.mlp_norm(hidden))
    return model.head(model.norm(hidden))
