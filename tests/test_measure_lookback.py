"""posenc.measure.lookback: chapter 4's readings of its trained look-back models, against direct loops."""

from __future__ import annotations

import pytest
import torch

from posenc import store, t5_relative_position_bucket
from posenc.experiments import heldout_batch
from posenc.measure.lookback import (
    accuracy_by_query,
    masked_accuracy,
    read_t5_head,
    read_two_layers,
    weight_by_distance,
)


def loop_weight_by_distance(weights: torch.Tensor, num_distances: int, first_query: int) -> torch.Tensor:
    """The same mean, pair by pair."""
    means = []
    for d in range(num_distances):
        pairs = [weights[..., i, i - d] for i in range(first_query, weights.shape[-2])]
        means.append(torch.stack(pairs, -1).mean(-1))
    return torch.stack(means, -1)


@pytest.mark.parametrize(("shape", "first_query", "num_distances"), [((6, 6), 2, 3), ((3, 9, 9), 4, 5), ((5, 7), 0, 1)])
def test_weight_by_distance_matches_a_loop(shape, first_query, num_distances):
    weights = torch.rand(shape, dtype=torch.float64)
    found = weight_by_distance(weights, num_distances, first_query=first_query)
    assert found.shape == (*shape[:-2], num_distances)
    torch.testing.assert_close(found, loop_weight_by_distance(weights, num_distances, first_query))


@pytest.mark.parametrize(("shape", "first_query", "num_distances"), [((6, 6), 2, 6), ((3, 9, 9), 4, 7), ((5, 7), 0, 5)])
def test_weight_by_distance_beyond_first_query_averages_the_queries_that_see_it(shape, first_query, num_distances):
    weights = torch.rand(shape, dtype=torch.float64)
    found = weight_by_distance(weights, num_distances, first_query=first_query)
    for d in range(num_distances):
        pairs = [weights[..., i, i - d] for i in range(max(first_query, d), shape[-2])]
        torch.testing.assert_close(found[..., d], torch.stack(pairs, -1).mean(-1))


def test_weight_by_distance_of_a_shift_is_one_hot():
    # Every query puts all its weight 2 keys back: the mean is 1 at distance 2, 0 elsewhere.
    weights = torch.zeros(8, 8)
    weights[torch.arange(2, 8), torch.arange(0, 6)] = 1
    assert weight_by_distance(weights, 3, first_query=2).tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"weights": torch.rand(4), "num_distances": 1}, ValueError),
        ({"weights": [[1.0]], "num_distances": 1}, TypeError),
        ({"weights": torch.rand(4, 4), "num_distances": 0}, ValueError),
        ({"weights": torch.rand(4, 4), "num_distances": 5, "first_query": 1}, ValueError),
        ({"weights": torch.rand(3, 6), "num_distances": 4}, ValueError),
        ({"weights": torch.rand(4, 4), "num_distances": 1, "first_query": 4}, ValueError),
        ({"weights": torch.rand(4, 4), "num_distances": 1.0}, TypeError),
    ],
)
def test_weight_by_distance_rejects_bad_input(kwargs, error):
    with pytest.raises(error):
        weight_by_distance(**kwargs)


def test_accuracies_match_counting():
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(5, 6, 4, generator=generator)
    answers = torch.randint(4, (5, 6), generator=generator)
    answers[:, :2] = -1  # the first two positions are not scored
    answers[0, 3] = -1
    hits = logits.argmax(-1) == answers
    expected = [hits[answers[:, t] >= 0, t].double().mean().item() for t in range(2, 6)]
    torch.testing.assert_close(accuracy_by_query(logits, answers).double(), torch.tensor(expected).double())
    scored = answers >= 0
    assert masked_accuracy(logits, answers) == pytest.approx(hits[scored].double().mean().item())


@pytest.mark.parametrize(
    ("logits", "answers"),
    [
        (torch.randn(2, 3), torch.zeros(2, 3, dtype=torch.long)),
        (torch.randn(2, 3, 4), torch.zeros(2, 4, dtype=torch.long)),
        (torch.randn(2, 3, 4), -torch.ones(2, 3, dtype=torch.long)),
    ],
)
def test_accuracies_reject_bad_input(logits, answers):
    with pytest.raises(ValueError):
        accuracy_by_query(logits, answers)
    with pytest.raises(ValueError):
        masked_accuracy(logits, answers)


def test_read_two_layers_reads_what_the_weights_say():
    family = "ch4-lookback-shaw-c2-2layers"
    tokens, answers, _ = heldout_batch(store.spec(family).config, 8)
    model = store.load(family, store.spec(family).seeds[0])
    reading = read_two_layers(model, tokens, answers)
    first, second = (w.mean(0) for w in model.attention_weights(tokens))
    heads = first.shape[0]
    assert len(reading.near) == 2 * heads
    # head-major: head h's weight at distance d is entry 2 h + d
    near = loop_weight_by_distance(first, 2, 8)
    assert reading.near == pytest.approx(near.flatten().tolist(), abs=1e-6)
    assert reading.peak == int(loop_weight_by_distance(second.mean(0), 8, 8).argmax())
    bos = first.mean(0)[:, 0]
    assert reading.bos_step == pytest.approx(max(bos[t + 1] - bos[t] for t in range(2, len(bos) - 1)).item())
    assert -1 <= reading.late_drop <= 1


def test_read_t5_head_finds_the_head_and_its_bias():
    family = "ch4-lookback-t5"
    tokens, _, _ = heldout_batch(store.spec(family).config, 8)
    model = store.load(family, 0)
    module = model.blocks[0].attention.relative_bias
    table = module.embedding.weight
    reading = read_t5_head(model, tokens, bucket=4)
    assert int(table[:, reading.head].argmax()) == reading.bias_peak == 4
    # the bias at distance d is the table entry of the bucket of offset -d
    buckets = t5_relative_position_bucket(
        -torch.arange(tokens.shape[1]),
        bidirectional=False,
        num_buckets=module.num_buckets,
        max_distance=module.max_distance,
    )
    torch.testing.assert_close(reading.bias_by_distance, table[buckets, reading.head])
    others = torch.cat([table[:4, reading.head], table[5:, reading.head]])
    assert reading.bias_margin == pytest.approx((table[4, reading.head] - others.max()).item())
    # by default the peak is sought over every distance the queries from 8 on see
    weights = model.attention_weights(tokens)[0].mean(0)[reading.head]
    length = tokens.shape[1]
    by_distance = [torch.stack([weights[i, i - d] for i in range(max(8, d), length)]).mean() for d in range(length)]
    assert reading.attention_peak == int(torch.stack(by_distance).argmax())
    assert read_t5_head(model, tokens, bucket=4, span=8).attention_peak < 8
    with pytest.raises(ValueError, match="bucket"):
        read_t5_head(model, tokens, bucket=len(table))
