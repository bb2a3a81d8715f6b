"""Plotting helpers shared by the chapters, so every figure of a kind looks the same.

The book's figure-code convention (README, "Writing a chapter"): a chapter's figure is one call
to a function of this package, d2l-style; the notebook keeps only what it derives or measures.
Each function draws one *kind* of figure (a heatmap of a table, a curve by offset, a bias panel
per head, ...), takes data computed by the chapter, returns the matplotlib objects it made so a
chapter can annotate them, and is tested for what it draws (axes, labels, data).

A small core that every part draws with, as d2l's ``d2l.plot`` helpers are to that book, and one
module per part of the book; every function is importable from ``posenc.plotting`` (and from
``posenc``) itself:

- :mod:`posenc.plotting.core`: the book style, the data converters, heatmaps and labelled curves;
- :mod:`posenc.plotting.panels`: grids of line panels, described as data;
- :mod:`posenc.plotting.absolute`: Parts I–II (chapters 2–3, absolute encodings);
- :mod:`posenc.plotting.relative`: Part III (chapter 4, relative encodings);
- :mod:`posenc.plotting.rotary`: chapters 5–6 (Part IV, rotary embeddings);
- :mod:`posenc.plotting.longrange`: chapter 7 (Part IV, RoPE at long range);
- :mod:`posenc.plotting.implementations`: chapter 6 (Part IV, RoPE implementations: layouts, partial and 2-D);
- :mod:`posenc.plotting.extrapolation`: Part V (chapters 8–9, trained models beyond their length);
- :mod:`posenc.plotting.stretching`: chapter 9's text experiment (stretched models' loss by position);
- :mod:`posenc.plotting.permutation`: Part I (chapter 1, permutation equivariance);
- :mod:`posenc.plotting.learned`: chapter 2's trained window counter (Part II);
- :mod:`posenc.plotting.sinusoidal`: chapter 3's table, columns and wavelengths (Part II).
"""

from .absolute import (
    bits_as_sine_signs,
    curve_slider,
    extrapolation_panels,
    gram_by_offset,
    histograms,
    pair_on_circle,
    pair_walk,
    similarity_heatmaps,
    table_profile,
)
from .core import curves, heatmap, heatmaps, use_book_style, xy_curves
from .extrapolation import accuracy_panels, loss_by_position, loss_by_position_over_seeds, loss_curves
from .learned import moved_rows_and_accuracy
from .longrange import (
    WindowSummary,
    band_traces,
    bound_panels,
    decay_slider,
    log_windows,
    precision_panels,
    score_panels,
    wavelength_ladders,
)
from .panels import Curve, LinePanel, Reference, line_panels
from .permutation import counting_panels, permuted_maps
from .relative import SkewStages, bias_by_head_slider, curves_by_offset, offset_matrices, skew_diagram, skew_stages
from .rotary import (
    frequency_bands,
    offset_profiles,
    orbit_and_terms,
    plane_vectors,
    rotating_pairs_figure,
    scores_beside_profiles,
    weight_maps_with_difference,
)
from .sinusoidal import encoding_columns, encoding_heatmap, wavelength_progression
from .stretching import loss_by_position_panels

__all__ = [
    "heatmap",
    "heatmaps",
    "use_book_style",
    "curves",
    "histograms",
    "pair_walk",
    "similarity_heatmaps",
    "table_profile",
    "bits_as_sine_signs",
    "curve_slider",
    "extrapolation_panels",
    "gram_by_offset",
    "pair_on_circle",
    "xy_curves",
    "SkewStages",
    "skew_diagram",
    "skew_stages",
    "bias_by_head_slider",
    "curves_by_offset",
    "offset_matrices",
    "offset_profiles",
    "plane_vectors",
    "rotating_pairs_figure",
    "scores_beside_profiles",
    "frequency_bands",
    "weight_maps_with_difference",
    "orbit_and_terms",
    "Curve",
    "LinePanel",
    "Reference",
    "WindowSummary",
    "band_traces",
    "line_panels",
    "log_windows",
    "bound_panels",
    "decay_slider",
    "precision_panels",
    "score_panels",
    "wavelength_ladders",
    "accuracy_panels",
    "loss_by_position",
    "loss_by_position_over_seeds",
    "loss_by_position_panels",
    "loss_curves",
    "counting_panels",
    "permuted_maps",
    "moved_rows_and_accuracy",
    "wavelength_progression",
    "encoding_columns",
    "encoding_heatmap",
]

# Chapter 7's figures added by the cut of issue #30 (kept apart so the lists above stay as they are).
from .longrange import positional_profiles, slow_centre  # noqa: E402

__all__ += ["positional_profiles", "slow_centre"]

# Chapter 6's figures added by the cut of issue #30 (posenc.plotting.implementations).
from .implementations import layout_permutation, offset_score_maps, partial_rotary_parts  # noqa: E402

__all__ += ["layout_permutation", "offset_score_maps", "partial_rotary_parts"]

# Chapter 4's and chapter 5's figures added by the cut of issue #30.
from .plane import rotation_panels  # noqa: E402
from .relative import alibi_weight_curves, t5_bucket_panels  # noqa: E402

__all__ += ["t5_bucket_panels", "alibi_weight_curves", "rotation_panels"]
