"""The registry of the store's families: each a :class:`ModelSpec` (a name, a
:class:`~posenc.experiments.config.TrainConfig`, seeds and a stopping rule), registered by
:mod:`posenc.store.families` and looked up by name."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from .. import corpus, stretch
from .._validation import check_int, check_positive_float
from ..experiments import StopRule, TrainConfig

__all__ = ["ModelSpec", "register", "spec", "specs"]


@dataclass(frozen=True)
class ModelSpec:
    """A family of stored models: one config trained with several seeds.

    Attributes:
        name: unique family name (letters, digits, ``-`` and ``_``), e.g. ``"ch8-lookback-rope"``.
        config: what to train; ``config.steps`` is the step cap when ``stop`` is given.
        seeds: training seeds (non-negative, distinct).
        stop: the stopping rule, or ``None`` to run all ``config.steps``.
        eval_scales: the manifest records accuracy and loss at ``s * config.train_len`` for each
            ``s`` (evaluated with ``beyond_table="clip"``, the same sequences for every model).
        description: one line for the summary table.
        watch: if given (with ``stop=None``), a rule that is checked but not obeyed: the model
            trains all ``config.steps``, and the manifest records the first step at which the
            rule held on two consecutive checks, each on fresh sequences, with the model's
            accuracy at every position of sequences of ``8 L`` at that moment and at the end
            (chapter 8's common budget; the deterministic tasks only).
        finetune: if given, the family is a short fine-tune of the stored family
            ``finetune.base`` (same seed) under a stretch rule (:class:`posenc.stretch.FineTune`;
            chapter 9); ``config`` must then be the base family's config and ``stop`` ``None``.
        rope_base: if given, the base ``b`` of every rotary layer (default: the layers' own,
            ``10 000``); for a watched ``rope`` family only (chapter 9's second geometry). A
            fine-tune inherits its base family's.

    A :class:`posenc.corpus.TextConfig` as ``config`` makes a character-level language model of
    the corpus (:func:`posenc.corpus.train_text`, a fixed number of steps: ``stop`` must be
    ``None``); its manifest adds the validation loss at every position up to the largest scale.
    """

    name: str
    config: TrainConfig
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    stop: StopRule | None = field(default_factory=StopRule)
    eval_scales: tuple[int, ...] = (1, 2, 4, 8, 16)
    description: str = ""
    finetune: stretch.FineTune | None = None
    watch: StopRule | None = None
    rope_base: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or not all(c.isalnum() or c in "-_" for c in self.name):
            raise ValueError(f"name must be letters, digits, '-' and '_', got {self.name!r}")
        if not isinstance(self.config, TrainConfig):
            raise TypeError(f"config must be a TrainConfig, got {type(self.config).__name__}")
        if self.stop is not None and not isinstance(self.stop, StopRule):
            raise TypeError(f"stop must be a StopRule or None, got {type(self.stop).__name__}")
        seeds = tuple(check_int("seed", seed, minimum=0) for seed in self.seeds)
        if not seeds or len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds must be distinct and non-empty, got {self.seeds}")
        for scale in self.eval_scales:
            check_int("eval_scales entry", scale, minimum=1)
        if self.finetune is not None:
            if not isinstance(self.finetune, stretch.FineTune):
                raise TypeError(f"finetune must be a posenc.stretch.FineTune, got {type(self.finetune).__name__}")
            if self.stop is not None:
                raise ValueError("a fine-tune runs a fixed number of steps: give stop=None")
        if self.watch is not None:
            if not isinstance(self.watch, StopRule):
                raise TypeError(f"watch must be a StopRule or None, got {type(self.watch).__name__}")
            if self.stop is not None or self.finetune is not None:
                raise ValueError("a watched family trains all its steps: give stop=None and no finetune")
            if self.config.task not in ("lookback", "recall") or self.config.random_offsets or \
                    self.config.randomized_positions:
                raise ValueError("watch is for the look-back and recall tasks at positions 0, 1, ..., got "
                                 f"task {self.config.task!r} with random offsets or positions")
        if self.rope_base is not None:
            check_positive_float("rope_base", self.rope_base)
            if self.watch is None or self.config.position != "rope":
                raise ValueError("rope_base is for a watched family with position 'rope', got "
                                 f"position {self.config.position!r} and watch={self.watch}")
        if isinstance(self.config, corpus.TextConfig) and (self.stop is not None or self.finetune is not None):
            raise ValueError("a text model runs a fixed number of steps: give stop=None and no finetune")


_REGISTRY: dict[str, ModelSpec] = {}


def register(model_spec: ModelSpec) -> ModelSpec:
    """Add a family to the registry (``make train`` trains every registered family).

    Raises:
        TypeError: if ``model_spec`` is not a :class:`ModelSpec`.
        ValueError: if another family already has its name.
    """
    if not isinstance(model_spec, ModelSpec):
        raise TypeError(f"expected a ModelSpec, got {type(model_spec).__name__}")
    if model_spec.name in _REGISTRY and _REGISTRY[model_spec.name] != model_spec:
        raise ValueError(f"a different family is already registered as {model_spec.name!r}")
    _REGISTRY[model_spec.name] = model_spec
    return model_spec


def spec(name: str) -> ModelSpec:
    """The registered family ``name``.

    Raises:
        KeyError: if no family has that name (the message lists the close ones).
    """
    if name not in _REGISTRY:
        close = [known for known in _REGISTRY if name.split("-")[0] in known][:8]
        raise KeyError(f"no stored family {name!r}; registered families include {close or sorted(_REGISTRY)[:8]}")
    return _REGISTRY[name]


def specs(pattern: str = "*") -> list[ModelSpec]:
    """Registered families whose name matches the shell pattern (``fnmatch``), in registry order."""
    return [s for name, s in _REGISTRY.items() if fnmatch.fnmatchcase(name, pattern)]
