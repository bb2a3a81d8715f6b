"""Chapter 9's text experiment drawn as loss by position of stretched models, one panel per group
of rules, each rule the mean over seeds in a band from the lowest to the highest seed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Matrix, _as_matrix

__all__ = ["loss_by_position_panels"]


def loss_by_position_panels(
    losses: Mapping[str, Matrix],
    panels: Mapping[str, Sequence[str]],
    *,
    marks: Mapping[str, float],
    width: int = 8,
    ylabel: str = "loss (nats)",
) -> tuple[Figure, np.ndarray]:
    """Loss against the position, a panel per group of rules, on a log2 position axis.

    Each curve is averaged over consecutive bins of ``width`` positions, then over the seeds; its
    band runs from the lowest to the highest seed. A rule keeps its colour in every panel.

    Args:
        losses: ``{rule: (seeds, T) loss at positions 0 .. T - 1}``; ``T`` a multiple of ``width``.
            Bin ``b`` covers positions ``b * width .. (b + 1) * width - 1`` and is drawn at its centre.
        panels: ``{panel title: rules drawn in it}``, each rule a key of ``losses``.
        marks: ``{label: position}``, each drawn as a dashed vertical line labelled at its top
            right (e.g. ``{"L": 64, "L'": 256}``).
        width: positions per bin (>= 1).
        ylabel: label of the y axis of the first panel.

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels, in the order of ``panels``.

    Raises:
        TypeError: if a table is not a tensor or array.
        ValueError: if ``panels`` is empty, names a rule missing from ``losses``, or a table is
            not 2-D or its length not a multiple of ``width``.
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
    colours = {name: f"C{index}" for index, name in enumerate(binned)}
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), sharey=True,
                             layout="constrained", squeeze=False)
    for ax, (title, rules) in zip(axes[0], panels.items(), strict=True):
        for rule in rules:
            values = binned[rule]
            centres = width * np.arange(values.shape[1]) + (width - 1) / 2
            ax.plot(centres, values.mean(0), color=colours[rule], label=rule)
            ax.fill_between(centres, values.min(0), values.max(0), color=colours[rule], alpha=0.15, linewidth=0)
        for label, position in marks.items():
            ax.axvline(position, color="black", linestyle="--", linewidth=1)
            ax.annotate(label, (position, 0.98), xycoords=("data", "axes fraction"), xytext=(3, 0),
                        textcoords="offset points", ha="left", va="top")
        ax.set_xscale("log", base=2)
        ax.set(title=title, xlabel="position t")
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel(ylabel)
    return fig, axes[0]
