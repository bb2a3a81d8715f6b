"""Inference-time key masks (posenc.experiments.evaluation): far_key_mask, logits_with_key_masks."""

import pytest
import torch

from posenc.experiments import TrainConfig, build_model, make_batch
from posenc.experiments.evaluation import far_key_mask, logits_with_key_masks


def test_far_key_mask_by_hand():
    far = far_key_mask(5, 2, keep_first=False)
    expected = torch.tensor([[i - j >= 2 for j in range(5)] for i in range(5)])
    assert torch.equal(far, expected)
    assert not far_key_mask(5, 2)[:, 0].any()  # BOS is kept by default
    with pytest.raises(ValueError):
        far_key_mask(5, 0)


@pytest.mark.parametrize("position", ["rope", "t5", "learned"])
def test_masks_match_the_model_and_the_window(position):
    torch.manual_seed(0)
    config = TrainConfig(task="lookback", position=position, train_len=16)
    model = build_model(config).eval()
    tokens, _ = make_batch(config, 2, 16, generator=torch.Generator().manual_seed(1))
    full = model(tokens)
    torch.testing.assert_close(logits_with_key_masks(model, tokens, [None, None]), full)
    windowed = logits_with_key_masks(model, tokens, [~far_key_mask(16, 4)] * 2)
    # queries 0..3 have no far key, so they do not change; later ones do
    torch.testing.assert_close(windowed[:, :4], full[:, :4])
    assert (windowed[:, 8:] - full[:, 8:]).abs().max() > 1e-4
    with pytest.raises(ValueError):
        logits_with_key_masks(model, tokens, [None])
