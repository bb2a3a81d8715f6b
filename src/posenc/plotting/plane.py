"""Chapter 5's figure of rotations in the plane (Part IV): a vector, one turn of it, its orbit.

Split from :mod:`posenc.plotting.rotary` (the cut of issue #30) so that module stays within its
size; it draws with :func:`posenc.plotting.rotary.plane_vectors`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .core import Matrix, _as_matrix, _as_vector
from .rotary import plane_vectors

__all__ = ["rotation_panels"]


def rotation_panels(x: Matrix, turned: Matrix, orbit: Matrix, *, angle: str = r"\pi/4", degrees: int = 45) -> Figure:
    """A plane vector and one rotation of it (left); its rotations ``B(m theta) x``, ``m = 0, 1, ...`` (right).

    Args:
        x: ``(2,)`` the vector.
        turned: ``(2,)`` ``x`` turned by ``angle``.
        orbit: ``(M, 2)`` ``x`` turned by ``m theta`` in row ``m`` (tips numbered ``0 .. M - 1``).
        angle, degrees: the left panel's angle, as TeX for the legend and in degrees for the title.

    Returns:
        The figure, two axes drawn by :func:`~posenc.plotting.rotary.plane_vectors`.

    Raises:
        TypeError, ValueError: as :func:`~posenc.plotting.rotary.plane_vectors`.
    """
    fig, (ax_turn, ax_positions) = plt.subplots(1, 2, figsize=(9, 4.4), layout="constrained")
    pair = np.stack([_as_vector("x", x), _as_vector("turned", turned)])
    plane_vectors(pair, ax_turn, labels=["$x$", rf"$B({angle})\,x$"], title=f"one rotation by {degrees}°")
    steps = len(_as_matrix("orbit", orbit))
    plane_vectors(
        orbit,
        ax_positions,
        tip_text=[str(m) for m in range(steps)],
        title=rf"$B(m\theta)\,x$ at positions $m = 0, \dots, {steps - 1}$",
    )
    return fig
