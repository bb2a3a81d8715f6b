"""The model store: stored weights load to the model that was trained, stale manifests are caught
and named with the command that refreshes them, and a retrained sample reproduces the store."""

from __future__ import annotations

import copy
import hashlib
import lzma
from dataclasses import replace

import pytest
import torch

from posenc import corpus, experiments, rotary, store, stretch, stretch_eval
from posenc.experiments import StopRule, TrainConfig, evaluate
from posenc.store import cli, files, provenance, registry, training

#: A family small enough to train in a second or two.
TINY = store.ModelSpec(
    "test-tiny-lookback",
    TrainConfig(task="lookback", position="rope", dim=16, num_heads=2, num_layers=1, train_len=12, steps=60,
                batch_size=8, schedule="constant", warmup_steps=5),
    seeds=(0, 1),
    stop=StopRule(threshold=0.5, check_every=20, num_sequences=16),
    eval_scales=(1, 2),
)


@pytest.fixture
def tiny(monkeypatch):
    """TINY registered for the duration of a test only."""
    monkeypatch.setitem(registry._REGISTRY, TINY.name, TINY)
    return TINY


@pytest.fixture
def one_thread():
    """One thread, as make train runs (and faster on a shared machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_retrain_writes_weights_that_load_to_the_same_model(tmp_path, tiny):
    model, info = store.retrain(tiny.name, 0, directory=tmp_path, progress=False)
    loaded = store.load(tiny.name, 0, directory=tmp_path)
    for (key, a), b in zip(model.state_dict().items(), loaded.state_dict().values(), strict=True):
        assert torch.equal(a, b), key
    # The manifest's metrics are those of the stored (half-precision) weights.
    result = evaluate(loaded, tiny.config, 2 * tiny.config.train_len, num_sequences=128, beyond_table="clip")
    assert info["metrics"]["by_scale"]["2"]["accuracy"] == pytest.approx(result.accuracy, abs=1e-6)
    assert store.manifest(tiny.name, 0, directory=tmp_path) == info
    assert info["steps_run"] == len(info["checks"]) * 20 or info["stop_reason"] == "cap"
    assert info["stop_reason"] in ("threshold", "cap") and info["converged"] == (info["stop_reason"] == "threshold")
    assert len(info["loss_curve"]["mean_loss"]) == -(-info["steps_run"] // store.LOSS_EVERY)
    assert store.stale(tiny.name, directory=tmp_path) == [f"{tiny.name} seed 1: not trained"]


def test_training_is_reproducible_and_nothing_is_written_without_a_directory(tmp_path, tiny, monkeypatch):
    monkeypatch.setenv("POSENC_STORE_DIR", str(tmp_path))
    first = store.retrain(tiny.name, 1, progress=False)[1]
    second = store.retrain(tiny.name, 1, progress=False)[1]
    assert first["metrics"] == second["metrics"] and first["loss_curve"] == second["loss_curve"]
    assert list(tmp_path.iterdir()) == []


def test_a_changed_config_makes_the_manifest_stale(tmp_path, tiny, monkeypatch):
    store.retrain(tiny.name, 0, directory=tmp_path, progress=False)
    assert store.stale(tiny.name + "*", directory=tmp_path) == [f"{tiny.name} seed 1: not trained"]
    changed = replace(tiny, config=replace(tiny.config, learning_rate=1e-3))
    monkeypatch.setitem(registry._REGISTRY, tiny.name, changed)
    assert f"{tiny.name} seed 0: code or config changed since it was trained" in store.stale(directory=tmp_path)


def test_code_hash_ignores_docstrings_but_not_code():
    assert provenance._without_docstrings('def f(x):\n    """Doc."""\n    return x  # comment\n') == (
        provenance._without_docstrings("def f(x):\n    return x\n")
    )
    assert provenance._without_docstrings("def f(x):\n    return x\n") != provenance._without_docstrings(
        "def f(x):\n    return -x\n"
    )
    assert len(store.code_hash()) == 64
    # attribute docstrings (a string after an assignment) are documentation too
    assert provenance._without_docstrings('X = 1\n"""What X is."""\nclass C:\n    y = 2\n    """What y is."""\n') == (
        provenance._without_docstrings("X = 1\nclass C:\n    y = 2\n")
    )


def test_retrain_refuses_to_store_a_model_whose_code_changed_while_it_trained(tmp_path, tiny, monkeypatch):
    hashes = iter(["code before", "code after"])
    monkeypatch.setattr(provenance, "code_hash", lambda: next(hashes))
    with pytest.raises(RuntimeError, match="changed on disk while .* trained"):
        store.retrain(tiny.name, 0, directory=tmp_path, progress=False)
    assert not list(tmp_path.iterdir())


def test_load_refuses_tampered_weights(tmp_path, tiny):
    store.retrain(tiny.name, 0, directory=tmp_path, progress=False)
    path = tmp_path / f"{tiny.name}-seed0.safetensors.xz"
    original = path.read_bytes()
    # a damaged file: xz's own check (CRC64) catches it
    damaged = bytearray(original)
    damaged[len(damaged) // 2] ^= 1
    path.write_bytes(bytes(damaged))
    with pytest.raises(RuntimeError, match="not a valid xz file"):
        store.load(tiny.name, 0, directory=tmp_path)
    # a well-formed file with other weights: the manifest's sha256 catches it
    payload = bytearray(lzma.decompress(original))
    payload[-1] ^= 1
    path.write_bytes(lzma.compress(bytes(payload)))
    with pytest.raises(RuntimeError, match="sha256"):
        store.load(tiny.name, 0, directory=tmp_path)
    path.unlink()
    with pytest.raises(FileNotFoundError, match=f"make train ONLY={tiny.name}"):
        store.load(tiny.name, 0, directory=tmp_path)


def test_bad_arguments(tmp_path, tiny):
    with pytest.raises(KeyError, match="no stored family"):
        store.spec("no-such-family")
    with pytest.raises(ValueError, match="seeds"):
        store.load(tiny.name, 7, directory=tmp_path)
    with pytest.raises(FileNotFoundError, match=f"make train ONLY={tiny.name}"):
        store.load(tiny.name, 0, directory=tmp_path)
    with pytest.raises(ValueError, match="name"):
        store.ModelSpec("bad name", tiny.config)
    with pytest.raises(TypeError, match="TrainConfig"):
        store.ModelSpec("x", {"task": "lookback"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="distinct"):
        store.ModelSpec("x", tiny.config, seeds=(1, 1))
    with pytest.raises(ValueError, match="already registered"):
        store.register(replace(tiny, seeds=(5,)))
    with pytest.raises(ValueError, match="threshold"):
        StopRule(threshold=1.5)


# --------------------------------------------------------------------------- the store itself


def _stored() -> list[tuple[store.ModelSpec, int]]:
    return [(s, seed) for s in store.specs() for seed in s.seeds if files._paths(s.name, seed)[1].is_file()]


def test_every_stored_model_matches_the_code_and_config_that_trained_it():
    code = store.code_hash()
    stale = sorted(
        {s.name for s, seed in _stored()
         if store.manifest(s.name, seed)["fingerprint"] != store.fingerprint(s, seed, code=code)}
    )
    commands = "\n".join(f"    make train ONLY={name}" for name in stale)
    assert not stale, f"the training code or config changed since these models were trained; run\n{commands}"


def test_every_stored_weight_file_is_plain_xz_holding_the_manifests_safetensors():
    from safetensors.torch import load as load_bytes

    for model_spec, seed in _stored():
        weights, _ = files._paths(model_spec.name, seed)
        payload = lzma.decompress(weights.read_bytes(), format=lzma.FORMAT_XZ)
        assert hashlib.sha256(payload).hexdigest() == store.manifest(model_spec.name, seed)["weights_sha256"]
        tensors = load_bytes(payload)
        assert {tensor.dtype for tensor in tensors.values()} == {torch.float16}, weights.name


def test_the_store_stays_within_its_budget():
    size = store.store_size()
    strays = [path.name for path in store.store_dir().iterdir()
              if not path.name.endswith((".json", ".safetensors.xz"))]
    assert not strays, f"neither weights nor manifests (left by an interrupted make train?): {strays}"
    assert size["total"] <= store.STORE_BUDGET_BYTES, cli._describe_size()


def _fastest_stored_family(task: str) -> store.ModelSpec | None:
    """The family of ``task`` trained to a stopping rule whose stored seeds took the fewest steps."""
    stored = {(s.name, seed) for s, seed in _stored()}
    families = [s for s in store.specs() if s.stop is not None and s.finetune is None
                and s.config.task == task and all((s.name, k) in stored for k in s.seeds)]
    if not families:
        return None
    return min(families, key=lambda s: sum(store.manifest(s.name, k)["steps_run"] for k in s.seeds))


@pytest.mark.parametrize("task", store.CH8_TASKS)
def test_a_model_retrained_from_scratch_falls_within_the_stored_seeds(task):
    """One model per task, retrained on this machine (a few seconds each): its metrics must lie
    within the spread of the stored seeds, widened by a margin for another CPU's rounding."""
    family = _fastest_stored_family(task)
    if family is None:
        pytest.skip(f"no complete family of {task} trained to a rule in the store yet (make train)")
    margin = 0.05
    _, info = store.retrain(family.name, family.seeds[0], progress=False)
    stored = [store.manifest(family.name, k)["metrics"] for k in family.seeds]

    def check(label: str, value: float, values: list[float]) -> None:
        assert min(values) - margin <= value <= max(values) + margin, (
            f"{family.name}: retrained {label} {value:.3f} outside the stored seeds' "
            f"{min(values):.3f}–{max(values):.3f} (margin {margin})"
        )

    check("held-out accuracy", info["metrics"]["heldout_accuracy"], [m["heldout_accuracy"] for m in stored])
    for scale, result in info["metrics"]["by_scale"].items():
        check(f"accuracy at {scale}L", result["accuracy"], [m["by_scale"][scale]["accuracy"] for m in stored])


# --------------------------------------------------------------------------- a watched budget

WATCHED = replace(TINY, name="test-tiny-watched", stop=None, eval_scales=(1,),
                  config=replace(TINY.config, schedule="cosine"),
                  watch=StopRule(threshold=0.2, check_every=20, num_sequences=16))


def _first_rule_check(checks, threshold):
    """Index of the second of the first two consecutive checks at ``threshold`` or more, or None."""
    passed = [accuracy >= threshold for _, accuracy in checks]
    return next((i for i in range(1, len(passed)) if passed[i - 1] and passed[i]), None)


def test_a_watched_rule_records_without_changing_what_is_trained(one_thread):
    model, losses, _, record = training._train_watched(WATCHED.config, 0, WATCHED.watch, False)
    plain = experiments.train(WATCHED.config, 0, device="cpu", progress=False)
    assert losses == plain.losses  # every step of the budget, as without the rule
    for (key, a), b in zip(model.state_dict().items(), plain.model.state_dict().values(), strict=True):
        assert torch.equal(a, b), key
    checks = record["checks"]
    first = _first_rule_check(checks, WATCHED.watch.threshold)
    assert record["rule_step"] == (None if first is None else checks[first][0])
    assert record["rule_step"] is None or checks[-1][0] == record["rule_step"]  # checking ends there
    assert (record["at_rule"] is None) == (record["rule_step"] is None)
    never = replace(WATCHED.watch, threshold=1.0)
    assert training._train_watched(replace(WATCHED.config, steps=40), 0, never, False)[3]["rule_step"] is None


def test_a_watched_family_must_train_all_its_steps_on_a_task_at_plain_positions():
    with pytest.raises(ValueError, match="stop=None"):
        replace(WATCHED, stop=StopRule())
    with pytest.raises(TypeError, match="watch"):
        replace(WATCHED, watch={"threshold": 0.9})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="random offsets or positions"):
        replace(WATCHED, config=replace(WATCHED.config, random_offsets=8))
    with pytest.raises(ValueError, match="task"):
        replace(WATCHED, config=replace(WATCHED.config, task="markov"))


def _watched_stored() -> list[tuple[store.ModelSpec, int]]:
    """Watched models in the store (a stale one trained otherwise is the currency test's to report)."""
    return [(s, seed) for s, seed in _stored() if s.watch is not None and "watch" in store.manifest(s.name, seed)]


def test_every_watched_manifest_records_the_first_step_of_its_rule():
    for model_spec, seed in _watched_stored():
        info = store.manifest(model_spec.name, seed)
        where = f"{model_spec.name} seed {seed}"
        assert info["steps_run"] == model_spec.config.steps, where
        first = _first_rule_check(info["checks"], model_spec.watch.threshold)
        assert info["rule_step"] == (None if first is None else info["checks"][first][0]), where
        assert info["converged"] == (info["at_rule"] is not None) == (first is not None), where
        length = training.BAND_SCALE * model_spec.config.train_len
        assert len(info["metrics"]["accuracy_by_position"]) == length, where


def test_a_stored_watched_model_reproduces_its_accuracy_by_position(one_thread):
    """The build reads the matrix from the manifests; here one model's is recomputed from its
    stored weights (another CPU may break a tie differently: a few answers in 128)."""
    family = store.spec("ch8-recall-rope")
    if (family, 0) not in _watched_stored():
        pytest.skip("ch8-recall-rope is not in the store yet (make train ONLY='ch8-*')")
    stored = torch.tensor(store.manifest(family.name, 0)["metrics"]["accuracy_by_position"])
    again = torch.tensor(training.band_accuracy(store.load(family.name, 0), family.config))
    assert torch.equal(stored.isnan(), again.isnan())
    assert (stored - again).nan_to_num().abs().max() <= 3 / training.BAND_SEQUENCES


def _checkpoint_sequences(family: store.ModelSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """The sequences of 2 L' on which a fine-tune's manifest scores its checkpoints."""
    plan, config = family.finetune, family.config
    return experiments.make_batch(config, training.FINETUNE_SEQUENCES, round(2 * plan.factor * config.train_len),
                                  generator=torch.Generator().manual_seed(training._FINETUNE_SEED))


def test_a_rope_base_is_trained_stored_and_inherited_by_its_fine_tunes(tmp_path, monkeypatch, one_thread):
    based = replace(WATCHED, name="test-tiny-base10", seeds=(0,), rope_base=10.0)
    tuned = store.ModelSpec("test-tiny-base10-pi-ft", based.config, seeds=(0,), stop=None, eval_scales=(1,),
                            finetune=stretch.FineTune(based.name, "pi", factor=2.0, steps=4, checkpoints=(0, 4)))
    for family in (based, tuned):
        monkeypatch.setitem(registry._REGISTRY, family.name, family)
    assert store.fingerprint(based, 0) != store.fingerprint(replace(based, rope_base=None), 0)
    _, info = store.retrain(based.name, 0, directory=tmp_path, progress=False)
    loaded = store.load(based.name, 0, directory=tmp_path)
    assert info["rope_base"] == 10.0 and [block.attention.rotary.base for block in loaded.blocks] == [10.0]
    # the same weights with base-10 frequencies given explicitly compute the same; with 10 000, not
    head_dim = based.config.dim // based.config.num_heads
    x = torch.randint(16, (2, 3 * based.config.train_len), generator=torch.Generator().manual_seed(0))
    explicit = stretch_eval.with_frequencies(copy.deepcopy(loaded), rotary.rope_frequencies(head_dim, 10.0))
    default = stretch_eval.with_frequencies(copy.deepcopy(loaded), rotary.rope_frequencies(head_dim))
    torch.testing.assert_close(explicit(x), loaded(x))
    assert not torch.allclose(default(x), loaded(x))
    # the fine-tune stretches the base-10 layers, and its step-0 checkpoint is the rule zero-shot
    _, tuned_info = store.retrain(tuned.name, 0, directory=tmp_path)
    assert [block.attention.rotary.base for block in store.load(tuned.name, 0, directory=tmp_path).blocks] == [10.0]
    assert sorted(tuned_info["checkpoints"]) == ["0", "4"]
    scored = _checkpoint_sequences(tuned)
    zero_shot = stretch.stretch(loaded, "pi", factor=2.0, train_len=based.config.train_len)
    accuracy = stretch_eval.scores_by_position(zero_shot, *scored)[0]
    stored = torch.tensor(tuned_info["checkpoints"]["0"]["accuracy_by_position"], dtype=torch.float64)
    torch.testing.assert_close(stored, accuracy, atol=1e-5, rtol=0, equal_nan=True)
    with pytest.raises(ValueError, match="rope_base"):
        replace(WATCHED, config=replace(WATCHED.config, position="alibi"), rope_base=10.0)
    with pytest.raises(ValueError, match="rope_base"):
        replace(TINY, rope_base=10.0)  # not watched
    with pytest.raises(ValueError, match="rope_base"):
        replace(based, rope_base=-1.0)


def test_a_stored_fine_tune_records_its_rule_zero_shot_at_step_0(one_thread):
    family = store.spec("ch9-recall-pi-ft-b10")
    if not files._paths(family.name, 0)[1].is_file() or "checkpoints" not in store.manifest(family.name, 0):
        pytest.skip("ch9-recall-pi-ft-b10 is not in the store yet (make train ONLY='ch9-*')")
    plan, config = family.finetune, family.config
    scored = _checkpoint_sequences(family)
    base = stretch.stretch(store.load(plan.base, 0), plan.rule, factor=plan.factor, train_len=config.train_len)
    info = store.manifest(family.name, 0)
    for step, model in (("0", base), (str(plan.steps), store.load(family.name, 0))):
        stored = torch.tensor(info["checkpoints"][step]["accuracy_by_position"], dtype=torch.float64)
        again = stretch_eval.scores_by_position(model, *scored)[0]
        # the last checkpoint was scored before the weights were rounded to float16: a few answers
        assert (stored - again).nan_to_num().abs().max() <= 3 / training.FINETUNE_SEQUENCES, step


# --------------------------------------------------------------------------- the text models


def test_text_fingerprints_cover_the_corpus_and_its_code_but_other_families_do_not(monkeypatch):
    text, lookback = store.spec("ch8-text-rope"), store.spec("ch8-lookback-rope")
    before = store.fingerprint(text, 0), store.fingerprint(lookback, 0)
    monkeypatch.setattr(corpus, "CORPUS_SHA256", "0" * 64)
    assert store.fingerprint(text, 0) != before[0]
    assert store.fingerprint(lookback, 0) == before[1]
    with pytest.raises(ValueError, match="fixed number of steps"):
        store.ModelSpec("x", text.config, stop=StopRule())


def test_a_stored_text_model_reproduces_its_first_steps_and_its_metrics(one_thread):
    """The stored text model's metrics are those of its stored weights, and its first 100 steps
    (the warm-up, the same whatever the budget) retrained here follow its stored loss curve."""
    family = store.spec("ch8-text-rope")
    if not files._paths(family.name, 0)[1].is_file():
        pytest.skip("ch8-text-rope is not in the store yet (make train ONLY='ch8-text-*')")
    info = store.manifest(family.name, 0)
    assert info["corpus_sha256"] == corpus.CORPUS_SHA256
    again = training._text_metrics(store.load(family.name, 0), family)
    for scale, result in info["metrics"]["by_scale"].items():
        assert again["by_scale"][scale]["loss"] == pytest.approx(result["loss"], abs=1e-3), scale
    warmup = family.config.warmup
    run = corpus.train_text(replace(family.config, steps=warmup), 0, progress=False)
    points = warmup // store.LOSS_EVERY
    retrained = torch.tensor(run.losses).reshape(points, -1).mean(-1)
    stored = torch.tensor(info["loss_curve"]["mean_loss"][:points])
    assert (retrained - stored).abs().max() < 0.02
