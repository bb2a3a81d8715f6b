"""The store folder and its files: where they are, how much room they take, and a stored model and its
manifest read back (the weights' checksum checked)."""

from __future__ import annotations

import hashlib
import json
import lzma
import os
from pathlib import Path
from typing import Any, cast

from .. import stretch
from .._validation import check_int
from ..experiments import TinyCausalLM, build_model
from ..multihead import MultiHeadSelfAttention
from ..rotary import RotaryEmbedding
from .registry import ModelSpec, spec

__all__ = ["STORE_BUDGET_BYTES", "WEIGHT_FILTERS", "load", "manifest", "store_dir", "store_size"]


STORE_BUDGET_BYTES = 50_000_000
"""Budget of the store on disk in bytes, weights and manifests together (40 MB as issue #19 set it,
50 MB since issue #29 added chapter 8's common budget and its three-layer NoPE models)."""


WEIGHT_FILTERS: tuple[dict[str, int], ...] = (
    {"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20, "lc": 0, "lp": 1, "pb": 1},
)
"""The xz filter chain of the weight files. Half-precision numbers come in 2-byte units whose two
bytes differ in kind (sign, exponent and top of the mantissa; the rest of the mantissa), so the
coder conditions on the byte's position in its unit (``lp=1, pb=1``) instead of on the previous
byte (``lc=0``): 16 % smaller than raw, against 11 % with xz's defaults. A 1 MiB dictionary
holds any model and keeps the decoder's memory small. Any xz decoder reads the files."""
_DEFAULT_DIR = Path(__file__).parent.with_name("trained")  # posenc/trained, beside this subpackage


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


def _rope_base(model_spec: ModelSpec) -> float | None:
    """The rotary base a family's models are built with: its own, or its fine-tune base's."""
    if model_spec.finetune is not None:
        return spec(model_spec.finetune.base).rope_base
    return model_spec.rope_base


def _set_rope_base(model: TinyCausalLM, base: float | None) -> TinyCausalLM:
    """Give every rotary layer of ``model`` the base ``base`` (nothing if ``None``), in place."""
    if base is not None:
        for block in model.blocks:
            attention = cast(MultiHeadSelfAttention, block.attention)
            if not isinstance(attention.rotary, RotaryEmbedding):
                raise ValueError("rope_base needs a model whose layers are rotary")
            attention.rotary = RotaryEmbedding(attention.rotary.dim, base=base, layout=attention.rotary.layout)
    return model


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
    model = _set_rope_base(build_model(model_spec.config), _rope_base(model_spec))
    if model_spec.finetune is not None:
        plan = model_spec.finetune
        stretch.stretch(model, plan.rule, factor=plan.factor, train_len=model_spec.config.train_len)
    model.load_state_dict({key: value.float() for key, value in load_bytes(payload).items()})
    return model.eval()
