"""The figures of Part V (chapters 8–9: trained models beyond their training length): accuracy by
evaluated length, training-loss curves, and loss by position, of one seed or over seeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Matrix, _as_matrix, _as_vector, _finish_panels, _panel_grid

__all__ = ["accuracy_panels", "loss_by_position", "loss_by_position_over_seeds", "loss_curves"]


# Chapter 9 (stretching trained RoPE models): accuracy by evaluated length, one panel per task and
# regime, one curve per rule with its spread over seeds.


def accuracy_panels(
    lengths: Sequence[float],
    panels: Mapping[str, Mapping[str, Matrix]],
    *,
    chance: float,
    tick_labels: Sequence[str] | None = None,
    marks: Mapping[str, float] | None = None,
    columns: int | None = None,
    ylabel: str = "accuracy",
    xlabel: str = "evaluated length",
    xscale: str = "log2",
    styles: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[Figure, np.ndarray]:
    """Accuracy against the evaluated length: a panel per entry of ``panels``, a curve per series.

    Each curve is the mean over seeds, in a band from the worst seed to the best.

    Args:
        lengths: the ``N`` evaluated lengths (or any increasing ``x``, e.g. fine-tune steps).
        panels: panel title -> series name -> ``(seeds, N)`` accuracies.
        chance: the chance level, drawn as a dotted line in every panel.
        tick_labels: ``N`` labels of the length ticks (default: the lengths).
        marks: label -> length, each drawn as a dashed vertical line (e.g. ``{"L": 32}``).
        columns: panels per row (default: all in one row).
        ylabel, xlabel: the axis labels.
        xscale: ``"log2"`` (lengths) or ``"linear"`` (e.g. steps, which may start at 0).
        styles: series name -> its ``{"color": ..., "marker": ...}`` (e.g. chapter 9's
            :data:`~posenc.plotting.stretching.RULE_STYLES`, so that a rule looks the same in
            every figure); default: the colour cycle in order of first appearance, round markers.

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels, in the order of ``panels``. A
        series keeps its colour in every panel, and the figure has one legend below the panels,
        with every series of any panel.

    Raises:
        ValueError: if ``panels`` is empty, an accuracy table is not ``(seeds, N)``, the tick
            labels are not ``N``, ``xscale`` is unknown, or ``styles`` lacks a series.
    """
    if not panels:
        raise ValueError("panels must name at least one panel")
    if xscale not in ("log2", "linear"):
        raise ValueError(f"xscale must be 'log2' or 'linear', got {xscale!r}")
    x = _as_vector("lengths", lengths)
    if tick_labels is not None and len(tick_labels) != x.size:
        raise ValueError(f"tick_labels must have one label per length ({x.size}), got {len(tick_labels)}")
    fig, grid, axes = _panel_grid(len(panels), columns)
    # one colour per series name in every panel, and one legend entry for it
    names = list(dict.fromkeys(name for curves in panels.values() for name in curves))
    if styles is None:
        cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        styles = {name: {"color": cycle[index % len(cycle)], "marker": "o"} for index, name in enumerate(names)}
    unstyled = [name for name in names if name not in styles]
    if unstyled:
        raise ValueError(f"styles has no entry for the series {unstyled}")
    handles: dict[str, Any] = {}
    for ax, (title, curves) in zip(axes, panels.items(), strict=False):
        for name, table in curves.items():
            values = _as_matrix(f"accuracy of {name!r}", table)
            if values.shape[1] != x.size:
                raise ValueError(f"accuracy of {name!r} must be (seeds, {x.size}), got {values.shape}")
            style = {"marker": "o", **styles[name]}
            (handles[name],) = ax.plot(x, values.mean(0), markersize=3, label=name, **style)
            ax.fill_between(x, values.min(0), values.max(0), color=style["color"], alpha=0.2, linewidth=0)
        chance_line = ax.axhline(chance, color="gray", linestyle=":", linewidth=1, label="chance")
        for text, length in (marks or {}).items():
            ax.axvline(length, color="black", linewidth=0.8, linestyle="--")
            ax.annotate(text, (length, 1.02), ha="center", fontsize=8, annotation_clip=False)
        if xscale == "log2":
            ax.set_xscale("log", base=2)
        ax.set_xticks(x, list(tick_labels) if tick_labels is not None else [f"{n:g}" for n in x])
        ax.set_ylim(0, 1.05)
        ax.set(title=title, xlabel=xlabel)
    handles["chance"] = chance_line
    return fig, _finish_panels(fig, grid, len(panels), ylabel, handles, legend_columns=8)


def loss_curves(
    curves: dict[str, list[Sequence[float]]],
    *,
    every: int,
    converged: dict[str, list[bool]] | None = None,
    ncols: int = 4,
    title: str | None = None,
) -> tuple[Figure, np.ndarray]:
    """Small multiples of training-loss curves: one panel per model family, one line per seed.

    Args:
        curves: ``{panel title: [loss curve of each seed]}``; point ``i`` of a curve is the mean
            loss of steps ``i * every + 1 .. (i + 1) * every``.
        every: steps per point (>= 1).
        converged: optional ``{panel title: [converged?]}``; a seed that did not converge is
            drawn dashed and counted in the panel's title.
        ncols: panels per row.
        title: optional title of the figure.

    Returns:
        ``(fig, axes)`` with ``axes`` a 1-D array of the panels (log-scale loss).

    Raises:
        ValueError: if ``curves`` is empty or ``converged`` does not match it.
    """
    if not curves:
        raise ValueError("curves must not be empty")
    every = check_int("every", every, minimum=1)
    ncols = check_int("ncols", min(ncols, len(curves)), minimum=1)
    nrows = -(-len(curves) // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.1 * nrows), sharex=True, sharey=True,
                             squeeze=False, layout="constrained")
    axes = grid.ravel()
    for ax, (name, seeds) in zip(axes, curves.items(), strict=False):
        flags = converged.get(name, [True] * len(seeds)) if converged is not None else [True] * len(seeds)
        if len(flags) != len(seeds):
            raise ValueError(f"converged[{name!r}] needs one flag per seed ({len(seeds)})")
        for curve, done in zip(seeds, flags, strict=True):
            steps = every * (np.arange(len(curve)) + 1)
            ax.plot(steps, curve, linewidth=1, linestyle="-" if done else "--")
        failed = flags.count(False)
        ax.set_title(name + (f" ({failed} not converged)" if failed else ""), fontsize=9)
        ax.set_yscale("log")
    for ax in axes[len(curves):]:
        ax.set_visible(False)
    for ax in grid[-1]:
        ax.set_xlabel("step")
    for ax in grid[:, 0]:
        ax.set_ylabel("training loss")
    if title:
        fig.suptitle(title)
    return fig, axes


def loss_by_position(
    curves: dict[str, tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]],
    *,
    floor: float | None = None,
    train_len: int,
    ylabel: str = "loss at position t (nats)",
) -> tuple[Figure, Axes]:
    """A metric along the positions of long sequences, one line (and band) per model family.

    Args:
        curves: ``{name: (positions, mean, low, high)}``, equal lengths within each entry.
        floor: the best achievable value, drawn dashed (e.g. the entropy of a language); none
            is drawn if ``None`` (real text has no known floor).
        train_len: the training length, drawn as a dotted vertical line.
        ylabel: label of the y axis.

    Returns:
        ``(fig, ax)``; the x axis (positions) is logarithmic, base 2.

    Raises:
        ValueError: if ``curves`` is empty or an entry's sequences differ in length.
    """
    if not curves:
        raise ValueError("curves must not be empty")
    train_len = check_int("train_len", train_len, minimum=1)
    fig, ax = plt.subplots(figsize=(9, 3.8), layout="constrained")
    for name, (positions, mean, low, high) in curves.items():
        if not len(positions) == len(mean) == len(low) == len(high):
            raise ValueError(f"the sequences of {name!r} must have equal lengths")
        (line,) = ax.plot(positions, mean, label=name)
        ax.fill_between(positions, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
    if floor is not None:
        ax.axhline(floor, color="black", linestyle="--", linewidth=1, label="best possible")
    ax.axvline(train_len, color="gray", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set(xlabel=f"position t (dotted: training length L = {train_len})", ylabel=ylabel)
    ax.legend(fontsize=8, ncol=2)
    return fig, ax


def loss_by_position_over_seeds(
    losses: Mapping[str, Matrix], *, train_len: int, width: int = 8, ylabel: str = "loss at position t (nats)"
) -> tuple[Figure, Axes]:
    """Loss by position of several seeds per family: the mean over seeds and the band from the
    lowest to the highest seed, each averaged over consecutive bins of ``width`` positions.

    Args:
        losses: ``{name: (seeds, T) loss at positions 0 .. T - 1}``; ``T`` must be a multiple
            of ``width``. Bin ``b`` covers positions ``b * width .. (b + 1) * width - 1`` and is
            drawn at its centre.
        train_len: the training length, drawn as a dotted vertical line.
        width: positions per bin (>= 1).
        ylabel: label of the y axis.

    Returns:
        ``(fig, ax)`` as :func:`loss_by_position` (log2 position axis, no floor).

    Raises:
        TypeError: if a table is not a tensor or array.
        ValueError: if ``losses`` is empty, a table is not 2-D or its length is not a multiple
            of ``width``.
    """
    if not losses:
        raise ValueError("losses must not be empty")
    width = check_int("width", width, minimum=1)
    curves: dict[str, tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]] = {}
    for name, table in losses.items():
        values = _as_matrix(f"losses[{name!r}]", table).astype(float)
        if values.shape[1] % width:
            raise ValueError(f"losses[{name!r}] has {values.shape[1]} positions, not a multiple of width={width}")
        binned = values.reshape(values.shape[0], -1, width).mean(-1)  # (seeds, bins)
        centres = width * np.arange(binned.shape[1]) + (width - 1) / 2
        curves[name] = (list(centres), list(binned.mean(0)), list(binned.min(0)), list(binned.max(0)))
    return loss_by_position(curves, train_len=train_len, ylabel=ylabel)
