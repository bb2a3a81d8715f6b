"""The model store: the book's trained models, trained once by ``make train``, loaded in seconds.

Every trained model the book shows is registered as a :class:`~posenc.store.registry.ModelSpec` (a family: a
name, a :class:`~posenc.experiments.config.TrainConfig`, seeds and a stopping rule). ``make train``
(``python -m posenc.store train``) trains each ``(family, seed)`` and writes two files into the
store folder, ``src/posenc/trained/`` (package data: an installed ``posenc`` carries the weights,
so a reader outside the repository loads the same models offline):

- ``<name>-seed<k>.safetensors.xz``: the weights in half precision, as a safetensors file
  compressed with xz (``xz -d`` or Python's ``lzma`` gives the plain ``.safetensors``; see
  :data:`~posenc.store.files.WEIGHT_FILTERS`);
- ``<name>-seed<k>.json``: the manifest: config, seed, stopping rule, steps run, stopping
  reason, the loss curve (mean of every ``LOSS_EVERY`` steps), the held-out checks, final
  metrics (computed from the stored half-precision weights), wall time, torch version, CPU,
  the sha256 of the (decompressed) weights and a *fingerprint*: the sha256 of the training
  code and the spec.

The training code is hashed from its syntax tree without docstrings (:func:`~posenc.store.provenance.code_hash`), so
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

One module per idea; every public name is importable from ``posenc.store`` itself:

- :mod:`posenc.store.registry`: the families (:class:`~posenc.store.registry.ModelSpec`) by name;
- :mod:`posenc.store.families`: the book's families, one section per chapter;
- :mod:`posenc.store.files`: the store folder, and a model and its manifest read back;
- :mod:`posenc.store.training`: how a stored model is trained and scored (part of the hashed code);
- :mod:`posenc.store.provenance`: fingerprints, stale models, retraining and restamping;
- :mod:`posenc.store.cli`: ``make train`` and ``python -m posenc.store {train,restamp,status}``.
"""

from .cli import train_all
from .families import (
    CH4_LOOKBACK,
    CH4_SHAW_CLIPS,
    CH8_BUDGET,
    CH8_OFFSETS,
    CH8_RANDOMIZED,
    CH8_RANDOMIZED_RANGE,
    CH8_SEEDS,
    CH8_TASKS,
    CH8_TEXT_SEEDS,
    CH8_WATCH,
    CH9_CHECKPOINTS,
    CH9_FACTOR,
    CH9_FINETUNE_RULES,
    CH9_FINETUNE_TASK,
    CH9_GEOMETRIES,
    CH9_TASKS,
    CH9_TENTH,
    ch8_config,
)
from .files import STORE_BUDGET_BYTES, WEIGHT_FILTERS, load, manifest, store_dir, store_size
from .provenance import STORE_FORMAT, code_hash, fingerprint, restamp, retrain, stale
from .registry import ModelSpec, register, spec, specs
from .training import BAND_SCALE, BAND_SEQUENCES, FINETUNE_SEQUENCES, LOSS_EVERY, band_accuracy

__all__ = [
    "BAND_SCALE",
    "BAND_SEQUENCES",
    "FINETUNE_SEQUENCES",
    "LOSS_EVERY",
    "STORE_BUDGET_BYTES",
    "STORE_FORMAT",
    "WEIGHT_FILTERS",
    "CH4_LOOKBACK",
    "CH4_SHAW_CLIPS",
    "CH8_BUDGET",
    "CH8_RANDOMIZED",
    "CH8_RANDOMIZED_RANGE",
    "CH8_OFFSETS",
    "CH8_SEEDS",
    "CH8_TASKS",
    "CH8_TEXT_SEEDS",
    "CH8_WATCH",
    "CH9_CHECKPOINTS",
    "CH9_FACTOR",
    "CH9_FINETUNE_RULES",
    "CH9_FINETUNE_TASK",
    "CH9_GEOMETRIES",
    "CH9_TASKS",
    "CH9_TENTH",
    "ModelSpec",
    "band_accuracy",
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
