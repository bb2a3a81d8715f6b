"""How a stored model is trained and scored: from scratch, as a fine-tune of a stored model, or as a
language model of the text corpus, and the manifest that records it.

The functions here are the store's own part of the training code that every fingerprint hashes
(:func:`posenc.store.provenance.code_hash`): a change to what they compute makes the stored models
stale.
"""

from __future__ import annotations

import platform
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from .. import corpus, experiments, stretch, stretch_eval
from ..experiments import (
    StopRule,
    TinyCausalLM,
    TrainConfig,
    accuracy_by_position,
    build_model,
    evaluate,
    heldout_batch,
    make_batch,
)
from ..experiments.training import _optimise
from .files import _paths, _set_rope_base, load, manifest
from .registry import ModelSpec

__all__ = ["BAND_SCALE", "BAND_SEQUENCES", "FINETUNE_SEQUENCES", "LOSS_EVERY", "band_accuracy"]


LOSS_EVERY = 10
"""The manifest's loss curve holds the mean training loss of every ``LOSS_EVERY`` steps."""
_EVAL_SEQUENCES = 128
FINETUNE_SEQUENCES = 64
"""A fine-tune's manifest holds, at each of its checkpoints, its accuracy and loss at every position of
``FINETUNE_SEQUENCES`` sequences of ``2 L'`` tokens (the same sequences for every rule and seed)."""
_FINETUNE_SEED = 900


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
    config = model_spec.config
    scored = make_batch(config, FINETUNE_SEQUENCES, round(2 * plan.factor * config.train_len),
                        generator=torch.Generator().manual_seed(_FINETUNE_SEED))
    curve: dict[str, dict[str, list[float]]] = {}

    def score(step: int, model: TinyCausalLM) -> None:
        accuracy, loss = stretch_eval.scores_by_position(model, *scored)
        curve[str(step)] = {"accuracy_by_position": [round(float(value), 5) for value in accuracy],
                            "loss_by_position": [round(float(value), 5) for value in loss]}

    model, losses, seconds = stretch.fine_tune(load(plan.base, seed, directory=base_dir), config, plan, seed, score)
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
        "checkpoints": curve,
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


# --------------------------------------------------------------------------- a watched budget
BAND_SCALE = 8
"""A watched model's manifest holds its accuracy at every position of sequences of ``BAND_SCALE L``."""
BAND_SEQUENCES = 128
"""The number of sequences of that accuracy by position (the same for every model)."""
_BAND_SEED = 800
_WATCH_SEED = 555_000  # check k of the watched rule draws fresh sequences from seed _WATCH_SEED + step


def band_accuracy(model: TinyCausalLM, config: TrainConfig) -> list[float]:
    """A model's accuracy at each position of ``BAND_SEQUENCES`` sequences of ``BAND_SCALE L`` tokens
    (the same sequences for every model of a task; NaN where nothing is scored), as stored."""
    was_training = model.training
    accuracy = accuracy_by_position(model, config, BAND_SCALE * config.train_len,
                                    generator=torch.Generator().manual_seed(_BAND_SEED),
                                    num_sequences=BAND_SEQUENCES, beyond_table="clip")
    model.train(was_training)
    return [round(float(value), 6) for value in accuracy]


def _train_watched(
    config: TrainConfig, seed: int, watch: StopRule, progress: bool | None, rope_base: float | None = None
) -> tuple[TinyCausalLM, list[float], float, dict[str, Any]]:
    """:func:`posenc.experiments.train` without a stopping rule, the same weights (a test checks it),
    while ``watch`` is checked every ``watch.check_every`` steps on ``watch.num_sequences`` fresh
    sequences until it holds on two consecutive checks; then the model is scored by
    :func:`band_accuracy` and checking ends. ``rope_base``, if given, replaces the rotary layers'
    base before training (the rotary layers hold no weights, so the initial weights are the same)."""
    torch.manual_seed(seed)
    model = _set_rope_base(build_model(config), rope_base)
    data = torch.Generator().manual_seed(seed)
    record: dict[str, Any] = {"checks": [], "rule_step": None, "at_rule": None}

    def next_batch() -> tuple[torch.Tensor, torch.Tensor, None]:
        tokens, labels = make_batch(config, config.batch_size, config.train_len, generator=data)
        return tokens, labels, None

    def check(step: int) -> str | None:
        if record["rule_step"] is not None or (step + 1) % watch.check_every:
            return None
        fresh = torch.Generator().manual_seed(_WATCH_SEED + step + 1)
        tokens, labels = make_batch(config, watch.num_sequences, config.train_len, generator=fresh)
        accuracy = experiments._accuracy_on(model, tokens, labels, config)
        record["checks"].append([step + 1, round(accuracy, 6)])
        if len(record["checks"]) >= 2 and min(a for _, a in record["checks"][-2:]) >= watch.threshold:
            record["rule_step"] = step + 1
            record["at_rule"] = band_accuracy(model, config)
        return f"{accuracy:.3f}"

    losses, _, seconds = _optimise(model, config, next_batch, desc=f"{config.task}/{config.position}/seed {seed}",
                                   progress=progress, check=check)
    return model.eval(), losses, seconds, record


def _fit_watched(model_spec: ModelSpec, seed: int, progress: bool | None) -> tuple[TinyCausalLM, dict[str, Any], dict]:
    watch = model_spec.watch
    if watch is None:
        raise ValueError(f"{model_spec.name} is not a watched family")
    torch.set_num_threads(1)
    model, losses, seconds, record = _train_watched(model_spec.config, seed, watch, progress, model_spec.rope_base)
    half = _half_round_trip(model)
    metrics = _metrics(model, model_spec)
    metrics["accuracy_by_position"] = band_accuracy(model, model_spec.config)
    info = _provenance(model_spec, seed, losses, seconds, {
        "stop": None,
        "watch": asdict(watch),
        "rope_base": model_spec.rope_base,
        "steps_run": len(losses),
        "stop_reason": "steps",
        "converged": record["rule_step"] is not None,
        "rule_step": record["rule_step"],
        "checks": record["checks"],
        "at_rule": None if record["at_rule"] is None else {"accuracy_by_position": record["at_rule"]},
        "metrics": metrics,
    })
    return model, info, half
