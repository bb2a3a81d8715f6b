"""posenc.corpus: the shipped text is the recorded one, the vocabulary round-trips, batches are
windows of the corpus labelled with the next character, validation files are never trained on."""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import tomllib
from pathlib import Path

import pytest
import torch

from posenc import corpus
from posenc.experiments import TrainConfig

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_corpus_has_the_recorded_hash_and_its_license():
    data = Path(corpus.__file__).with_name("corpus_data")
    payload = gzip.decompress((data / "stdlib.json.gz").read_bytes())
    assert hashlib.sha256(payload).hexdigest() == corpus.CORPUS_SHA256
    assert "PYTHON SOFTWARE FOUNDATION LICENSE" in (data / "LICENSE-PSF.txt").read_text()
    files = corpus.corpus_files()
    assert [name for name, _ in files] == sorted(name for name, _ in files)
    assert 1_000_000 < sum(len(text) for _, text in files) < 2_000_000


def test_the_corpus_ships_with_the_package():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["posenc"]
    data = Path(corpus.__file__).with_name("corpus_data")
    for path in data.iterdir():
        relative = f"corpus_data/{path.name}"
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def test_vocabulary_and_round_trip():
    assert len(corpus.ALPHABET) == 96 and len(set(corpus.ALPHABET)) == 96
    assert corpus.VOCAB_SIZE == 97 and corpus.BOS == 97
    text = "def f(x):\n    return x ** 2  # ~!@\n"
    tokens = corpus.encode(text)
    assert tokens.dtype == torch.long and tokens.shape == (len(text),)
    assert corpus.decode(tokens) == text
    assert corpus.encode("é\t").tolist() == [corpus.UNKNOWN, corpus.UNKNOWN]
    assert corpus.decode(torch.tensor([corpus.BOS, 33, corpus.UNKNOWN])) == "A\N{REPLACEMENT CHARACTER}"
    name, source = corpus.corpus_files()[0]
    assert corpus.decode(corpus.encode(source)) == "".join(
        c if c in corpus.ALPHABET else "\N{REPLACEMENT CHARACTER}" for c in source
    ), name


def test_validation_files_are_disjoint_from_training_files():
    train, validation = corpus.split_files("train"), corpus.split_files("validation")
    assert not set(train) & set(validation)
    assert sorted(train + validation) == [name for name, _ in corpus.corpus_files()]
    assert len(validation) == len(corpus.corpus_files()) // corpus.VALIDATION_EVERY
    texts = dict(corpus.corpus_files())
    assert len(corpus.split_tokens("validation")) == sum(len(texts[name]) for name in validation)


@pytest.mark.parametrize("split", corpus.SPLITS)
def test_a_batch_is_contiguous_text_labelled_with_the_next_character(split):
    stream = corpus.decode(corpus.split_tokens(split))
    tokens, labels = corpus.text_batch(split, 6, 40, generator=torch.Generator().manual_seed(1))
    assert tokens.shape == labels.shape == (6, 40)
    assert (tokens[:, 0] == corpus.BOS).all()
    assert torch.equal(tokens[:, 1:], labels[:, :-1])  # position t predicts the character after it
    for row in labels:
        assert corpus.decode(row) in stream
    again = corpus.text_batch(split, 6, 40, generator=torch.Generator().manual_seed(1))
    assert torch.equal(again[0], tokens) and torch.equal(again[1], labels)


def test_training_windows_never_come_from_validation_files():
    validation_stream = corpus.decode(corpus.split_tokens("validation"))
    _, labels = corpus.text_batch("train", 64, 200, generator=torch.Generator().manual_seed(0))
    assert not any(corpus.decode(row) in validation_stream for row in labels)


def test_config_and_a_short_training_run_lower_the_loss():
    config = corpus.text_config("rope", dim=16, num_heads=2, num_layers=1, train_len=16, steps=40,
                                batch_size=8, warmup_steps=5)
    assert isinstance(config, TrainConfig) and config.task == "text" and config.vocab_size == corpus.VOCAB_SIZE
    run = corpus.train_text(config, 0, progress=False)
    assert run.steps_run == 40 and run.stop_reason == "steps"
    assert sum(run.losses[-5:]) / 5 < run.losses[0] - 1.0  # from log(97) = 4.6 towards character statistics
    accuracy, loss = corpus.text_loss_by_position(run.model, 48, num_windows=10, batch_size=4)
    assert accuracy.shape == loss.shape == (48,)
    # Independent check at one position: the cross-entropy of the model's own logits.
    tokens, labels = corpus.text_batch("validation", 10, 48, generator=torch.Generator().manual_seed(31_415 + 48))
    with torch.no_grad():
        logits = run.model(tokens)
    direct = torch.nn.functional.cross_entropy(logits[:, 7], labels[:, 7])
    assert float(loss[7]) == pytest.approx(float(direct), abs=1e-4)


def test_bad_arguments():
    with pytest.raises(ValueError, match="split"):
        corpus.split_files("test")
    with pytest.raises(ValueError, match="length"):
        corpus.text_batch("train", 2, 1)
    with pytest.raises(ValueError, match="exceeds"):
        corpus.text_batch("validation", 1, 10**7)
    with pytest.raises(TypeError, match="str"):
        corpus.encode(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="integer"):
        corpus.decode(torch.zeros(3))
    with pytest.raises(ValueError, match=r"\[0, 97\]"):
        corpus.decode(torch.tensor([98]))
    with pytest.raises(ValueError, match="task='text'"):
        corpus.TextConfig(task="lookback", position="rope", vocab_size=corpus.VOCAB_SIZE)
    with pytest.raises(ValueError, match="vocab_size"):
        corpus.text_config("rope", vocab_size=16)
    with pytest.raises(ValueError, match="position"):
        corpus.text_config("fourier")
    with pytest.raises(ValueError, match="random_offsets"):
        corpus.text_config("learned", random_offsets=4)
    with pytest.raises(TypeError, match="TextConfig"):
        corpus.train_text(TrainConfig(task="lookback", position="rope"), 0)
    with pytest.raises(TypeError, match="TinyCausalLM"):
        corpus.text_loss_by_position(torch.nn.Linear(2, 2), 8)  # type: ignore[arg-type]
