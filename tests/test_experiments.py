"""The training kit of chapter 8: tasks whose answers can be checked, a causal model for every
position scheme, seeded training, the weight cache, and evaluation by length and position."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from posenc import POSITION_SCHEMES
from posenc.experiments import (
    IGNORE,
    TASKS,
    TinyCausalLM,
    TrainConfig,
    attention_entropy,
    build_model,
    cache_path,
    evaluate,
    evaluate_by_position,
    make_batch,
    markov_transitions,
    sample_positions,
    train,
    train_or_load,
)
from posenc.experiments.evaluation import accuracy_by_position, band_means

#: A configuration small enough to train in well under a second.
SMALL = dict(dim=16, num_heads=2, num_layers=1, train_len=12, steps=4, batch_size=4)


@pytest.fixture(autouse=True)
def _one_thread():
    """These models are tiny: on a busy machine a second thread makes them 10-20 times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def generator(seed=0):
    return torch.Generator().manual_seed(seed)


# --------------------------------------------------------------------------- tasks


@pytest.mark.parametrize("task", TASKS)
def test_batches_start_with_bos_and_hold_content_tokens(task):
    config = TrainConfig(task=task, position="rope")
    tokens, labels = make_batch(config, 5, 20, generator=generator())
    assert tokens.shape == labels.shape == (5, 20) and tokens.dtype == labels.dtype == torch.long
    assert torch.all(tokens[:, 0] == config.vocab_size)
    assert torch.all((tokens[:, 1:] >= 0) & (tokens[:, 1:] < config.vocab_size))
    scored = labels != IGNORE
    assert scored.any() and torch.all(labels[scored] < config.vocab_size)
    again = make_batch(config, 5, 20, generator=generator())
    assert torch.equal(again[0], tokens) and torch.equal(again[1], labels)


def test_lookback_labels_are_the_token_k_back():
    config = TrainConfig(task="lookback", position="rope", lookback=4)
    tokens, labels = make_batch(config, 3, 15, generator=generator(1))
    for b in range(3):
        for t in range(15):
            expected = tokens[b, t - 4].item() if t - 4 >= 1 else IGNORE
            assert labels[b, t].item() == expected


def test_recall_labels_are_the_token_at_position_p():
    config = TrainConfig(task="recall", position="rope", recall_position=2)
    tokens, labels = make_batch(config, 3, 15, generator=generator(2))
    for b in range(3):
        for t in range(15):
            assert labels[b, t].item() == (tokens[b, 2].item() if t > 2 else IGNORE)


def test_markov_labels_are_next_tokens_drawn_from_the_chain():
    config = TrainConfig(task="markov", position="rope", vocab_size=4)
    tokens, labels = make_batch(config, 4000, 12, generator=generator(3))
    assert torch.equal(labels[:, 2:-1], tokens[:, 3:])
    assert torch.all(labels[:, :2] == IGNORE) and torch.all(labels[:, -1] == IGNORE)
    # Empirical successor frequencies of every context match the chain's probabilities.
    transitions = markov_transitions(4)
    counts = torch.zeros(4, 4, 4, dtype=torch.float64)
    contexts = tokens[:, 1:-2], tokens[:, 2:-1], tokens[:, 3:]
    ones = torch.ones(contexts[0].numel(), dtype=torch.float64)
    counts.index_put_(tuple(t.flatten() for t in contexts), ones, accumulate=True)
    seen = counts.sum(-1) > 500
    assert seen.sum() >= 8
    frequencies = counts[seen] / counts[seen].sum(-1, keepdim=True)
    assert torch.allclose(frequencies, transitions[seen], atol=0.06)


def test_markov_chain_is_fixed_normalised_and_predictable():
    first, second = markov_transitions(16), markov_transitions(16)
    assert torch.equal(first, second) and first.shape == (16, 16, 16)
    torch.testing.assert_close(first.sum(-1), torch.ones(16, 16, dtype=torch.float64))
    entropy = -(first * first.log()).sum(-1).mean()
    assert entropy < 0.8 * math.log(16), "the language should be far from uniform"


def test_bad_task_arguments():
    with pytest.raises(ValueError, match="task"):
        TrainConfig(task="sorting", position="rope")
    with pytest.raises(ValueError, match="position"):
        TrainConfig(task="lookback", position="xpos")
    with pytest.raises(ValueError, match="train_len"):
        TrainConfig(task="lookback", position="rope", lookback=8, train_len=8)
    with pytest.raises(ValueError, match="even"):
        TrainConfig(task="lookback", position="rope", dim=12, num_heads=4)
    with pytest.raises(TypeError, match="steps"):
        TrainConfig(task="lookback", position="rope", steps=1.5)
    config = TrainConfig(task="recall", position="rope", recall_position=5)
    with pytest.raises(ValueError, match="length"):
        make_batch(config, 2, 6)
    with pytest.raises(ValueError, match="batch_size"):
        make_batch(config, 0, 16)


# --------------------------------------------------------------------------- the model


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_model_is_causal_for_every_scheme(position):
    """Changing the token at position 6 changes no logit before it, and some logit after."""
    torch.manual_seed(0)
    model = TinyCausalLM(8, position=position, dim=16, num_heads=2, num_layers=2, max_len=10).eval()
    tokens = torch.randint(8, (2, 10), generator=generator(4))
    changed = tokens.clone()
    changed[:, 6] = (changed[:, 6] + 1) % 8
    with torch.no_grad():
        logits, changed_logits = model(tokens), model(changed)
    assert logits.shape == (2, 10, 9)
    torch.testing.assert_close(changed_logits[:, :6], logits[:, :6])
    assert not torch.allclose(changed_logits[:, 6:], logits[:, 6:])


def test_learned_model_refuses_or_clips_beyond_its_table():
    torch.manual_seed(0)
    model = TinyCausalLM(8, position="learned", dim=16, num_heads=2, max_len=10).eval()
    long = torch.randint(8, (1, 14), generator=generator(5))
    with pytest.raises(ValueError, match="max_len"):
        model(long)
    clipped = model(long, beyond_table="clip")
    # Clipping = every position from max_len - 1 on reads the last row of the table.
    explicit = model(long, torch.arange(14).clamp(max=9))
    torch.testing.assert_close(clipped, explicit, rtol=0, atol=0)
    assert not torch.allclose(clipped, model(long, torch.arange(14).clamp(max=8)))
    with pytest.raises(ValueError, match="beyond_table"):
        model(long, beyond_table="wrap")


def test_model_rejects_bad_tokens():
    model = TinyCausalLM(8, position="rope", dim=16, num_heads=2)
    with pytest.raises(TypeError, match="tokens"):
        model(torch.zeros(1, 4))
    with pytest.raises(ValueError, match="tokens"):
        model(torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="tokens"):
        model(torch.full((1, 4), 9))


def test_attention_entropy_is_log_of_the_keys_for_uniform_attention():
    """With zero query/key weights every causal query spreads evenly over its t + 1 keys."""
    torch.manual_seed(0)
    model = TinyCausalLM(8, position="none", dim=16, num_heads=2, num_layers=2)
    with torch.no_grad():
        for block in model.blocks:
            block.attention.qkv.weight[:32].zero_()
            block.attention.qkv.bias[:32].zero_()
    entropy = attention_entropy(model, torch.randint(8, (3, 9), generator=generator(6)))
    assert entropy.shape == (2, 2, 9)
    expected = torch.log(torch.arange(1, 10, dtype=torch.float64)).expand(2, 2, 9)
    torch.testing.assert_close(entropy, expected)


# --------------------------------------------------------------------------- training and caching


def test_training_is_deterministic_under_a_seed():
    config = TrainConfig(task="lookback", position="t5", **SMALL)
    first, second, other = (train(config, seed, progress=False) for seed in (7, 7, 8))
    assert first.losses == second.losses and len(first.losses) == config.steps
    for (name, a), b in zip(first.model.state_dict().items(), second.model.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert first.losses != other.losses


@pytest.mark.parametrize("position", ["rope", "t5"])
def test_the_right_scheme_learns_lookback_in_a_few_steps(position):
    config = TrainConfig(
        task="lookback",
        position=position,
        lookback=2,
        vocab_size=8,
        dim=16,
        num_heads=2,
        num_layers=1,
        train_len=16,
        steps=150,
        batch_size=16,
        learning_rate=1e-2,
    )
    run = train(config, 0, progress=False)
    result = evaluate(run.model, config, 16, num_sequences=64)
    assert result.accuracy > 0.95, result
    assert sum(run.losses[-10:]) < 0.2 * sum(run.losses[:10])


def test_random_offsets_grow_the_learned_table_and_train():
    config = TrainConfig(task="lookback", position="learned", random_offsets=5, **SMALL)
    assert config.table_len == SMALL["train_len"] + 5
    run = train(config, 0, progress=False)
    assert run.model.input_encoding.max_len == config.table_len


def test_sample_positions_are_distinct_sorted_and_inside_the_range():
    config = TrainConfig(task="lookback", position="rope", randomized_positions=64, **SMALL)
    g = generator()
    for length in (1, 20, 64):
        positions = sample_positions(config, length, g)
        assert positions.shape == (length,) and positions.dtype == torch.int64
        assert (positions[1:] > positions[:-1]).all()
        assert 0 <= int(positions.min()) and int(positions.max()) < 64
    # every position of the range turns up, not only the first train_len
    seen = torch.cat([sample_positions(config, 20, g) for _ in range(50)]).unique()
    assert len(seen) == 64
    assert sample_positions(replace(config, randomized_positions=0), 20, g) is None
    with pytest.raises(ValueError, match="exceeds the randomized position range 64"):
        sample_positions(config, 65, g)
    with pytest.raises(ValueError, match="length"):
        sample_positions(config, 0, g)


def test_randomized_position_models_are_evaluated_at_randomized_positions():
    consecutive = TrainConfig(task="lookback", position="rope", **SMALL)
    randomized = replace(consecutive, randomized_positions=256)
    model = TinyCausalLM(16, position="rope", dim=SMALL["dim"], max_len=256)
    # RoPE reads the positions: the two evaluations differ ...
    assert evaluate(model, randomized, 40, num_sequences=8) != evaluate(model, consecutive, 40, num_sequences=8)
    # ... while a model that ignores positions scores the same tokens identically either way.
    nope = TinyCausalLM(16, position="none", dim=SMALL["dim"], max_len=256)
    a = evaluate(nope, replace(consecutive, position="none"), 40, num_sequences=8)
    b = evaluate(nope, replace(randomized, position="none"), 40, num_sequences=8)
    assert a == b
    with pytest.raises(ValueError, match="exceeds the randomized position range"):
        evaluate(model, randomized, 300, num_sequences=8)


def test_train_or_load_caches_by_config_and_seed(tmp_path, monkeypatch):
    monkeypatch.setenv("POSENC_CACHE_DIR", str(tmp_path))
    config = TrainConfig(task="recall", position="rope", **SMALL)
    path = Path(cache_path(config, 3))
    assert path.parent == tmp_path and not path.exists()
    trained = train_or_load(config, 3, progress=False)
    assert not trained.from_cache and path.is_file()
    loaded = train_or_load(config, 3, progress=False)
    assert loaded.from_cache and loaded.losses == trained.losses
    tokens = make_batch(config, 2, 20, generator=generator())[0]
    torch.testing.assert_close(loaded.model(tokens), trained.model(tokens), rtol=0, atol=0)
    # Any change of config or seed is a different file.
    assert cache_path(config, 4) != path
    assert cache_path(replace(config, steps=5), 3) != path
    assert Path(cache_path(config, 3, tmp_path / "elsewhere")).parent == tmp_path / "elsewhere"


def test_training_writes_nothing_to_stderr_when_not_interactive(capfd, monkeypatch):
    monkeypatch.setenv("POSENC_PROGRESS", "0")
    train(TrainConfig(task="lookback", position="rope", **SMALL), 0)
    assert capfd.readouterr().err == ""


def test_bad_training_arguments(tmp_path):
    config = TrainConfig(task="lookback", position="rope", **SMALL)
    with pytest.raises(ValueError, match="seed"):
        train(config, -1)
    with pytest.raises(TypeError, match="config"):
        train_or_load({"task": "lookback"}, 0, cache_dir=tmp_path)


# --------------------------------------------------------------------------- evaluation


def test_evaluation_by_position_agrees_with_the_total():
    config = TrainConfig(task="lookback", position="alibi", **SMALL)
    model = train(config, 0, progress=False).model
    total = evaluate(model, config, 20, num_sequences=40, batch_size=16)
    accuracy, loss = evaluate_by_position(model, config, 20, num_sequences=40, batch_size=16)
    assert accuracy.shape == loss.shape == (20,)
    scored = ~accuracy.isnan()
    assert torch.equal(scored, torch.arange(20) > config.lookback)
    # Every scored position has the same number of labels, so the total is the plain mean.
    assert math.isclose(total.accuracy, float(accuracy[scored].mean()), rel_tol=1e-9)
    assert math.isclose(total.loss, float(loss[scored].mean()), rel_tol=1e-6)
    assert 0 <= total.accuracy <= 1 and total.length == 20


# --------------------------------------------------------------------------- accuracy by position, bands


def test_accuracy_by_position_matches_a_direct_computation():
    config = TrainConfig(task="lookback", position="rope", **SMALL)
    model = build_model(config)  # untrained: answers vary from position to position
    accuracy = accuracy_by_position(model, config, 24, generator=generator(5), num_sequences=12, batch_size=12)
    # The same draws by hand: one number seeds the positions' stream, then the batch.
    draws = generator(5)
    torch.randint(2**62, (1,), generator=draws)
    tokens, labels = make_batch(config, 12, 24, generator=draws)
    with torch.no_grad():
        right = (model(tokens).argmax(-1) == labels).double()
    scored = labels[0] != IGNORE
    assert accuracy.shape == (24,) and accuracy.dtype == torch.float64
    assert torch.equal(~accuracy.isnan(), scored)
    torch.testing.assert_close(accuracy[scored], right[:, scored].mean(0))


def test_accuracy_by_position_follows_its_generator():
    config = TrainConfig(task="recall", position="alibi", **SMALL)
    model = build_model(config)
    first = accuracy_by_position(model, config, 30, generator=generator(1), num_sequences=16, batch_size=4)
    again = accuracy_by_position(model, config, 30, generator=generator(1), num_sequences=16, batch_size=4)
    other = accuracy_by_position(model, config, 30, generator=generator(2), num_sequences=16, batch_size=4)
    assert torch.equal(first.nan_to_num(-1), again.nan_to_num(-1))
    assert not torch.equal(first.nan_to_num(-1), other.nan_to_num(-1))


def test_accuracy_by_position_draws_randomized_positions_from_the_config():
    config = TrainConfig(task="lookback", position="rope", randomized_positions=48, **SMALL)
    model = build_model(config)
    accuracy = accuracy_by_position(model, config, 40, generator=generator(0), num_sequences=8, batch_size=2)
    scored = ~accuracy.isnan()
    assert torch.all((accuracy[scored] >= 0) & (accuracy[scored] <= 1))
    wider = replace(config, randomized_positions=4 * 48)
    assert not torch.equal(accuracy_by_position(model, wider, 40, generator=generator(0), num_sequences=8,
                                                batch_size=2).nan_to_num(-1), accuracy.nan_to_num(-1))
    with pytest.raises(ValueError, match="randomized position range"):
        accuracy_by_position(model, config, 49, generator=generator(0), num_sequences=2)


def test_accuracy_by_position_rejects_bad_arguments():
    config = TrainConfig(task="lookback", position="rope", **SMALL)
    model = build_model(config)
    with pytest.raises(TypeError, match="torch.Generator"):
        accuracy_by_position(model, config, 20, generator=0)
    for bad in ({"num_sequences": 0}, {"batch_size": 0}):
        with pytest.raises(ValueError):
            accuracy_by_position(model, config, 20, generator=generator(), **bad)


def test_band_means_are_the_means_of_disjoint_bands():
    accuracy = torch.arange(64, dtype=torch.float64)
    accuracy[9] = torch.nan  # an unscored position is left out
    bands = band_means(accuracy, 8)
    assert list(bands) == ["L–2L", "2L–4L", "4L–8L"]
    assert bands["L–2L"] == sum(p for p in range(8, 16) if p != 9) / 7
    assert bands["2L–4L"] == sum(range(16, 32)) / 16 and bands["4L–8L"] == sum(range(32, 64)) / 32
    assert list(band_means(accuracy, 4, (3, 16))) == ["L–3L", "3L–16L"]


@pytest.mark.parametrize(
    ("train_len", "scales", "length"),
    [(0, (2,), 64), (8, (), 64), (8, (4, 2), 64), (8, (1, 2), 64), (8, (2, 4, 8), 63)],
)
def test_band_means_rejects_bad_arguments(train_len, scales, length):
    with pytest.raises(ValueError):
        band_means(torch.zeros(length), train_len, scales)
