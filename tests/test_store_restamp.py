"""posenc.store.restamp: a code change that training reproduces bit for bit renews the manifests;
anything else stays stale for make train."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from posenc import store
from posenc.experiments import StopRule, TrainConfig
from posenc.store import provenance, registry

TINY = store.ModelSpec(
    "test-restamp-lookback",
    TrainConfig(task="lookback", position="rope", dim=16, num_heads=2, num_layers=1, train_len=12, steps=30,
                batch_size=8, schedule="constant", warmup_steps=5),
    seeds=(0, 1), stop=None, eval_scales=(1, 2),
)


@pytest.fixture
def trained(tmp_path, monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, TINY.name, TINY)
    for seed in TINY.seeds:
        store.retrain(TINY.name, seed, directory=tmp_path, progress=False)
    real = store.code_hash()
    monkeypatch.setattr(provenance, "code_hash", lambda: "a changed training code " + real)
    return tmp_path


def test_a_code_change_that_training_reproduces_renews_every_seed(trained):
    assert len(store.stale(TINY.name, directory=trained)) == 2
    messages: list[str] = []
    assert store.restamp(TINY.name, directory=trained, log=messages.append) == [TINY.name]
    assert store.stale(TINY.name, directory=trained) == []
    info = store.manifest(TINY.name, 1, directory=trained)
    assert info["restamped"]["verified_with_seed"] == 0 and "bit for bit" in messages[0]


def test_a_seed_that_retrains_differently_or_a_changed_config_stays_stale(trained, monkeypatch):
    path = trained / f"{TINY.name}-seed0.json"
    info = json.loads(path.read_text())
    info["metrics"]["by_scale"]["2"]["accuracy"] += 0.01  # as if the stored model were not reproducible
    path.write_text(json.dumps(info))
    messages: list[str] = []
    assert store.restamp(TINY.name, directory=trained, log=messages.append) == []
    assert "retrained differently" in messages[0] and len(store.stale(TINY.name, directory=trained)) == 2
    monkeypatch.setitem(registry._REGISTRY, TINY.name, replace(TINY, config=replace(TINY.config, steps=31)))
    assert store.restamp(TINY.name, directory=trained, log=messages.append) == []
    assert "config changed" in messages[-1]


def test_a_watched_family_whose_accuracy_by_position_holds_nan_is_renewed(tmp_path, monkeypatch):
    watched = replace(TINY, name="test-restamp-watched", seeds=(0,), eval_scales=(1,),
                      watch=StopRule(threshold=0.2, check_every=10, num_sequences=16))
    monkeypatch.setitem(registry._REGISTRY, watched.name, watched)
    store.retrain(watched.name, 0, directory=tmp_path, progress=False)
    by_position = store.manifest(watched.name, 0, directory=tmp_path)["metrics"]["accuracy_by_position"]
    assert any(math.isnan(value) for value in by_position)  # positions with nothing to score
    real = store.code_hash()
    monkeypatch.setattr(provenance, "code_hash", lambda: "a changed training code " + real)
    messages: list[str] = []
    assert store.restamp(watched.name, directory=tmp_path, log=messages.append) == [watched.name], messages
