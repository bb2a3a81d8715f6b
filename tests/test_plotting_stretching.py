"""Chapter 9's figures (posenc.plotting.stretching: one style per rule, accuracy by band, loss by
position) and the scoring helpers of its experiments (posenc.stretch_eval)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.colors import to_hex

from posenc import store
from posenc.experiments import IGNORE, make_batch, mean_over_bands
from posenc.plotting.extrapolation import accuracy_panels
from posenc.plotting.stretching import RULE_STYLES, band_accuracy_panels, loss_by_position_panels
from posenc.stretch import rule_frequencies, stretch
from posenc.stretch_eval import (
    ZERO_SHOT_ROWS,
    doubling_windows,
    row_scores,
    scores_by_position,
    stretch_row,
    with_frequencies,
)


def test_every_row_and_fine_tune_of_chapter_9_has_its_own_colour_and_marker():
    rows = set(ZERO_SHOT_ROWS) | set(store.CH9_FINETUNE_RULES)
    assert rows <= set(RULE_STYLES)
    assert len({style["color"] for style in RULE_STYLES.values()}) == len(RULE_STYLES)
    assert len({style["marker"] for style in RULE_STYLES.values()}) == len(RULE_STYLES)
    with pytest.raises(TypeError):
        RULE_STYLES["pi"] = {"color": "red", "marker": "o"}  # type: ignore[index]


def _style(artist) -> tuple[str, str]:
    """(colour as hex, marker) of a Line2D."""
    return to_hex(artist.get_color()), artist.get_marker()


def test_every_chapter_9_figure_draws_a_rule_in_the_same_style():
    seeds = np.array([[0.2, 0.4], [0.6, 0.8]])
    fig1, bands = band_accuracy_panels(["< L", "L to L'"], {"recall": {"rope": seeds, "yarn": seeds}}, chance=0.1)
    fig2, steps = accuracy_panels((0, 10), {"recall": {"yarn": seeds, "rope": seeds}}, chance=0.1, xscale="linear",
                                  styles=RULE_STYLES)
    fig3, text = loss_by_position_panels({"yarn": np.ones((2, 4)), "rope": np.ones((2, 4))},
                                         {"p": ["yarn", "rope"]}, marks={}, width=1)
    for rule in ("rope", "yarn"):
        expected = (to_hex(RULE_STYLES[rule]["color"]), RULE_STYLES[rule]["marker"])
        marker_line = {container.get_label(): container.lines[0] for container in bands[0].containers}[rule]
        drawn = [_style(marker_line)] + [_style(line) for ax in (steps[0], text[0]) for line in ax.get_lines()
                                         if line.get_label() == rule]
        assert drawn == [expected] * 3, rule
    plt.close("all")
    with pytest.raises(ValueError, match="no entry"):
        accuracy_panels((0, 10), {"p": {"mystery": seeds}}, chance=0.1, styles=RULE_STYLES)


def test_band_panels_draw_unjoined_markers_at_the_mean_with_bars_from_worst_to_best_seed():
    rope = np.array([[1.0, 0.2], [0.8, 0.0], [0.9, 0.4]])  # 3 seeds, 2 bands
    pi = np.full((3, 2), 0.05)
    fig, axes = band_accuracy_panels(["< L", "L to L'"], {"recall": {"rope": rope, "pi": pi},
                                                          "lookback": {"pi": pi}}, chance=0.0625, columns=1)
    assert [ax.get_title() for ax in axes] == ["recall", "lookback"] and len(fig.axes) == 2
    recall = axes[0]
    drawn = {container.get_label(): container for container in recall.containers}
    markers = {rule: container.lines[0] for rule, container in drawn.items()}
    assert markers["rope"].get_linestyle() == "None"  # categorical bands: nothing joins them
    x, y = markers["rope"].get_data()
    np.testing.assert_allclose(y, [0.9, 0.2])
    np.testing.assert_allclose(x, [-0.2, 0.8])  # side by side within each band (bands at 0 and 1)
    np.testing.assert_allclose(markers["pi"].get_xdata(), [0.2, 1.2])
    (bars,) = drawn["rope"].lines[2]
    np.testing.assert_allclose([np.sort(segment[:, 1]) for segment in bars.get_segments()], [[0.8, 1.0], [0.0, 0.4]])
    assert [tick.get_text() for tick in recall.get_xticklabels()] == ["< L", "L to L'"]
    np.testing.assert_allclose(axes[1].containers[0].lines[0].get_xdata(), [0.2, 1.2])  # a rule keeps its slot
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["rope", "pi", "chance"]
    plt.close(fig)


def test_band_panels_reject_bad_input():
    with pytest.raises(ValueError, match="at least one band"):
        band_accuracy_panels([], {"p": {"rope": np.ones((1, 2))}}, chance=0.1)
    with pytest.raises(ValueError, match="at least one panel"):
        band_accuracy_panels(["a"], {}, chance=0.1)
    with pytest.raises(ValueError, match=r"\(seeds, 2\)"):
        band_accuracy_panels(["a", "b"], {"p": {"rope": np.ones((1, 3))}}, chance=0.1)
    with pytest.raises(ValueError, match="no entry"):
        band_accuracy_panels(["a"], {"p": {"mystery": np.ones((1, 1))}}, chance=0.1)
    with pytest.raises(TypeError, match="torch.Tensor or numpy.ndarray"):
        band_accuracy_panels(["a"], {"p": {"rope": [[1.0]]}}, chance=0.1)  # type: ignore[dict-item]


def test_panels_draw_binned_means_over_seeds_in_a_band_from_lowest_to_highest():
    rope = np.array([[1.0, 3.0, 5.0, 7.0], [3.0, 5.0, 7.0, 9.0]])  # 2 seeds, 4 positions
    losses = {"rope": rope, "pi": np.full((2, 4), 2.0), "yarn": np.ones((2, 4))}
    fig, axes = loss_by_position_panels(losses, {"interpolation": ["rope", "pi"], "by parts": ["rope", "yarn"]},
                                        marks={"L": 2}, width=2)
    assert [ax.get_title() for ax in axes] == ["interpolation", "by parts"]
    curves = {line.get_label(): line for line in axes[0].get_lines() if not line.get_label().startswith("_")}
    np.testing.assert_allclose(curves["rope"].get_xydata(), [[0.5, 3.0], [2.5, 7.0]])  # bins of 2, then seeds
    band = axes[0].collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(2.0) and band[:, 1].max() == pytest.approx(8.0)
    colour = [{line.get_label(): line.get_color() for line in ax.get_lines()} for ax in axes]
    assert colour[0]["rope"] == colour[1]["rope"] != colour[1]["yarn"]
    dashed = [line.get_xdata()[0] for line in axes[1].get_lines() if line.get_linestyle() == "--"]
    assert dashed == [2] and axes[0].get_xscale() == "log"
    plt.close(fig)


def test_panels_reject_bad_input():
    with pytest.raises(ValueError, match="not be empty"):
        loss_by_position_panels({"rope": np.ones((1, 4))}, {}, marks={})
    with pytest.raises(ValueError, match="without losses"):
        loss_by_position_panels({"rope": np.ones((1, 4))}, {"p": ["pi"]}, marks={}, width=2)
    with pytest.raises(ValueError, match="multiple of width"):
        loss_by_position_panels({"rope": np.ones((1, 5))}, {"p": ["rope"]}, marks={}, width=2)
    with pytest.raises(TypeError, match="torch.Tensor or numpy.ndarray"):
        loss_by_position_panels({"rope": [[1.0]]}, {"p": ["rope"]}, marks={}, width=1)  # type: ignore[dict-item]


@pytest.fixture(scope="module")
def recall_batch():
    config = store.spec("ch9-recall-rope").config
    tokens, labels = make_batch(config, 8, 128, generator=torch.Generator().manual_seed(0))
    return config, tokens, labels


def test_scores_match_an_independent_per_sequence_computation(recall_batch):
    config, tokens, labels = recall_batch
    model = store.load("ch9-recall-rope", 0)
    accuracy, loss = scores_by_position(model, tokens, labels)
    with torch.no_grad():
        logits = torch.stack([model(tokens[i:i + 1])[0] for i in range(len(tokens))])
    scored = labels != IGNORE
    expected = -logits.log_softmax(-1).gather(-1, labels.clamp(min=0)[..., None])[..., 0]
    position = 40
    # float32 logits: the loss of a confident model (about 1e-3 nats) agrees to 1e-6 absolute
    assert loss[position].item() == pytest.approx(expected[:, position].double().mean().item(), rel=1e-5, abs=1e-6)
    assert accuracy[position] == (logits[:, position].argmax(-1) == labels[:, position]).double().mean()
    assert torch.isnan(loss[~scored.any(0)]).all() and not torch.isnan(loss[scored.any(0)]).any()


def test_window_ends_change_nothing_for_static_rules_but_rescale_dynamic_ntk(recall_batch):
    config, tokens, labels = recall_batch
    ends = (32, 64, 128)
    static = stretch(store.load("ch9-recall-rope", 0), "yarn", factor=4.0, train_len=32)
    one, banded = scores_by_position(static, tokens, labels)[1], scores_by_position(
        static, tokens, labels, window_ends=ends)[1]
    torch.testing.assert_close(one, banded, rtol=1e-5, atol=1e-6, equal_nan=True)
    dynamic = stretch(store.load("ch9-recall-rope", 0), "dynamic-ntk", factor=4.0, train_len=32)
    one, banded = scores_by_position(dynamic, tokens, labels)[1], scores_by_position(
        dynamic, tokens, labels, window_ends=ends)[1]
    plain = scores_by_position(store.load("ch9-recall-rope", 0), tokens, labels)[1]
    torch.testing.assert_close(banded[:32], plain[:32], equal_nan=True)  # n <= L: the trained frequencies
    assert not torch.allclose(one[4:32], plain[4:32])  # one window: every position stretched for n = 128
    with pytest.raises(ValueError, match="increase and end"):
        scores_by_position(dynamic, tokens, labels, window_ends=(64, 32, 128))
    with pytest.raises(ValueError, match="increase and end"):
        scores_by_position(dynamic, tokens, labels, window_ends=(32, 64))
    with pytest.raises(ValueError, match=r"\(B, n\) alike"):
        scores_by_position(dynamic, tokens, labels[:, :-1])


def test_with_frequencies_is_the_rule_without_its_attention_factor(recall_batch):
    config, tokens, labels = recall_batch
    frequencies, factor = rule_frequencies("pi", 32, base=1e4, factor=4.0, train_len=32)
    assert factor == 1.0  # PI has no attention factor, so both ways must agree
    ours = with_frequencies(store.load("ch9-recall-rope", 1), frequencies)
    theirs = stretch(store.load("ch9-recall-rope", 1), "pi", factor=4.0, train_len=32)
    with torch.no_grad():
        torch.testing.assert_close(ours(tokens), theirs(tokens))
    with pytest.raises(TypeError, match="TinyCausalLM"):
        with_frequencies(torch.nn.Linear(2, 2), frequencies)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="position='rope'"):
        with_frequencies(store.load("ch8-recall-alibi", 0), frequencies)


def test_mean_over_bands_ignore_unscored_positions():
    values = torch.tensor([[float("nan"), 1.0, 3.0, 5.0], [2.0, 2.0, 2.0, 2.0]])
    torch.testing.assert_close(mean_over_bands(values, [(0, 2), (2, 4)]), torch.tensor([[1.0, 4.0], [2.0, 2.0]]))
    for bad in ([], [(2, 2)], [(0, 5)]):
        with pytest.raises(ValueError):
            mean_over_bands(values, bad)


def test_doubling_windows_run_from_the_training_length_to_the_input_length():
    assert doubling_windows(32, 32) == [32]
    assert doubling_windows(64, 512) == [64, 128, 256, 512]
    for bad in (48, 96, 16):
        with pytest.raises(ValueError):
            doubling_windows(32, bad)


def test_rows_are_the_rules_with_the_stated_factor_and_temperature(recall_batch):
    config, tokens, labels = recall_batch
    with torch.no_grad():
        def logits(row=None, rule=None, factor=4.0):
            model = store.load("ch9-recall-rope", 2)
            if row is not None:
                return stretch_row(model, row, factor=4.0, train_len=32)(tokens)
            return stretch(model, rule, factor=factor, train_len=32)(tokens)
        torch.testing.assert_close(logits(row="dynamic-ntk, factor 1"), logits(rule="dynamic-ntk", factor=1.0))
        torch.testing.assert_close(logits(row="dynamic-ntk, factor s"), logits(rule="dynamic-ntk"))
        torch.testing.assert_close(logits(row="yarn"), logits(rule="yarn"))
        untempered = logits(row="yarn, no temperature")
    assert not torch.allclose(untempered, logits(rule="yarn"), atol=1e-3)
    assert set(ZERO_SHOT_ROWS) >= {"rope", "pi", "ntk", "yarn-paper", "llama3"}
    with pytest.raises(ValueError, match="row must be one of"):
        stretch_row(store.load("ch9-recall-rope", 2), "linear", factor=4.0, train_len=32)


def test_row_scores_window_dynamic_ntk_only(recall_batch):
    config, tokens, labels = recall_batch
    dynamic = row_scores(store.load("ch9-recall-rope", 0), "dynamic-ntk, factor s", tokens, labels,
                         factor=4.0, train_len=32)[1]
    by_hand = scores_by_position(stretch(store.load("ch9-recall-rope", 0), "dynamic-ntk", factor=4.0, train_len=32),
                                 tokens, labels, window_ends=[32, 64, 128])[1]
    torch.testing.assert_close(dynamic, by_hand, equal_nan=True)
    ntk = row_scores(store.load("ch9-recall-rope", 0), "ntk", tokens, labels, factor=4.0, train_len=32)[1]
    single = scores_by_position(stretch(store.load("ch9-recall-rope", 0), "ntk", factor=4.0, train_len=32),
                                tokens, labels)[1]
    torch.testing.assert_close(ntk, single, equal_nan=True)
