"""posenc.measure.t5: the position bias a transformers T5 stack hands each layer."""

from __future__ import annotations

import pytest
import torch
from transformers import T5Config, T5EncoderModel

from posenc.measure.t5 import position_bias_by_layer


def tiny_encoder(num_layers: int) -> torch.nn.Module:
    config = T5Config(vocab_size=32, d_model=16, d_kv=4, d_ff=32, num_layers=num_layers, num_heads=2)
    return T5EncoderModel(config).eval().encoder


@pytest.mark.parametrize("num_layers", [1, 3])
def test_first_layer_computes_the_bias_the_others_receive_it(num_layers):
    torch.manual_seed(0)
    encoder = tiny_encoder(num_layers)
    received = position_bias_by_layer(encoder, torch.randint(32, (2, 5)))
    assert sorted(received) == list(range(num_layers))
    assert received[0] is None
    own = encoder.block[0].layer[0].SelfAttention.compute_bias(5, 5)  # (1, h, L, L)
    for layer in range(1, num_layers):
        # what a later layer gets is the first layer's own bias
        torch.testing.assert_close(received[layer], own)
    # the hooks are gone: a second pass records nothing new
    assert all(not block.layer[0].SelfAttention._forward_pre_hooks for block in encoder.block)


def test_position_bias_by_layer_rejects_other_models():
    with pytest.raises(TypeError):
        position_bias_by_layer(torch.nn.Linear(2, 2), torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(TypeError):
        position_bias_by_layer(tiny_encoder(1), [[1, 2]])
