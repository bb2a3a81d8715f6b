"""Training: the loop that every model of the book shares, the stopping rule's held-out check, and a
disk cache of trained weights.

Shape legend:
    - ``B``: batch size (number of sequences)
    - ``L``: sequence length, the BOS token included
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

from .._validation import check_int
from .config import StopRule, TrainConfig
from .model import TinyCausalLM, build_model
from .tasks import IGNORE, make_batch, markov_transitions, sample_positions

__all__ = ["TrainingRun", "cache_path", "heldout_batch", "train", "train_or_load"]


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
            (the :class:`~posenc.experiments.config.StopRule` was met) or ``"cap"`` (the rule was never met).
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
    """The fixed held-out sequences of a :class:`~posenc.experiments.config.StopRule` and the ceiling accuracy on them.

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
        stop: optional :class:`~posenc.experiments.config.StopRule`; then ``config.steps`` is a cap.

    Returns:
        A :class:`TrainingRun` with the model on the CPU, in evaluation mode.

    Raises:
        TypeError: if ``config`` is not a :class:`~posenc.experiments.config.TrainConfig` or ``stop`` not a
            :class:`~posenc.experiments.config.StopRule`.
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


_CACHE_FORMAT = 1


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
        TypeError: if ``config`` is not a :class:`~posenc.experiments.config.TrainConfig`.
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
