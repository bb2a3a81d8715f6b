"""The figures of chapter 2's learned position tables (Part II) beyond those in ``absolute``.

The window counter's table after training: how far each row moved, beside the accuracy by
position on sequences as long as the table.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from .._validation import check_int
from .core import Vector, _as_vector, curves

__all__ = ["moved_rows_and_accuracy"]


def moved_rows_and_accuracy(
    change: Vector, accuracy: Vector, *, radius: int, train_len: int, baseline: float
) -> Figure:
    """Chapter 2's window counter on its whole table: how far each row moved, and the accuracy.

    Left: ``|row after - before|`` for every row of the table; right: the accuracy at each
    window centre ``radius, ..., N - radius - 1`` on sequences of the table's length ``N``,
    with the accuracy of always guessing the most frequent count. Both mark the end of the
    trained positions (between rows ``train_len - 1`` and ``train_len``).

    Args:
        change: ``(N,)`` distance each row of the table moved in training.
        accuracy: ``(N - 2 radius,)`` accuracy at each window centre.
        radius: the window radius ``r``.
        train_len: the training length.
        baseline: the accuracy of always guessing the most frequent count.

    Returns:
        The figure, two axes side by side.

    Raises:
        TypeError: if a series is not numeric or ``radius`` or ``train_len`` is not an integer.
        ValueError: if ``radius`` is negative, ``train_len`` is not positive, or ``accuracy``
            does not hold one value per window centre.
    """
    rows = len(_as_vector("change", change))
    radius = check_int("radius", radius, minimum=0)
    train_len = check_int("train_len", train_len, minimum=1)
    if len(_as_vector("accuracy", accuracy)) != rows - 2 * radius:
        raise ValueError(f"accuracy must hold {rows} - 2 * {radius} values, one per window centre")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 3.4))
    curves(
        {"change": change},
        left,
        xlabel="position",
        vlines=[train_len - 0.5],
        ylabel="|row after - before|",
        title="How far training moved each row",
    )
    curves(
        {"accuracy": (range(radius, rows - radius), accuracy)},
        right,
        xlabel="position i",
        ylabel="accuracy",
        vlines=[train_len - 0.5],
        title=f"Accuracy on sequences of length {rows}",
        baselines={"most frequent count": baseline},
    )
    return fig
