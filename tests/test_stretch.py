"""posenc.stretch: a trained RoPE model given the frequencies of a context-extension rule."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from posenc import TrainConfig, build_model, llama3_frequencies, rope_frequencies
from posenc.stretch import STRETCH_RULES, FineTune, StretchedRotary, fine_tune, rule_frequencies, stretch

DIM, BASE, L, S = 32, 10000.0, 32, 4.0


def tiny_rope(**changes) -> torch.nn.Module:
    torch.manual_seed(0)
    options = {"task": "lookback", "position": "rope", "dim": 32, "num_heads": 1, "num_layers": 2, **changes}
    return build_model(TrainConfig(**options)).eval()


def tokens(n: int) -> torch.Tensor:
    return torch.randint(16, (2, n), generator=torch.Generator().manual_seed(1))


def test_paper_ramp_is_linear_in_the_turns_between_alpha_and_beta() -> None:
    theta = rope_frequencies(DIM, BASE)
    turns = L * theta / (2 * math.pi)
    gamma = ((turns - 1) / (32 - 1)).clamp(0, 1)  # the YaRN paper's ramp, written independently
    expected = gamma * theta + (1 - gamma) * theta / S
    frequencies, factor = rule_frequencies("yarn-paper", DIM, base=BASE, factor=S, train_len=L)
    torch.testing.assert_close(frequencies, expected, rtol=1e-12, atol=0)
    assert factor == pytest.approx(0.1 * math.log(S) + 1)
    torch.testing.assert_close(
        rule_frequencies("llama3", DIM, base=BASE, factor=S, train_len=L)[0],
        llama3_frequencies(DIM, BASE, factor=S, original_max_position=L),
    )


def test_the_two_yarn_ramps_differ_where_the_transformers_ramp_rounds_outwards() -> None:
    # with 16 pairs at L = 32 the code's ramp keeps pair 0; the paper's interpolates it by most of s
    theta = rope_frequencies(DIM, BASE)
    code = rule_frequencies("yarn", DIM, base=BASE, factor=S, train_len=L)[0]
    paper = rule_frequencies("yarn-paper", DIM, base=BASE, factor=S, train_len=L)[0]
    assert code[0] == theta[0] and theta[0] / paper[0] > 2.5
    torch.testing.assert_close(code[3:], paper[3:])  # both interpolate every slow pair by s


def test_rope_rule_and_dynamic_ntk_inside_l_leave_the_model_unchanged() -> None:
    x = tokens(L)
    original = tiny_rope()(x)
    for rule in ("rope", "dynamic-ntk"):
        torch.testing.assert_close(stretch(tiny_rope(), rule, factor=S, train_len=L)(x), original)


def test_pi_is_the_model_at_positions_divided_by_s() -> None:
    x = tokens(4 * L)
    positions = torch.arange(4 * L, dtype=torch.float64) / S
    torch.testing.assert_close(
        stretch(tiny_rope(), "pi", factor=S, train_len=L)(x), tiny_rope()(x, positions), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("rule", STRETCH_RULES)
def test_the_stretched_layer_rotates_and_scales_by_the_attention_factor(rule: str) -> None:
    layer = StretchedRotary(DIM, base=BASE, layout="interleaved", rule=rule, factor=S, train_len=L)
    x = torch.randn(2, 1, 4 * L, DIM, dtype=torch.float64)
    _, factor = rule_frequencies(rule, DIM, base=BASE, factor=S, train_len=L, seq_len=4 * L)
    torch.testing.assert_close(layer(x).norm(dim=-1), factor * x.norm(dim=-1))
    # relative: shifting every position leaves the scores unchanged (dynamic NTK: same length)
    q, k = layer(x[:, :, :8]), layer(x[:, :, 8:16])
    shift = torch.arange(8) + 40
    q2, k2 = layer(x[:, :, :8], shift), layer(x[:, :, 8:16], shift)
    if rule != "dynamic-ntk":
        torch.testing.assert_close(q @ k.transpose(-1, -2), q2 @ k2.transpose(-1, -2))


def test_fine_tune_lowers_the_loss_and_keeps_the_rule() -> None:
    config = TrainConfig(task="lookback", position="rope", dim=32, num_heads=1, num_layers=1, batch_size=8)
    torch.manual_seed(0)
    model, losses, _ = fine_tune(build_model(config), config, FineTune("any", "pi", factor=2.0, steps=30,
                                                                       learning_rate=3e-3), seed=0)
    assert sum(losses[-5:]) < sum(losses[:5])
    assert all(isinstance(block.attention.rotary, StretchedRotary) for block in model.blocks)
    assert not model.training


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="rule"):
        rule_frequencies("xpos", DIM, base=BASE, factor=S, train_len=L)
    with pytest.raises(ValueError, match="seq_len"):
        rule_frequencies("dynamic-ntk", DIM, base=BASE, factor=S, train_len=L)
    with pytest.raises(ValueError, match="factor"):
        rule_frequencies("pi", DIM, base=BASE, factor=0.0, train_len=L)
    with pytest.raises(ValueError, match="position='rope'"):
        stretch(build_model(TrainConfig(task="lookback", position="alibi")), "pi", factor=S, train_len=L)
    with pytest.raises(TypeError, match="TinyCausalLM"):
        stretch(torch.nn.Linear(2, 2), "pi", factor=S, train_len=L)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rule"):
        FineTune("base", "dynamic-ntk")
    with pytest.raises(ValueError, match="steps"):
        FineTune("base", "pi", steps=0)


def test_a_stored_fine_tune_loads_stretched_and_goes_stale_with_its_base(tmp_path, monkeypatch) -> None:
    from dataclasses import replace

    from posenc import store
    from posenc.store import registry

    base = store.ModelSpec(
        "test-tiny-rope",
        TrainConfig(task="lookback", position="rope", dim=16, num_heads=1, num_layers=1, train_len=12, steps=40,
                    batch_size=8, schedule="constant", warmup_steps=5),
        seeds=(0,), stop=None, eval_scales=(1, 2),
    )
    tuned = store.ModelSpec("test-tiny-rope-pi-ft", base.config, seeds=(0,), stop=None, eval_scales=(1, 2),
                            finetune=FineTune(base.name, "pi", factor=2.0, steps=10))
    for spec in (base, tuned):
        monkeypatch.setitem(registry._REGISTRY, spec.name, spec)
    with pytest.raises(FileNotFoundError, match="make train ONLY=test-tiny-rope"):
        store.retrain(tuned.name, 0, directory=tmp_path)  # the base must be stored first
    store.retrain(base.name, 0, directory=tmp_path, progress=False)
    model, info = store.retrain(tuned.name, 0, directory=tmp_path)
    assert info["steps_run"] == 10 and info["finetune"]["rule"] == "pi"
    loaded = store.load(tuned.name, 0, directory=tmp_path)
    assert all(isinstance(block.attention.rotary, StretchedRotary) for block in loaded.blocks)
    x = tokens(24)
    torch.testing.assert_close(loaded(x), model(x))
    assert store.stale("test-tiny-*", directory=tmp_path) == []
    monkeypatch.setitem(registry._REGISTRY, base.name, replace(base, config=replace(base.config, learning_rate=1e-3)))
    assert "test-tiny-rope-pi-ft seed 0: code or config changed since it was trained" in store.stale(
        "test-tiny-*", directory=tmp_path)
    with pytest.raises(ValueError, match="stop=None"):
        store.ModelSpec("bad", base.config, finetune=FineTune(base.name, "pi"))


def test_fine_tune_checkpoints_see_the_model_before_and_during_training() -> None:
    config = TrainConfig(task="lookback", position="rope", dim=32, num_heads=1, num_layers=1, batch_size=8)
    x = tokens(3 * config.train_len)
    torch.manual_seed(0)
    zero_shot = stretch(build_model(config), "pi", factor=2.0, train_len=config.train_len).eval()(x)
    seen: dict[int, torch.Tensor] = {}

    def record(step: int, model: torch.nn.Module) -> None:
        assert not model.training
        seen[step] = model(x).detach()

    torch.manual_seed(0)
    plan = FineTune("any", "pi", factor=2.0, steps=12, learning_rate=3e-3, checkpoints=(0, 5, 12))
    model, losses, _ = fine_tune(build_model(config), config, plan, seed=0, on_checkpoint=record)
    assert sorted(seen) == [0, 5, 12] and len(losses) == 12
    torch.testing.assert_close(seen[0], zero_shot)  # step 0: the rule zero-shot, no update yet
    torch.testing.assert_close(seen[12], model(x))  # the last checkpoint is the returned model
    assert not torch.allclose(seen[5], seen[0]) and not torch.allclose(seen[5], seen[12])
    torch.manual_seed(0)
    unwatched, plain_losses, _ = fine_tune(build_model(config), config, replace(plan, checkpoints=()), seed=0)
    assert plain_losses == losses  # scoring at checkpoints changes nothing that is trained
    for value, other in zip(model.state_dict().values(), unwatched.state_dict().values(), strict=True):
        assert torch.equal(value, other)
    for bad in ((5, 0), (0, 13), (-1,)):
        with pytest.raises(ValueError, match="checkpoints"):
            FineTune("base", "pi", steps=12, checkpoints=bad)
