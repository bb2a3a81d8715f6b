"""The synthetic tasks: sequences of random tokens labelled position by position, and the positions
a batch is placed at.

Shape legend:
    - ``B``: batch size (number of sequences)
    - ``L``: sequence length, the BOS token included
    - ``V``: number of content tokens; the model's vocabulary has ``V + 1`` entries (``BOS = V``)

The tasks (:data:`~posenc.experiments.config.TASKS`) label every position of a sequence
``[BOS, x_1, ..., x_{L-1}]`` of random content tokens; a label of :data:`IGNORE` means "not scored":

- ``"lookback"`` (relative): at position ``t`` output ``x_{t-k}``, the token ``k`` positions
  back (``k = lookback``). The answer depends on an offset only.
- ``"recall"`` (absolute): at every position ``t > p`` output ``x_p``, the token at the fixed
  position ``p = recall_position``. The answer depends on where the sequence starts.
- ``"markov"`` (language): the tokens follow a fixed random second-order Markov chain
  (:func:`markov_transitions`) and position ``t`` predicts ``x_{t+1}`` from ``x_{t-1}, x_t``;
  scored from ``t = 2`` on. Its per-position loss shows where a model stops working.
"""

from __future__ import annotations

import torch

from .._validation import check_int
from .config import TrainConfig

__all__ = ["IGNORE", "make_batch", "markov_transitions", "sample_positions"]


IGNORE = -100
"""Label of a position that is not scored (the ``ignore_index`` of cross-entropy)."""


_MARKOV_SEED = 20240101  # the language is part of the task, the same for every training seed


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
