"""How long `make train` takes on this machine, from per-step times measured here.

Training every stored model again is an hour's work, so this measures what it is made of: for
each family of the model store it times ``--steps`` optimiser steps of its configuration (one
thread, as ``make train`` runs each model) and one evaluation of the metrics a manifest records,
then multiplies by the steps that every stored model of the family ran. It prints the estimate
per family, the total on one core and spread over ``make train``'s jobs, the load average while
it ran (other work on the machine inflates every time), and, for comparison, the sum of the
``train_seconds`` the manifests recorded when each model was trained, under whatever load the
machine had then, and last the store's size on disk.

Usage: python benchmarks/train_time.py [--steps 30] [--jobs 2] [--only 'ch8-*']
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import torch

from posenc import corpus, describe_machine, store
from posenc.experiments import train
from posenc.store import cli, training
from posenc.stretch import fine_tune


def step_seconds(model_spec: store.ModelSpec, steps: int) -> float:
    """Seconds per optimiser step of ``model_spec``'s training (or fine-tune), on one thread."""
    torch.set_num_threads(1)
    config = dataclasses.replace(model_spec.config, steps=steps, warmup_steps=1)
    if isinstance(config, corpus.TextConfig):
        return corpus.train_text(config, 0, progress=False).seconds / steps
    if model_spec.finetune is None:
        return train(config, 0, device="cpu", progress=False).seconds / steps
    plan = dataclasses.replace(model_spec.finetune, steps=steps, checkpoints=())
    _, _, seconds = fine_tune(store.load(plan.base, 0), model_spec.config, plan, 0)
    return seconds / steps


def metrics_seconds(model_spec: store.ModelSpec) -> float:
    """Seconds to evaluate the metrics of one stored model of the family (as a manifest records)."""
    model = store.load(model_spec.name, model_spec.seeds[0])
    start = time.perf_counter()
    score = training._text_metrics if isinstance(model_spec.config, corpus.TextConfig) else training._metrics
    score(model, model_spec)
    if model_spec.watch is not None:  # accuracy by position, at the rule step and at the end
        middle = time.perf_counter()
        training.band_accuracy(model, model_spec.config)
        return middle - start + 2 * (time.perf_counter() - middle)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="steps timed per family")
    parser.add_argument("--jobs", type=int, default=2, help="make train's worker processes")
    parser.add_argument("--only", default="*", help="shell pattern on family names")
    args = parser.parse_args()
    print(f"Machine: {describe_machine()}; load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'family':<32} {'models':>6} {'steps':>7} {'ms/step':>8} {'estimate s':>11} {'recorded s':>11}")
    estimate = recorded = 0.0
    for model_spec in store.specs(args.only):
        manifests = [store.manifest(model_spec.name, seed) for seed in model_spec.seeds]
        steps = sum(info["steps_run"] for info in manifests)
        per_step = step_seconds(model_spec, args.steps)
        family = steps * per_step + len(manifests) * metrics_seconds(model_spec)
        stored = sum(info["train_seconds"] for info in manifests)
        estimate, recorded = estimate + family, recorded + stored
        row = f"{model_spec.name:<32} {len(manifests):>6} {steps:>7} {1000 * per_step:>8.1f}"
        print(f"{row} {family:>11.0f} {stored:>11.0f}")
    print(f"\nmake train from scratch, estimated: {estimate / 60:.1f} min on one core, "
          f"{estimate / 60 / args.jobs:.1f} min with {args.jobs} jobs (if the cores are otherwise idle)")
    print(f"recorded train_seconds, summed: {recorded / 60:.1f} min; load average after: {os.getloadavg()[0]:.2f}")
    print(cli._describe_size())


if __name__ == "__main__":
    main()
