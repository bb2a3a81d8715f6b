"""The model store's command line: train the missing and stale models, renew or list them.

``python -m posenc.store {train,restamp,status}``; ``make train`` runs restamp, then train, which
trains in worker processes and prints a summary.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._validation import check_int
from .files import STORE_BUDGET_BYTES, store_dir, store_size
from .provenance import restamp, retrain, stale
from .registry import spec, specs

__all__ = ["train_all"]


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
        directory: the store folder (default :func:`~posenc.store.files.store_dir`).
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
