"""Real text for character-level language models: a fixed corpus, its vocabulary, batches, training.

The corpus is a fixed selection of CPython's standard-library source (every third top-level
module of Python 3.11, 56 files, about 1.5 million characters), shipped with the package as
``corpus_data/stdlib.json.gz`` beside the license of those files (``LICENSE-PSF.txt``, the PSF
license). Shipping it, rather than reading the interpreter's own files, makes every machine see
the same characters (patch versions differ); :func:`corpus_files` checks them against
:data:`CORPUS_SHA256`. ``scripts/build_text_corpus.py`` rebuilds the archive.

- Vocabulary: the 95 printable ASCII characters and the newline (:data:`ALPHABET`), plus one
  *unknown* symbol for every other character; content tokens ``0 .. VOCAB_SIZE - 1`` and
  ``BOS = VOCAB_SIZE``, as in :func:`posenc.experiments.tasks.make_batch`.
- Split by file: every :data:`VALIDATION_EVERY`-th file (in sorted order) is for validation
  only, so validation text is never seen in training.
- Batches (:func:`text_batch`): random windows of the split's text, ``[BOS, c_0, ..., c_{L-2}]``
  labelled with the next character at every position, ``[c_0, ..., c_{L-1}]``.
- Training (:func:`train_text`) and loss by position (:func:`text_loss_by_position`) for a
  :class:`~posenc.experiments.model.TinyCausalLM` of any position scheme; chapter 8's models are
  trained by ``make train`` into the model store (families ``ch8-text-<scheme>``).

Shape legend: ``B`` windows, ``L`` tokens per window (BOS included), ``N`` characters.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from ._validation import check_choice, check_int, check_positive_float
from .experiments import SCHEDULES, TinyCausalLM, TrainConfig, TrainingRun, _optimise, build_model
from .multihead import POSITION_SCHEMES

__all__ = [
    "ALPHABET",
    "BOS",
    "CORPUS_SHA256",
    "SPLITS",
    "UNKNOWN",
    "VALIDATION_EVERY",
    "VOCAB_SIZE",
    "TextConfig",
    "corpus_files",
    "decode",
    "encode",
    "split_files",
    "split_tokens",
    "text_batch",
    "text_config",
    "text_loss_by_position",
    "train_text",
]

CORPUS_SHA256 = "4109de31fbc349afe01fae61808ed28defa98950b734709f863d066e5e160a22"
"""sha256 of the corpus archive's uncompressed content (recorded in every text model's manifest)."""
ALPHABET = "".join(chr(code) for code in range(32, 127)) + "\n"
"""The characters with a token of their own, printable ASCII (space to ``~``) and the newline."""
UNKNOWN = len(ALPHABET)
"""The token of every character outside :data:`ALPHABET` (96)."""
VOCAB_SIZE = UNKNOWN + 1
"""Content tokens (97); the model's vocabulary adds ``BOS``."""
BOS = VOCAB_SIZE
"""The beginning-of-sequence token (97), as in :func:`posenc.experiments.tasks.make_batch`."""
SPLITS = ("train", "validation")
"""The two parts of the corpus, disjoint by file."""
VALIDATION_EVERY = 8
"""Files ``VALIDATION_EVERY - 1, 2 * VALIDATION_EVERY - 1, ...`` (sorted by name) are validation."""
_ARCHIVE = Path(__file__).with_name("corpus_data") / "stdlib.json.gz"
_INDEX = {character: index for index, character in enumerate(ALPHABET)}
_TEXT_EVAL_SEED = 31_415  # the validation windows of text_loss_by_position, the same for every model


# --------------------------------------------------------------------------- the corpus


@functools.lru_cache(maxsize=1)
def corpus_files() -> tuple[tuple[str, str], ...]:
    """The corpus: ``(file name, text)`` pairs sorted by name.

    Returns:
        56 pairs; the texts total about 1.5 million characters.

    Raises:
        RuntimeError: if the shipped archive does not match :data:`CORPUS_SHA256`.
    """
    payload = gzip.decompress(_ARCHIVE.read_bytes())
    digest = hashlib.sha256(payload).hexdigest()
    if digest != CORPUS_SHA256:
        raise RuntimeError(f"{_ARCHIVE} has sha256 {digest}, expected {CORPUS_SHA256}; reinstall posenc")
    files = json.loads(payload)["files"]
    return tuple(sorted((name, text) for name, text in files))


def split_files(split: str) -> tuple[str, ...]:
    """Names of the files of ``split`` (``"train"`` or ``"validation"``), disjoint between splits.

    Raises:
        ValueError: if ``split`` is not one of :data:`SPLITS`.
    """
    check_choice("split", split, SPLITS)
    validation = split == "validation"
    return tuple(
        name for index, (name, _) in enumerate(corpus_files())
        if (index % VALIDATION_EVERY == VALIDATION_EVERY - 1) == validation
    )


def encode(text: str) -> torch.Tensor:
    """Tokens of ``text``: one per character, :data:`UNKNOWN` for characters outside :data:`ALPHABET`.

    Args:
        text: any string.

    Returns:
        ``(N,)`` ``torch.long`` tokens in ``[0, VOCAB_SIZE)``, ``N = len(text)``.

    Raises:
        TypeError: if ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return torch.tensor([_INDEX.get(character, UNKNOWN) for character in text], dtype=torch.long)


def decode(tokens: torch.Tensor) -> str:
    """The text of ``tokens``: :data:`UNKNOWN` reads as U+FFFD, ``BOS`` as nothing.

    Args:
        tokens: 1-D integer tensor of tokens in ``[0, BOS]``.

    Returns:
        A string of one character per non-BOS token.

    Raises:
        TypeError: if ``tokens`` is not an integer tensor.
        ValueError: if it is not 1-D or holds a token outside ``[0, BOS]``.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must be an integer tensor, got {type(tokens).__name__}")
    if tokens.dim() != 1:
        raise ValueError(f"tokens must be 1-D, got shape {tuple(tokens.shape)}")
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) > BOS):
        raise ValueError(f"tokens must lie in [0, {BOS}]")
    symbols = ALPHABET + "\N{REPLACEMENT CHARACTER}"
    return "".join(symbols[token] for token in tokens.tolist() if token != BOS)


@functools.lru_cache(maxsize=2)
def split_tokens(split: str) -> torch.Tensor:
    """The encoded text of ``split``: its files in sorted order, one after the other.

    Returns:
        ``(N,)`` ``torch.long`` tokens (about 1.3 million for ``"train"``, 0.2 for ``"validation"``).

    Raises:
        ValueError: if ``split`` is not one of :data:`SPLITS`.
    """
    names = set(split_files(split))
    return encode("".join(text for name, text in corpus_files() if name in names))


def text_batch(
    split: str, batch_size: int, length: int, *, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows of ``split`` as a next-character batch.

    A window is ``length`` consecutive characters ``c_0 .. c_{L-1}`` of the split's text; the
    tokens are ``[BOS, c_0, ..., c_{L-2}]`` and the labels ``[c_0, ..., c_{L-1}]``: position
    ``t`` predicts the character that follows it (every position is scored).

    Args:
        split: ``"train"`` or ``"validation"``.
        batch_size: windows ``B`` (>= 1).
        length: tokens per window ``L`` (>= 2), BOS included.
        generator: random generator for the window starts (default: torch's global one).

    Returns:
        ``(tokens, labels)``, both ``(B, L)`` ``torch.long``.

    Raises:
        ValueError: if ``split`` is unknown, ``batch_size < 1`` or ``length`` is < 2 or longer
            than the split.
    """
    text = split_tokens(split)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    length = check_int("length", length, minimum=2)
    if length > len(text):
        raise ValueError(f"length={length} exceeds the {len(text)} characters of the {split} split")
    starts = torch.randint(len(text) - length + 1, (batch_size,), generator=generator)
    labels = text[starts[:, None] + torch.arange(length)]
    tokens = torch.cat([torch.full((batch_size, 1), BOS), labels[:, :-1]], dim=1)
    return tokens, labels


# --------------------------------------------------------------------------- models


@dataclass(frozen=True)
class TextConfig(TrainConfig):
    """A character-level language model of the corpus: :class:`~posenc.experiments.config.TrainConfig`'s
    model and optimiser fields with ``task="text"`` and ``vocab_size = VOCAB_SIZE``.

    Build one with :func:`text_config`. The synthetic-task fields ``random_offsets`` and
    ``randomized_positions`` must keep their defaults (0); ``lookback`` and ``recall_position``
    are accepted but unused, since text models train on the corpus, not on a task.
    """

    def __post_init__(self) -> None:
        if self.task != "text":
            raise ValueError(f"a TextConfig has task='text', got {self.task!r}")
        check_choice("position", self.position, POSITION_SCHEMES)
        if self.vocab_size != VOCAB_SIZE:
            raise ValueError(f"vocab_size must be the corpus's {VOCAB_SIZE}, got {self.vocab_size}")
        check_int("num_heads", self.num_heads, minimum=1)
        check_int("dim", self.dim, minimum=self.num_heads)
        if self.dim % self.num_heads or (self.position == "rope" and (self.dim // self.num_heads) % 2):
            raise ValueError(f"dim={self.dim} must split into num_heads={self.num_heads} heads (of even size for rope)")
        check_int("num_layers", self.num_layers, minimum=1)
        check_int("train_len", self.train_len, minimum=2)
        check_int("steps", self.steps, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_positive_float("learning_rate", self.learning_rate)
        check_choice("schedule", self.schedule, SCHEDULES)
        if self.warmup_steps is not None:
            check_int("warmup_steps", self.warmup_steps, minimum=1)
        if self.shaw_clip is not None:
            check_int("shaw_clip", self.shaw_clip, minimum=1)
        if self.max_len is not None:
            check_int("max_len", self.max_len, minimum=1)
        if self.random_offsets or self.randomized_positions:
            raise ValueError("random_offsets and randomized_positions are not used by text models")


def text_config(position: str, **changes: object) -> TextConfig:
    """Chapter 8's text model for ``position``: d_model 64, 4 heads, 2 layers, L = 64, batch 32,
    1500 AdamW steps at 3e-3 (100 warm-up steps, then cosine decay), Shaw clipped at L / 2.

    Args:
        position: one of :data:`~posenc.multihead.POSITION_SCHEMES`.
        **changes: fields of :class:`TextConfig` to override.

    Returns:
        The :class:`TextConfig`.

    Raises:
        ValueError, TypeError: if a field is invalid.
    """
    check_choice("position", position, POSITION_SCHEMES)
    options: dict[str, object] = {
        "task": "text", "position": position, "vocab_size": VOCAB_SIZE, "dim": 64, "num_heads": 4,
        "num_layers": 2, "train_len": 64, "steps": 1500, "batch_size": 32, "learning_rate": 3e-3,
        "schedule": "cosine", "warmup_steps": 100, "shaw_clip": 32 if position == "shaw" else None,
    }
    options.update(changes)
    return TextConfig(**options)  # type: ignore[arg-type]


def _check_text_config(config: object) -> TextConfig:
    if not isinstance(config, TextConfig):
        raise TypeError(f"config must be a TextConfig (see text_config), got {type(config).__name__}")
    return config


def train_text(config: TextConfig, seed: int, *, progress: bool | None = None) -> TrainingRun:
    """Train the text model of ``config`` from scratch with ``seed`` on the training split.

    AdamW (weight decay 0.01), gradient norm clipped at 1, linear warm-up then
    ``config.schedule``, exactly ``config.steps`` steps on the current device's CPU.

    Args:
        config: a :class:`TextConfig`.
        seed: non-negative seed of the initial weights and of the windows drawn.
        progress: show a progress bar (default as :func:`posenc.experiments.training.train`).

    Returns:
        A :class:`~posenc.experiments.training.TrainingRun` (``stop_reason="steps"``), model in eval mode.

    Raises:
        TypeError: if ``config`` is not a :class:`TextConfig`.
        ValueError: if ``seed`` is negative.
    """
    config = _check_text_config(config)
    seed = check_int("seed", seed, minimum=0)
    torch.manual_seed(seed)
    model = build_model(config)
    data = torch.Generator().manual_seed(seed)

    def next_batch() -> tuple[torch.Tensor, torch.Tensor, None]:
        tokens, labels = text_batch("train", config.batch_size, config.train_len, generator=data)
        return tokens, labels, None

    losses, _, seconds = _optimise(model, config, next_batch, desc=f"text/{config.position}/seed {seed}",
                                  progress=progress)
    return TrainingRun(config, seed, model.eval(), losses, seconds)


@torch.no_grad()
def text_loss_by_position(
    model: TinyCausalLM, length: int, *, num_windows: int = 256, batch_size: int = 32
) -> tuple[torch.Tensor, torch.Tensor]:
    """Validation accuracy and loss of a text model at each position of windows of ``length``.

    The windows are drawn from the validation split with a fixed seed, so every model is scored
    on the same text. ``learned`` models give positions past their table its last row.

    Args:
        model: a :class:`~posenc.experiments.model.TinyCausalLM` over the corpus vocabulary.
        length: window length ``L`` (may exceed the training length).
        num_windows: windows averaged (>= 1).
        batch_size: windows per forward pass (>= 1).

    Returns:
        ``(accuracy, loss)``, each ``(length,)`` float64: the fraction of windows whose most
        likely next character is right, and the mean cross-entropy (nats), at each position.

    Raises:
        TypeError: if ``model`` is not a :class:`~posenc.experiments.model.TinyCausalLM`.
        ValueError: if its vocabulary is not the corpus's, or a count is invalid.
    """
    if not isinstance(model, TinyCausalLM):
        raise TypeError(f"model must be a TinyCausalLM, got {type(model).__name__}")
    if model.vocab_size != VOCAB_SIZE:
        raise ValueError(f"model has {model.vocab_size} content tokens, the corpus {VOCAB_SIZE}")
    num_windows = check_int("num_windows", num_windows, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    generator = torch.Generator().manual_seed(_TEXT_EVAL_SEED + length)
    model.eval()
    correct = torch.zeros(length, dtype=torch.float64)
    total = torch.zeros(length, dtype=torch.float64)
    for begin in range(0, num_windows, batch_size):
        tokens, labels = text_batch("validation", min(batch_size, num_windows - begin), length, generator=generator)
        logits = model(tokens, beyond_table="clip").float()
        total += F.cross_entropy(logits.transpose(1, 2), labels, reduction="none").double().sum(0)
        correct += (logits.argmax(-1) == labels).double().sum(0)
    return correct / num_windows, total / num_windows
