"""The model store: the book's trained models, trained once by ``make train``, loaded in seconds.

Every trained model the book shows is registered here as a :class:`ModelSpec` (a family: a
name, a :class:`~posenc.experiments.TrainConfig`, seeds and a stopping rule). ``make train``
(``python -m posenc.store train``) trains each ``(family, seed)`` and writes two files into the
store folder, ``src/posenc/trained/`` (package data: an installed ``posenc`` carries the weights,
so a reader outside the repository loads the same models offline):

- ``<name>-seed<k>.safetensors.xz``: the weights in half precision, as a safetensors file
  compressed with xz (``xz -d`` or Python's ``lzma`` gives the plain ``.safetensors``; see
  :data:`WEIGHT_FILTERS`);
- ``<name>-seed<k>.json``: the manifest: config, seed, stopping rule, steps run, stopping
  reason, the loss curve (mean of every ``LOSS_EVERY`` steps), the held-out checks, final
  metrics (computed from the stored half-precision weights), wall time, torch version, CPU,
  the sha256 of the (decompressed) weights and a *fingerprint*: the sha256 of the training
  code and the spec.

The training code is hashed from its syntax tree without docstrings (:func:`code_hash`), so
editing prose or comments leaves the models current, while any change to what training computes
makes them stale: ``tests/test_store.py`` then fails and names the ``make train ONLY=<name>``
that brings the store up to date.

Public API::

    load(name, seed) -> TinyCausalLM                 # the stored model, float32, eval mode
    manifest(name, seed) -> dict                      # its manifest
    retrain(name, seed, *, directory=None) -> (model, manifest)   # from scratch; writes if directory
    register(spec) -> ModelSpec; spec(name); specs(pattern="*")    # the registry
    stale(pattern="*") -> list[str]                   # what make train would (re)train
    store_size() -> dict[str, int]                    # bytes on disk: weights, manifests, total
    train_all(pattern="*", *, jobs=1, force=False) -> list[dict]   # make train

Families are registered at the end of this module, one section per chapter.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import hashlib
import inspect
import json
import lzma
import os
import platform
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from . import _angles, absolute, attention, corpus, experiments, multihead, relative, rotary, stretch
from ._validation import check_int
from .experiments import StopRule, TinyCausalLM, TrainConfig, build_model, evaluate, heldout_batch

__all__ = [
    "LOSS_EVERY",
    "STORE_BUDGET_BYTES",
    "STORE_FORMAT",
    "WEIGHT_FILTERS",
    "CH4_LOOKBACK",
    "CH4_SHAW_CLIPS",
    "CH8_RANDOMIZED",
    "CH8_RANDOMIZED_RANGE",
    "CH8_OFFSETS",
    "CH8_SEEDS",
    "CH8_TASKS",
    "CH8_TEXT_SEEDS",
    "CH9_FACTOR",
    "CH9_FINETUNE_RULES",
    "CH9_FINETUNE_TASK",
    "CH9_TASKS",
    "ModelSpec",
    "ch8_config",
    "code_hash",
    "fingerprint",
    "load",
    "manifest",
    "register",
    "restamp",
    "retrain",
    "spec",
    "specs",
    "stale",
    "store_dir",
    "store_size",
    "train_all",
]

STORE_BUDGET_BYTES = 40_000_000
"""Budget of the store on disk, in bytes, weights and manifests together, as issue #19 sets it."""
STORE_FORMAT = 1
"""Version of the manifest's schema; part of every fingerprint. The compression of the weight
files is not: it changes neither what a model computes nor its manifest, whose sha256 is that of
the decompressed safetensors bytes."""
WEIGHT_FILTERS: tuple[dict[str, int], ...] = (
    {"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20, "lc": 0, "lp": 1, "pb": 1},
)
"""The xz filter chain of the weight files. Half-precision numbers come in 2-byte units whose two
bytes differ in kind (sign, exponent and top of the mantissa; the rest of the mantissa), so the
coder conditions on the byte's position in its unit (``lp=1, pb=1``) instead of on the previous
byte (``lc=0``): 16 % smaller than raw, against 11 % with xz's defaults. A 1 MiB dictionary
holds any model and keeps the decoder's memory small. Any xz decoder reads the files."""
LOSS_EVERY = 10
"""The manifest's loss curve holds the mean training loss of every ``LOSS_EVERY`` steps."""
_EVAL_SEQUENCES = 128
_DEFAULT_DIR = Path(__file__).with_name("trained")


# --------------------------------------------------------------------------- the registry


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
        finetune: if given, the family is a short fine-tune of the stored family
            ``finetune.base`` (same seed) under a stretch rule (:class:`posenc.stretch.FineTune`;
            chapter 9); ``config`` must then be the base family's config and ``stop`` ``None``.

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


# --------------------------------------------------------------------------- provenance

_TRAINING_CODE: tuple[tuple[ModuleType, tuple[str, ...]], ...] = (
    (
        experiments,
        (
            "TrainConfig", "StopRule", "markov_transitions", "make_batch", "TinyCausalLM", "_Block",
            "build_model", "heldout_batch", "sample_positions", "_on", "_accuracy_on", "train", "_optimise",
            "_per_token", "evaluate",
        ),
    ),
    (multihead, ("MultiHeadSelfAttention",)),
    (
        relative,
        (
            "relative_positions", "clipped_relative_positions", "RelativePositionEmbedding", "shaw_attention",
            "t5_relative_position_bucket", "T5RelativePositionBias", "_power_of_two_slopes", "alibi_slopes",
            "alibi_bias",
        ),
    ),
    (
        rotary,
        (
            "rope_frequencies", "_resolve_frequencies", "_compute_dtype", "_complex_pairs", "_rotate",
            "_resolve_rotary_dim", "apply_rope", "RotaryEmbedding",
        ),
    ),
    (absolute, ("_sinusoids", "sinusoidal_encoding", "SinusoidalPositionalEncoding", "LearnedPositionalEmbedding",
                "_integer_positions")),
    (attention, ("check_qkv", "attention_weights", "scaled_dot_product_attention", "causal_mask")),
    (_angles, ()),  # the whole module
)


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _without_docstrings(source: str) -> str:
    """The syntax tree of ``source`` without docstrings, attribute docstrings included: a string
    statement anywhere in a body does nothing, so rewording one leaves trained models current."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            node.body = [statement for statement in node.body if not _is_docstring(statement)] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False)


def code_hash() -> str:
    """sha256 of the code that trains and scores a stored model, docstrings and comments excluded.

    Covers the task generators, the model and its attention and position layers, the training
    loop, the stopping rule, evaluation and this module's own saving and scoring code.
    """
    digest = hashlib.sha256()
    for module, names in _TRAINING_CODE:
        objects: Sequence[Any] = [getattr(module, name) for name in names] or [module]
        for obj in objects:
            digest.update(_without_docstrings(inspect.getsource(obj)).encode())
    for own in (_metrics, _half_round_trip, _fit, _provenance):
        digest.update(_without_docstrings(inspect.getsource(own)).encode())
    constants = (experiments._MARKOV_SEED, experiments._EVALUATION_SEED, experiments._HELDOUT_SEED, LOSS_EVERY)
    digest.update(repr(constants).encode())
    return digest.hexdigest()


def fingerprint(model_spec: ModelSpec, seed: int, *, code: str | None = None) -> str:
    """sha256 of everything that determines a stored model: code, config, stopping rule, seed."""
    key = {
        "format": STORE_FORMAT,
        "code": code_hash() if code is None else code,
        "config": asdict(model_spec.config),
        "stop": None if model_spec.stop is None else asdict(model_spec.stop),
        "eval_scales": list(model_spec.eval_scales),
        "seed": seed,
    }
    if model_spec.finetune is not None:
        # the base model's own fingerprint, and the code that stretches and fine-tunes it
        key["finetune"] = asdict(model_spec.finetune)
        key["base"] = fingerprint(spec(model_spec.finetune.base), seed, code=code)
        key["finetune_code"] = hashlib.sha256(_without_docstrings(inspect.getsource(stretch)).encode()).hexdigest()
        key["finetune_fit"] = hashlib.sha256(_without_docstrings(inspect.getsource(_fit_finetune)).encode()).hexdigest()
    if isinstance(model_spec.config, corpus.TextConfig):
        # the corpus itself, and the code that samples it, trains and scores the text models
        key["corpus"] = corpus.CORPUS_SHA256
        text_code = "".join(_without_docstrings(inspect.getsource(obj)) for obj in (corpus, _fit_text, _text_metrics))
        key["text_code"] = hashlib.sha256(text_code.encode()).hexdigest()
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# --------------------------------------------------------------------------- files


def store_dir() -> Path:
    """The store folder: ``POSENC_STORE_DIR`` if set, else the package's ``trained/`` folder."""
    return Path(os.environ.get("POSENC_STORE_DIR") or _DEFAULT_DIR)


def _paths(name: str, seed: int, directory: Path | None = None) -> tuple[Path, Path]:
    base = (directory or store_dir()) / f"{name}-seed{seed}"
    return base.with_name(base.name + ".safetensors.xz"), base.with_suffix(".json")


def store_size(directory: str | Path | None = None) -> dict[str, int]:
    """Bytes on disk of the store's weight files, of its manifests, and in all.

    Args:
        directory: a store folder (default :func:`store_dir`); a missing folder holds nothing.

    Returns:
        ``{"weights": ..., "manifests": ..., "total": ...}`` in bytes (``*.safetensors.xz`` and
        ``*.json`` files).
    """
    target = Path(directory) if directory is not None else store_dir()
    weights = sum(path.stat().st_size for path in target.glob("*.safetensors.xz"))
    manifests = sum(path.stat().st_size for path in target.glob("*.json"))
    return {"weights": weights, "manifests": manifests, "total": weights + manifests}


def _check_seed(model_spec: ModelSpec, seed: int) -> int:
    seed = check_int("seed", seed, minimum=0)
    if seed not in model_spec.seeds:
        raise ValueError(f"family {model_spec.name!r} has seeds {model_spec.seeds}, not {seed}")
    return seed


def manifest(name: str, seed: int, *, directory: str | Path | None = None) -> dict[str, Any]:
    """The manifest of the stored model ``(name, seed)``.

    Raises:
        KeyError: if ``name`` is not registered; ValueError: if ``seed`` is not one of its seeds.
        FileNotFoundError: if the model was never trained (the message names ``make train``).
    """
    model_spec = spec(name)
    seed = _check_seed(model_spec, seed)
    _, path = _paths(name, seed, None if directory is None else Path(directory))
    if not path.is_file():
        raise FileNotFoundError(f"{name} seed {seed} is not in the store ({path}); run: make train ONLY={name}")
    return json.loads(path.read_text())


def load(name: str, seed: int, *, directory: str | Path | None = None) -> TinyCausalLM:
    """The stored model ``(name, seed)``: float32, on the CPU, in evaluation mode.

    The decompressed weights' sha256 is checked against the manifest.

    Raises:
        KeyError, ValueError, FileNotFoundError: as :func:`manifest`.
        RuntimeError: if the weight file is not a valid xz stream, or its contents do not match
            their manifest's checksum.
    """
    from safetensors.torch import load as load_bytes

    info = manifest(name, seed, directory=directory)
    weights, _ = _paths(name, seed, None if directory is None else Path(directory))
    if not weights.is_file():
        raise FileNotFoundError(f"{weights} is missing; run: make train ONLY={name}")
    try:
        payload = lzma.decompress(weights.read_bytes(), format=lzma.FORMAT_XZ)
    except lzma.LZMAError as error:
        raise RuntimeError(f"{weights} is not a valid xz file ({error}); run: make train ONLY={name}") from error
    if hashlib.sha256(payload).hexdigest() != info["weights_sha256"]:
        raise RuntimeError(f"{weights} does not match its manifest's sha256; run: make train ONLY={name}")
    model_spec = spec(name)
    model = build_model(model_spec.config)
    if model_spec.finetune is not None:
        plan = model_spec.finetune
        stretch.stretch(model, plan.rule, factor=plan.factor, train_len=model_spec.config.train_len)
    model.load_state_dict({key: value.float() for key, value in load_bytes(payload).items()})
    return model.eval()


# --------------------------------------------------------------------------- training


def _half_round_trip(model: TinyCausalLM) -> dict[str, torch.Tensor]:
    """The state dict in float16, and the model's own weights replaced by its float32 image."""
    half = {key: value.detach().to(torch.float16).contiguous() for key, value in model.state_dict().items()}
    model.load_state_dict({key: value.float() for key, value in half.items()})
    return half


def _metrics(model: TinyCausalLM, model_spec: ModelSpec) -> dict[str, Any]:
    config = model_spec.config
    tokens, labels, ceiling = heldout_batch(config, StopRule().num_sequences)
    by_scale = {}
    for scale in model_spec.eval_scales:
        result = evaluate(
            model, config, scale * config.train_len, num_sequences=_EVAL_SEQUENCES, beyond_table="clip"
        )
        by_scale[str(scale)] = {"accuracy": round(result.accuracy, 6), "loss": round(result.loss, 6)}
    return {
        "heldout_accuracy": round(experiments._accuracy_on(model, tokens, labels, config), 6),
        "heldout_ceiling": round(ceiling, 6),
        "by_scale": by_scale,
    }


def _fit(model_spec: ModelSpec, seed: int, progress: bool | None) -> tuple[TinyCausalLM, dict[str, Any], dict]:
    torch.set_num_threads(1)  # the same summation order on every machine with one thread
    run = experiments.train(model_spec.config, seed, device="cpu", progress=progress, stop=model_spec.stop)
    half = _half_round_trip(run.model)
    info = _provenance(model_spec, seed, run.losses, run.seconds, {
        "stop": None if model_spec.stop is None else asdict(model_spec.stop),
        "steps_run": run.steps_run,
        "stop_reason": run.stop_reason,
        "converged": run.stop_reason != "cap",
        "checks": [[step, round(accuracy, 6)] for step, accuracy in run.checks],
        "metrics": _metrics(run.model, model_spec),
    })
    return run.model, info, half


def _provenance(
    model_spec: ModelSpec, seed: int, losses: list[float], seconds: float, fields: dict[str, Any]
) -> dict[str, Any]:
    """A manifest: what every model records (identity, config, loss curve, time, machine) around
    the ``fields`` of its kind of training."""
    chunks = torch.tensor(losses).split(LOSS_EVERY)
    return {
        "name": model_spec.name,
        "seed": seed,
        "description": model_spec.description,
        "config": asdict(model_spec.config),
        **fields,
        "loss_curve": {"every": LOSS_EVERY, "mean_loss": [round(float(c.mean()), 5) for c in chunks]},
        "train_seconds": round(seconds, 2),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": _cpu(),
        "threads": torch.get_num_threads(),
    }


def _fit_finetune(
    model_spec: ModelSpec, seed: int, directory: Path | None
) -> tuple[TinyCausalLM, dict[str, Any], dict]:
    plan = model_spec.finetune
    if plan is None:
        raise ValueError(f"{model_spec.name} is not a fine-tune")
    base_dir = directory if directory is not None and _paths(plan.base, seed, directory)[1].is_file() else None
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    model, losses, seconds = stretch.fine_tune(load(plan.base, seed, directory=base_dir), model_spec.config, plan, seed)
    half = _half_round_trip(model)
    info = _provenance(model_spec, seed, losses, seconds, {
        "stop": None,
        "finetune": asdict(plan),
        "base_fingerprint": manifest(plan.base, seed, directory=base_dir)["fingerprint"],
        "steps_run": plan.steps,
        "stop_reason": "steps",
        "converged": True,
        "checks": [],
        "metrics": _metrics(model, model_spec),
    })
    return model, info, half


_TEXT_WINDOWS = 256  # validation windows of a text model's loss by position


def _text_metrics(model: TinyCausalLM, model_spec: ModelSpec) -> dict[str, Any]:
    config = model_spec.config
    length = max(model_spec.eval_scales) * config.train_len
    accuracy, loss = corpus.text_loss_by_position(model, length, num_windows=_TEXT_WINDOWS)
    by_scale = {
        str(scale): {  # the first s L positions of the windows: windows of length s L (causal)
            "accuracy": round(float(accuracy[: scale * config.train_len].mean()), 6),
            "loss": round(float(loss[: scale * config.train_len].mean()), 6),
        }
        for scale in model_spec.eval_scales
    }
    return {
        "heldout_accuracy": by_scale["1"]["accuracy"] if "1" in by_scale else round(float(accuracy.mean()), 6),
        "heldout_ceiling": 1.0,
        "by_scale": by_scale,
        "validation_windows": _TEXT_WINDOWS,
        "loss_by_position": [round(float(value), 5) for value in loss],
    }


def _fit_text(model_spec: ModelSpec, seed: int, progress: bool | None) -> tuple[TinyCausalLM, dict[str, Any], dict]:
    torch.set_num_threads(1)
    config = model_spec.config
    if not isinstance(config, corpus.TextConfig):
        raise ValueError(f"{model_spec.name} is not a text model")
    run = corpus.train_text(config, seed, progress=progress)
    half = _half_round_trip(run.model)
    info = _provenance(model_spec, seed, run.losses, run.seconds, {
        "stop": None,
        "corpus_sha256": corpus.CORPUS_SHA256,
        "steps_run": run.steps_run,
        "stop_reason": run.stop_reason,
        "converged": False,  # a fixed budget: no convergence criterion
        "checks": [],
        "metrics": _text_metrics(run.model, model_spec),
    })
    return run.model, info, half


def retrain(
    name: str, seed: int, *, directory: str | Path | None = None, progress: bool | None = None
) -> tuple[TinyCausalLM, dict[str, Any]]:
    """Train the stored model ``(name, seed)`` again from scratch, on one CPU thread.

    Args:
        name: a registered family.
        seed: one of its seeds.
        directory: if given, write the weights and manifest there (``make train`` passes the
            store folder); otherwise nothing is written.
        progress: show a progress bar (default as :func:`posenc.experiments.train`).

    Returns:
        ``(model, manifest)``: the model with the half-precision weights that would be stored
        (float32, evaluation mode) and its manifest.

    Raises:
        RuntimeError: if posenc's training code changed on disk while the model trained (its
            fingerprint would not describe the code that trained it).
    """
    model_spec = spec(name)
    seed = _check_seed(model_spec, seed)
    # The fingerprint of the code that trains, taken before training: the hash reads the source
    # files, and an edit made meanwhile would otherwise be recorded as the model's provenance.
    before = fingerprint(model_spec, seed)
    if isinstance(model_spec.config, corpus.TextConfig):
        model, info, half = _fit_text(model_spec, seed, progress)
    elif model_spec.finetune is None:
        model, info, half = _fit(model_spec, seed, progress)
    else:
        model, info, half = _fit_finetune(model_spec, seed, None if directory is None else Path(directory))
    if fingerprint(model_spec, seed) != before:
        raise RuntimeError(
            f"posenc's training code changed on disk while {name} seed {seed} trained; "
            "nothing was stored: run make train again"
        )
    info["fingerprint"] = before
    if directory is not None:
        from safetensors.torch import save

        weights, path = _paths(name, seed, Path(directory))
        weights.parent.mkdir(parents=True, exist_ok=True)
        payload = save(half)
        info["weights_sha256"] = hashlib.sha256(payload).hexdigest()
        compressed = lzma.compress(payload, format=lzma.FORMAT_XZ, filters=list(WEIGHT_FILTERS))
        for target, data in ((weights, compressed), (path, (json.dumps(info, indent=1) + "\n").encode())):
            partial = target.with_suffix(f".{os.getpid()}.tmp")
            partial.write_bytes(data)
            partial.replace(target)  # atomic: a reader never sees half a file
    return model.eval(), info


def stale(pattern: str = "*", *, directory: str | Path | None = None) -> list[str]:
    """``"name seed k: reason"`` for every registered model that is missing or out of date."""
    code = code_hash()
    found = []
    for model_spec in specs(pattern):
        for seed in model_spec.seeds:
            weights, path = _paths(model_spec.name, seed, None if directory is None else Path(directory))
            if not path.is_file() or not weights.is_file():
                found.append(f"{model_spec.name} seed {seed}: not trained")
            elif json.loads(path.read_text()).get("fingerprint") != fingerprint(model_spec, seed, code=code):
                found.append(f"{model_spec.name} seed {seed}: code or config changed since it was trained")
    return found


def _job(name: str, seed: int, directory: str, progress: bool, force: bool = False) -> dict[str, Any] | None:
    # Another `make train` may have stored this model since the list was made: skip it then.
    current = f"{name} seed {seed}" not in {line.split(":")[0] for line in stale(name, directory=directory)}
    if current and not force:
        return None
    start = time.perf_counter()
    _, info = retrain(name, seed, directory=directory, progress=progress)
    info["wall_seconds"] = time.perf_counter() - start
    return info


def train_all(
    pattern: str = "*", *, jobs: int = 1, force: bool = False, directory: str | Path | None = None,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Train every registered model whose family matches ``pattern`` and is stale (``make train``).

    Args:
        pattern: shell pattern on family names (``make train ONLY=<pattern>``).
        jobs: worker processes, one thread each (one per free core).
        force: retrain current models too.
        directory: the store folder (default :func:`store_dir`).
        log: where progress lines and the summary go.

    Returns:
        The manifests of the models trained now.
    """
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm.auto import tqdm  # type: ignore[import-untyped]

    jobs = check_int("jobs", jobs, minimum=1)
    target = Path(directory) if directory is not None else store_dir()
    outdated = {line.split(":")[0] for line in stale(pattern, directory=target)}
    todo = [(s.name, seed) for s in specs(pattern) for seed in s.seeds if force or f"{s.name} seed {seed}" in outdated]
    total = sum(len(s.seeds) for s in specs(pattern))
    log(f"{len(todo)} of {total} models to train ({total - len(todo)} current) into {target}, {jobs} process(es)")
    done: list[dict[str, Any]] = []
    start = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool, tqdm(total=len(todo), desc="models", file=sys.stdout) as bar:
        bars = jobs == 1 and _progress()
        # fine-tunes start from stored models: they run after every model trained from scratch
        for wave in (False, True):
            batch = [(name, seed) for name, seed in todo if (spec(name).finetune is not None) == wave]
            futures = {pool.submit(_job, name, seed, str(target), bars, force): (name, seed) for name, seed in batch}
            for future in as_completed(futures):
                info = future.result()
                bar.update()
                if info is None:
                    continue
                done.append(info)
                bar.write(
                    f"{info['name']:<32} seed {info['seed']}  {info['steps_run']:>5} steps  {info['stop_reason']:<9}"
                    f"  held-out {info['metrics']['heldout_accuracy']:.3f}  {info['train_seconds']:6.1f} s"
                )
    minutes = (time.perf_counter() - start) / 60
    if done:
        log(_summary(done))
    log(f"trained {len(done)} models in {minutes:.1f} min; {_describe_size(target)}")
    return done


def _describe_size(directory: Path | None = None) -> str:
    size = store_size(directory)
    return (f"the store holds {size['total'] / 1e6:.1f} MB ({size['total'] / 2**20:.1f} MiB): weights "
            f"{size['weights'] / 1e6:.1f} MB, manifests {size['manifests'] / 1e6:.1f} MB "
            f"(budget {STORE_BUDGET_BYTES / 1e6:.0f} MB)")


def _progress() -> bool:
    return os.environ.get("POSENC_PROGRESS", "1") not in ("", "0", "false", "no")


def _summary(infos: list[dict[str, Any]]) -> str:
    rows: dict[str, list[dict[str, Any]]] = {}
    for info in infos:
        rows.setdefault(info["name"], []).append(info)
    lines = [f"{'family':<32} {'seeds':>5} {'converged':>9} {'steps':>11} {'held-out':>13} {'s/model':>7}"]
    for name, group in sorted(rows.items()):
        steps = [i["steps_run"] for i in group]
        accuracy = [i["metrics"]["heldout_accuracy"] for i in group]
        lines.append(
            f"{name:<32} {len(group):>5} {sum(i['converged'] for i in group):>9} {min(steps):>5}–{max(steps):<5}"
            f" {min(accuracy):.3f}–{max(accuracy):.3f} {sum(i['train_seconds'] for i in group) / len(group):>7.1f}"
        )
    return "\n".join(lines)


def _same_setup(model_spec: ModelSpec, info: dict[str, Any]) -> bool:
    """Whether a manifest records the spec's config, stopping rule, fine-tune and evaluated scales."""

    def plain(value: Any) -> Any:
        return json.loads(json.dumps(value))

    return (
        info.get("config") == plain(asdict(model_spec.config))
        and info.get("stop") == plain(None if model_spec.stop is None else asdict(model_spec.stop))
        and info.get("finetune") == plain(None if model_spec.finetune is None else asdict(model_spec.finetune))
        and sorted(info["metrics"]["by_scale"]) == sorted(str(scale) for scale in model_spec.eval_scales)
    )


def restamp(
    pattern: str = "*", *, directory: str | Path | None = None, log: Callable[[str], None] = print
) -> list[str]:
    """Renew the fingerprints of models that are stale only because the training code changed,
    where retraining one seed reproduces the stored weights and metrics bit for bit.

    A change to the hashed code that does not change what training computes (a refactoring, a
    method that training never calls) makes every manifest stale. For each such family this
    retrains its first stale seed from scratch; if the weights' sha256 and every metric equal the
    stored ones, the family's manifests get the current fingerprint, and the old one is kept under
    ``"restamped"``. A family whose config changed, or whose retrained seed differs, is left
    stale for ``make train``. Families are taken in registry order, so a fine-tune's base is
    renewed before the fine-tune.

    Returns:
        The names of the families renewed.
    """
    target = Path(directory) if directory is not None else store_dir()
    code = code_hash()
    renewed = []
    for model_spec in specs(pattern):
        name = model_spec.name
        stored = [seed for seed in model_spec.seeds if _paths(name, seed, target)[1].is_file()]
        outdated = [
            seed for seed in stored
            if manifest(name, seed, directory=target)["fingerprint"] != fingerprint(model_spec, seed, code=code)
        ]
        if not outdated:
            continue
        if not all(_same_setup(model_spec, manifest(name, seed, directory=target)) for seed in outdated):
            log(f"{name}: its config changed since it was trained; run make train ONLY={name}")
            continue
        probe = outdated[0]
        with tempfile.TemporaryDirectory() as scratch:
            _, again = retrain(name, probe, directory=scratch, progress=False)
        before = manifest(name, probe, directory=target)
        if again["weights_sha256"] != before["weights_sha256"] or again["metrics"] != before["metrics"]:
            log(f"{name}: seed {probe} retrained differently; run make train ONLY={name}")
            continue
        for seed in outdated:
            _, path = _paths(name, seed, target)
            info = json.loads(path.read_text())
            info["restamped"] = {"previous_fingerprint": info["fingerprint"], "verified_with_seed": probe}
            info["fingerprint"] = fingerprint(model_spec, seed, code=code)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(json.dumps(info, indent=1) + "\n")
            partial.replace(path)
        log(f"{name}: seed {probe} retrained bit for bit; {len(outdated)} manifest(s) renewed")
        renewed.append(name)
    return renewed


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m posenc.store {train,restamp,status}`` (``make train`` runs restamp, then train)."""
    parser = argparse.ArgumentParser(prog="python -m posenc.store", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train_parser = commands.add_parser("train", help="train the missing and stale models")
    train_parser.add_argument("--only", default="*", help="shell pattern on family names")
    train_parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    train_parser.add_argument("--force", action="store_true", help="retrain current models too")
    restamp_parser = commands.add_parser("restamp", help="renew models that the changed code reproduces exactly")
    restamp_parser.add_argument("--only", default="*", help="shell pattern on family names")
    status_parser = commands.add_parser("status", help="list the missing and stale models")
    status_parser.add_argument("--only", default="*")
    args = parser.parse_args(argv)
    if args.command == "train":
        train_all(args.only, jobs=args.jobs, force=args.force)
        return 0
    if args.command == "restamp":
        restamp(args.only)
        return 0
    lines = stale(args.only)
    print("\n".join(lines) if lines else "every model is current")
    print(_describe_size())
    return 1 if lines else 0


# =========================================================================== the families
# One section per chapter; each adds its families with register(ModelSpec(...)).

# --------------------------------------------------------------------------- chapter 8
# The matrix: 2 tasks x 7 schemes x 5 seeds, d_model 64, 4 heads of dimension 16, 2 layers,
# batch 32, L = 32, AdamW 3e-3, 100 warm-up steps then a constant rate, stopped once the
# held-out accuracy at L reaches 0.99 of its ceiling (checked every 50 steps, cap 2000).
CH8_TASKS = ("lookback", "recall")
"""The tasks of chapter 8's matrix (:func:`posenc.experiments.make_batch`)."""
CH8_SHAW_CLIP = 16  # half the training length: Shaw's far vector is trained


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


# (The synthetic Markov language of the second edition gave way to real text, ch8-text-*; a
# family's fingerprint does not depend on its list of seeds, so seeds can be added here.)
CH8_SEEDS = {"lookback": (0, 1, 2, 3, 4), "recall": (0, 1, 2, 3, 4)}
"""The training seeds of chapter 8's families, by task."""
for _task in CH8_TASKS:
    for _position in multihead.POSITION_SCHEMES:
        register(ModelSpec(f"ch8-{_task}-{_position}", ch8_config(_task, _position), seeds=CH8_SEEDS[_task],
                           description=f"chapter 8 matrix: {_task}, {_position}"))


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
CH4_SHAW_CLIPS = (2, 4, 8)
"""The clipping distances of chapter 4's Shaw ablation."""
register(ModelSpec("ch4-lookback-t5", ch8_config("lookback", "t5", lookback=CH4_LOOKBACK, num_layers=1, steps=600),
                   seeds=(0, 1, 2), description="chapter 4: the buckets a one-layer T5-bias model learns"))
for _clip in CH4_SHAW_CLIPS:
    register(ModelSpec(f"ch4-lookback-shaw-c{_clip}",
                       ch8_config("lookback", "shaw", lookback=CH4_LOOKBACK, num_layers=1, steps=400, shaw_clip=_clip),
                       seeds=(0, 1, 2), description=f"chapter 4: Shaw's clipping distance c = {_clip} (ablation)"))


# --------------------------------------------------------------------------- chapter 9
# RoPE models with heads of dimension 32 (16 pairs, so that PI, NTK and YaRN differ in kind),
# otherwise chapter 8's protocol. Then, on the task that no rule solves zero-shot (recall), every
# rule's fine-tune at L' = 4L with one budget: 300 steps of 16 sequences at a constant rate 1e-3;
# the control, "rope", fine-tunes at 4L with the trained frequencies.
CH9_TASKS = ("lookback", "recall")
"""The tasks of chapter 9's base RoPE models (heads of dimension 32)."""
CH9_FINETUNE_TASK = "recall"
"""The task chapter 9 fine-tunes at the target length."""
CH9_FINETUNE_RULES = ("rope", "pi", "ntk", "yarn", "yarn-paper")
"""The rules of :mod:`posenc.stretch` that chapter 9 fine-tunes (``rope`` is the control)."""
CH9_FACTOR = 4.0
"""Chapter 9's scale factor ``s``: fine-tunes run at ``L' = s L``."""

for _task in CH9_TASKS:
    register(ModelSpec(f"ch9-{_task}-rope", ch8_config(_task, "rope", num_heads=2),
                       description=f"chapter 9 base: {_task}, rope, head dim 32"))
for _rule in CH9_FINETUNE_RULES:
    register(ModelSpec(f"ch9-{CH9_FINETUNE_TASK}-{_rule}-ft", spec(f"ch9-{CH9_FINETUNE_TASK}-rope").config,
                       stop=None, eval_scales=(1, 2, 4, 8),
                       finetune=stretch.FineTune(f"ch9-{CH9_FINETUNE_TASK}-rope", _rule, factor=CH9_FACTOR, steps=300),
                       description=f"chapter 9 fine-tune: {CH9_FINETUNE_TASK}, {_rule} at {CH9_FACTOR:g} L"))

if __name__ == "__main__":
    raise SystemExit(main())
