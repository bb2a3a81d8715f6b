"""Grids of line panels: several curves per axes, with reference lines and log scales, described as
data (:class:`Curve`, :class:`Reference`, :class:`LinePanel`) and drawn by :func:`line_panels`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Vector, _as_vector

__all__ = ["Curve", "LinePanel", "Reference", "line_panels"]


_SCALES = ("linear", "log", "log2", "symlog")


@dataclass(frozen=True)
class Curve:
    """One line of a :class:`LinePanel`: ``y`` against ``x``, drawn with matplotlib's ``style``.

    ``style`` is passed to ``Axes.plot`` (``color``, ``linewidth``, ``linestyle``, ``marker``,
    ``drawstyle="steps-post"`` for a step curve, ...); ``label`` names the curve in the legend.
    """

    x: Vector
    y: Vector
    label: str | None = None
    style: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reference:
    """A reference line across a panel: horizontal at ``y = value`` or vertical at ``x = value``.

    ``text`` is written next to the line (at the left end of a horizontal one, at the top of a
    vertical one); ``label`` names it in the legend instead.
    """

    value: float
    axis: str = "y"
    text: str | None = None
    label: str | None = None
    style: Mapping[str, Any] = field(default_factory=lambda: {"color": "0.5", "linestyle": "--", "linewidth": 1})


@dataclass(frozen=True)
class LinePanel:
    """One axes of :func:`line_panels`: its curves, reference lines, labels and scales.

    ``xscale``/``yscale`` are ``"linear"``, ``"log"`` (base 10), ``"log2"`` or ``"symlog"``;
    ``legend`` is the legend's location (``None``: no legend; it is drawn only if something
    has a label); ``title_size`` and ``legend_size`` are font sizes (default: the book style's
    title size, 8 points for the legend).
    """

    curves: Sequence[Curve]
    title: str | None = None
    xlabel: str = ""
    ylabel: str = ""
    xscale: str = "linear"
    yscale: str = "linear"
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    references: Sequence[Reference] = ()
    legend: str | None = "best"
    title_size: float | None = None
    legend_size: float = 8


def _set_scale(ax: Axes, axis: str, scale: str) -> None:
    if scale not in _SCALES:
        raise ValueError(f"{axis}scale must be one of {_SCALES}, got {scale!r}")
    setter = getattr(ax, f"set_{axis}scale")
    setter("log", base=2) if scale == "log2" else setter(scale)


def _draw_panel(ax: Axes, panel: LinePanel, index: int) -> None:
    if not isinstance(panel, LinePanel):
        raise TypeError(f"panels[{index}] must be a LinePanel, got {type(panel).__name__}")
    for number, curve in enumerate(panel.curves):
        x = _as_vector(f"panels[{index}].curves[{number}].x", curve.x)
        y = _as_vector(f"panels[{index}].curves[{number}].y", curve.y)
        if x.shape != y.shape:
            raise ValueError(f"panels[{index}].curves[{number}]: x and y differ in length, {len(x)} and {len(y)}")
        ax.plot(x, y, label=curve.label, **curve.style)
    for reference in panel.references:
        if reference.axis not in ("x", "y"):
            raise ValueError(f"a Reference's axis must be 'x' or 'y', got {reference.axis!r}")
        line = ax.axhline if reference.axis == "y" else ax.axvline
        line(reference.value, label=reference.label, **reference.style)
    _set_scale(ax, "x", panel.xscale)
    _set_scale(ax, "y", panel.yscale)
    ax.set(title=panel.title, xlabel=panel.xlabel, ylabel=panel.ylabel)
    if panel.xlim is not None:
        ax.set_xlim(panel.xlim)
    if panel.ylim is not None:
        ax.set_ylim(panel.ylim)
    for reference in panel.references:  # after the limits, so the text sits inside the axes
        if reference.text is not None:
            if reference.axis == "y":
                ax.text(ax.get_xlim()[0], reference.value, reference.text, va="bottom", color="0.3")
            else:
                ax.text(reference.value, ax.get_ylim()[1], reference.text, ha="right", va="top", color="0.3")
    if panel.title_size is not None:
        ax.title.set_fontsize(panel.title_size)
    if panel.legend is not None and ax.get_legend_handles_labels()[1]:
        ax.legend(loc=cast(Any, panel.legend), fontsize=panel.legend_size)


def line_panels(
    panels: Sequence[LinePanel],
    *,
    ncols: int | None = None,
    figsize: tuple[float, float] | None = None,
    suptitle: str | None = None,
) -> Figure:
    """Draw a grid of panels of curves, e.g. scores against the key position for several heads.

    Args:
        panels: the :class:`LinePanel` of every axes, row by row.
        ncols: number of columns of the grid (default: all in one row).
        figsize: figure size (default: 3.7 inches per column, 3.2 per row).
        suptitle: title of the whole figure.

    Returns:
        The figure; ``fig.axes[k]`` is panel ``k`` (unused cells of the grid are hidden).

    Raises:
        ValueError: if ``panels`` is empty, a curve's ``x`` and ``y`` differ in length or are
            not 1-D, a scale is unknown, or a reference line's axis is not ``"x"``/``"y"``.
        TypeError: if a panel is not a :class:`LinePanel` or a curve's data is not numeric.
    """
    panels = list(panels)
    if not panels:
        raise ValueError("panels must contain at least one LinePanel")
    ncols = len(panels) if ncols is None else check_int("ncols", ncols, minimum=1)
    nrows = -(-len(panels) // ncols)
    figsize = figsize or (3.7 * ncols, 3.2 * nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained")
    for index, ax in enumerate(axes.flat):
        if index < len(panels):
            _draw_panel(ax, panels[index], index)
        else:
            ax.remove()
    if suptitle is not None:
        fig.suptitle(suptitle)
    return fig
