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

from .. import corpus, experiments, stretch
from ..experiments import StopRule, TinyCausalLM, evaluate, heldout_batch
from .files import _paths, load, manifest
from .registry import ModelSpec

__all__ = ["LOSS_EVERY"]


LOSS_EVERY = 10
"""The manifest's loss curve holds the mean training loss of every ``LOSS_EVERY`` steps."""
_EVAL_SEQUENCES = 128


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
