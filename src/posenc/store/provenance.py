"""What determines a stored model, and keeping the store current: the fingerprint of the training code
and the spec, which models are stale, retraining one, and renewing fingerprints that a retrained seed
confirms."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import lzma
import os
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import _angles, absolute, attention, corpus, experiments, multihead, relative, rotary, stretch, stretch_eval
from ..experiments import TinyCausalLM
from . import training as _training
from .files import WEIGHT_FILTERS, _check_seed, _paths, _set_rope_base, manifest, store_dir
from .registry import ModelSpec, spec, specs
from .training import (
    LOSS_EVERY,
    _fit,
    _fit_finetune,
    _fit_text,
    _fit_watched,
    _half_round_trip,
    _metrics,
    _provenance,
    _text_metrics,
)

__all__ = ["STORE_FORMAT", "code_hash", "fingerprint", "restamp", "retrain", "stale"]


STORE_FORMAT = 1
"""Version of the manifest's schema; part of every fingerprint. The compression of the weight
files is not: it changes neither what a model computes nor its manifest, whose sha256 is that of
the decompressed safetensors bytes."""


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
        fit_code = "".join(_without_docstrings(inspect.getsource(obj)) for obj in (
            _fit_finetune, stretch_eval.scores_by_position, _set_rope_base))
        fit_constants = (_training.FINETUNE_SEQUENCES, _training._FINETUNE_SEED)
        key["finetune_fit"] = hashlib.sha256((fit_code + repr(fit_constants)).encode()).hexdigest()
    if model_spec.watch is not None:
        # the watched rule, and the code that checks it and scores the model by position
        key["watch"] = asdict(model_spec.watch)
        watch_code = "".join(_without_docstrings(inspect.getsource(obj)) for obj in (
            _training.band_accuracy, _training._train_watched, _fit_watched, experiments.accuracy_by_position,
            _set_rope_base))
        constants = (_training.BAND_SCALE, _training.BAND_SEQUENCES, _training._BAND_SEED, _training._WATCH_SEED)
        key["watch_code"] = hashlib.sha256((watch_code + repr(constants)).encode()).hexdigest()
    if model_spec.rope_base is not None:
        key["rope_base"] = model_spec.rope_base
    if isinstance(model_spec.config, corpus.TextConfig):
        # the corpus itself, and the code that samples it, trains and scores the text models
        key["corpus"] = corpus.CORPUS_SHA256
        text_code = "".join(_without_docstrings(inspect.getsource(obj)) for obj in (corpus, _fit_text, _text_metrics))
        key["text_code"] = hashlib.sha256(text_code.encode()).hexdigest()
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def retrain(
    name: str, seed: int, *, directory: str | Path | None = None, progress: bool | None = None
) -> tuple[TinyCausalLM, dict[str, Any]]:
    """Train the stored model ``(name, seed)`` again from scratch, on one CPU thread.

    Args:
        name: a registered family.
        seed: one of its seeds.
        directory: if given, write the weights and manifest there (``make train`` passes the
            store folder); otherwise nothing is written.
        progress: show a progress bar (default as :func:`posenc.experiments.training.train`).

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
    elif model_spec.watch is not None:
        model, info, half = _fit_watched(model_spec, seed, progress)
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


def _same_setup(model_spec: ModelSpec, info: dict[str, Any]) -> bool:
    """Whether a manifest records the spec's config, stopping rule, fine-tune and evaluated scales."""

    def plain(value: Any) -> Any:
        return json.loads(json.dumps(value))

    return (
        info.get("config") == plain(asdict(model_spec.config))
        and info.get("stop") == plain(None if model_spec.stop is None else asdict(model_spec.stop))
        and info.get("finetune") == plain(None if model_spec.finetune is None else asdict(model_spec.finetune))
        and info.get("watch") == plain(None if model_spec.watch is None else asdict(model_spec.watch))
        and info.get("rope_base") == model_spec.rope_base
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
        # compared as JSON text: a position where nothing is scored holds NaN, and NaN != NaN
        same_metrics = json.dumps(again["metrics"], sort_keys=True) == json.dumps(before["metrics"], sort_keys=True)
        if again["weights_sha256"] != before["weights_sha256"] or not same_metrics:
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
