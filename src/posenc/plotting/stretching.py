"""Chapter 9's figures of stretched trained models: one colour and marker per stretch rule
(:data:`RULE_STYLES`), zero-shot accuracy by band of positions, and loss by position on text.

The fine-tune figure is :func:`~posenc.plotting.extrapolation.accuracy_panels` drawn with
``styles=RULE_STYLES``, so that a rule looks the same in every figure of the chapter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Matrix, _as_matrix, _finish_panels, _panel_grid

__all__ = ["RULE_STYLES", "band_accuracy_panels", "loss_by_position_panels"]

#: The colour and marker of every row of chapter 9 (a stretch rule, or ``rope``: plain RoPE, the
#: control of the fine-tunes), the same in every figure of the chapter: ``rope`` in black, ``pi`` and
#: ``yarn-paper`` (nearly PI in the chapter's miniature) in orange and brown, the NTK rules in green
#: and blues, the by-parts rules in red, pink and olive.
#:
#: :meta hide-value:
RULE_STYLES: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "rope": MappingProxyType({"color": "black", "marker": "o"}),
    "pi": MappingProxyType({"color": "#ff7f0e", "marker": "s"}),
    "yarn-paper": MappingProxyType({"color": "#8c564b", "marker": "P"}),
    "ntk": MappingProxyType({"color": "#2ca02c", "marker": "^"}),
    "dynamic-ntk, factor 1": MappingProxyType({"color": "#17becf", "marker": "v"}),
    "dynamic-ntk, factor s": MappingProxyType({"color": "#1f77b4", "marker": "<"}),
    "yarn": MappingProxyType({"color": "#d62728", "marker": "D"}),
    "yarn, no temperature": MappingProxyType({"color": "#e377c2", "marker": "d"}),
    "llama3": MappingProxyType({"color": "#bcbd22", "marker": "X"}),
})


def _styles_of(names: Sequence[str], styles: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """The style of every name (``styles`` or, if None, :data:`RULE_STYLES`), or a ValueError naming
    the ones it lacks."""
    styles = RULE_STYLES if styles is None else styles
    missing = [name for name in names if name not in styles]
    if missing:
        raise ValueError(f"styles has no entry for {missing}")
    return {name: dict(styles[name]) for name in names}


def band_accuracy_panels(
    bands: Sequence[str],
    panels: Mapping[str, Mapping[str, Matrix]],
    *,
    chance: float,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
    columns: int | None = None,
    ylabel: str = "accuracy",
    xlabel: str = "band of positions",
) -> tuple[Figure, np.ndarray]:
    """Accuracy in categorical bands of positions: per band, one marker per series side by side.

    The bands are categories (e.g. inside ``L``, from ``L`` to ``L'``), so nothing joins them:
    each series is a marker at its mean over seeds with an error bar from the worst seed to the
    best, offset within its band in the order of first appearance.

    Args:
        bands: the ``N`` band labels, in order.
        panels: panel title -> series name -> ``(seeds, N)`` accuracies.
        chance: the chance level, drawn as a dotted line in every panel.
        styles: series name -> ``{"color": ..., "marker": ...}`` (default: :data:`RULE_STYLES`).
        columns: panels per row (default: all in one row).
        ylabel, xlabel: the axis labels.

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels, in the order of ``panels``; the
        figure has one legend below the panels, with every series of any panel and chance.

    Raises:
        TypeError: if a table is not a tensor or array.
        ValueError: if ``bands`` or ``panels`` is empty, a table is not ``(seeds, N)``, or
            ``styles`` lacks a series.
    """
    if not bands:
        raise ValueError("bands must name at least one band")
    if not panels:
        raise ValueError("panels must name at least one panel")
    names = list(dict.fromkeys(name for series in panels.values() for name in series))
    style = _styles_of(names, styles)
    fig, grid, axes = _panel_grid(len(panels), columns)
    width = 0.8 / len(names)  # of one series' slot within a band
    handles: dict[str, Any] = {}
    for ax, (title, series) in zip(axes, panels.items(), strict=False):
        for name, table in series.items():
            values = _as_matrix(f"accuracy of {name!r}", table).astype(float)
            if values.shape[1] != len(bands):
                raise ValueError(f"accuracy of {name!r} must be (seeds, {len(bands)}), got {values.shape}")
            x = np.arange(len(bands)) + (names.index(name) - (len(names) - 1) / 2) * width
            mean = values.mean(0)
            # clipped at 0: the mean of equal values may round a hair outside them
            below, above = np.clip(mean - values.min(0), 0, None), np.clip(values.max(0) - mean, 0, None)
            handles[name] = ax.errorbar(x, mean, yerr=[below, above],
                                        linestyle="none", markersize=4, capsize=2, elinewidth=1,
                                        label=name, **style[name])
        chance_line = ax.axhline(chance, color="gray", linestyle=":", linewidth=1, label="chance")
        ax.set_xticks(np.arange(len(bands)), list(bands))
        ax.set_xlim(-0.5, len(bands) - 0.5)
        ax.set_ylim(0, 1.05)
        ax.set(title=title, xlabel=xlabel)
    handles["chance"] = chance_line
    return fig, _finish_panels(fig, grid, len(panels), ylabel, handles, legend_columns=5)


def loss_by_position_panels(
    losses: Mapping[str, Matrix],
    panels: Mapping[str, Sequence[str]],
    *,
    marks: Mapping[str, float],
    width: int = 8,
    ylabel: str = "loss (nats)",
    styles: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[Figure, np.ndarray]:
    """Loss against the position, a panel per group of rules, on a log2 position axis.

    Each curve is averaged over consecutive bins of ``width`` positions, then over the seeds; its
    band runs from the lowest to the highest seed. A rule has its colour and marker of ``styles``
    in every panel (markers spaced evenly along the axis, not at every bin).

    Args:
        losses: ``{rule: (seeds, T) loss at positions 0 .. T - 1}``; ``T`` a multiple of ``width``.
            Bin ``b`` covers positions ``b * width .. (b + 1) * width - 1`` and is drawn at its centre.
        panels: ``{panel title: rules drawn in it}``, each rule a key of ``losses``.
        marks: ``{label: position}``, each drawn as a dashed vertical line labelled at its top
            right (e.g. ``{"L": 64, "L'": 256}``).
        width: positions per bin (>= 1).
        ylabel: label of the y axis of the first panel.
        styles: rule -> ``{"color": ..., "marker": ...}`` (default: :data:`RULE_STYLES`).

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels, in the order of ``panels``.

    Raises:
        TypeError: if a table is not a tensor or array.
        ValueError: if ``panels`` is empty, names a rule missing from ``losses`` or from
            ``styles``, or a table is not 2-D or its length not a multiple of ``width``.
    """
    width = check_int("width", width, minimum=1)
    if not panels:
        raise ValueError("panels must not be empty")
    binned: dict[str, np.ndarray] = {}
    for name, table in losses.items():
        values = _as_matrix(f"losses[{name!r}]", table).astype(float)
        if values.shape[1] % width:
            raise ValueError(f"losses[{name!r}] has {values.shape[1]} positions, not a multiple of width={width}")
        binned[name] = values.reshape(values.shape[0], -1, width).mean(-1)  # (seeds, bins)
    missing = sorted({rule for rules in panels.values() for rule in rules} - set(binned))
    if missing:
        raise ValueError(f"panels name rules without losses: {missing}")
    style = _styles_of(list(dict.fromkeys(rule for rules in panels.values() for rule in rules)), styles)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), sharey=True,
                             layout="constrained", squeeze=False)
    for ax, (title, rules) in zip(axes[0], panels.items(), strict=True):
        for rule in rules:
            values = binned[rule]
            centres = width * np.arange(values.shape[1]) + (width - 1) / 2
            ax.plot(centres, values.mean(0), label=rule, markersize=4, markevery=0.1, **style[rule])
            ax.fill_between(centres, values.min(0), values.max(0), color=style[rule]["color"], alpha=0.15,
                            linewidth=0)
        for label, position in marks.items():
            ax.axvline(position, color="black", linestyle="--", linewidth=1)
            ax.annotate(label, (position, 0.98), xycoords=("data", "axes fraction"), xytext=(3, 0),
                        textcoords="offset points", ha="left", va="top")
        ax.set_xscale("log", base=2)
        ax.set(title=title, xlabel="position t")
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel(ylabel)
    return fig, axes[0]
