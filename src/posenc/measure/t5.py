"""What a Hugging Face ``transformers`` T5 stack hands its layers: the position bias, layer by layer.

Chapter 4 checks on a tiny random T5 encoder (built from a config, no download) that only the
first layer owns a relative-bias table and that it computes the bias once and hands it to the
later layers. Reading what each layer is handed takes forward hooks; they live here, tested in
``tests/test_measure_t5.py``.
"""

from __future__ import annotations

from typing import Any

import torch

from .._validation import check_tensor

__all__ = ["position_bias_by_layer"]


def position_bias_by_layer(stack: Any, input_ids: torch.Tensor) -> dict[int, torch.Tensor | None]:
    """Run a T5 stack once and return the ``position_bias`` each layer's self-attention is handed.

    Args:
        stack: a ``transformers`` T5 stack (``T5EncoderModel(...).encoder``), whose blocks
            ``stack.block[l].layer[0].SelfAttention`` are its self-attention modules.
        input_ids: ``(B, L)`` token ids.

    Returns:
        Layer index -> the ``position_bias`` keyword the layer's self-attention received (None
        when it received none and computes the bias itself). The hooks are removed afterwards.

    Raises:
        TypeError: if ``stack`` has no ``block`` list of T5 blocks, or ``input_ids`` is not a tensor.
    """
    blocks = getattr(stack, "block", None)
    if blocks is None or not all(hasattr(block, "layer") for block in blocks):
        raise TypeError(f"stack must be a transformers T5 stack with a .block list, got {type(stack).__name__}")
    check_tensor("input_ids", input_ids, min_dim=2)
    received: dict[int, torch.Tensor | None] = {}
    handles = []
    for index, block in enumerate(blocks):

        def record(_module: Any, _args: Any, kwargs: dict[str, Any], index: int = index) -> None:
            received[index] = kwargs.get("position_bias")

        handles.append(block.layer[0].SelfAttention.register_forward_pre_hook(record, with_kwargs=True))
    try:
        stack(input_ids=input_ids)
    finally:
        for handle in handles:
            handle.remove()
    return received
