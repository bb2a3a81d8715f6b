"""posenc: the tested helper package of *Position in Attention*.

Modules, one per family of position methods:

- :mod:`posenc.attention`: scaled dot-product attention and causal masks
- :mod:`posenc.multihead`: multi-head self-attention with a pluggable position scheme
- :mod:`posenc.absolute`: one-hot, sinusoidal and learned absolute encodings
- :mod:`posenc.relative`: Shaw et al. embeddings, T5 buckets, ALiBi
- :mod:`posenc.rotary`: rotary position embedding (RoPE)
- :mod:`posenc.rope2d`: axial two-dimensional RoPE for grids of positions
- :mod:`posenc.heads`: splitting features into attention heads and merging them back
- :mod:`posenc.scaling`: stretching RoPE to longer contexts (PI, NTK, dynamic NTK, YaRN, Llama 3.1)
- :mod:`posenc.plotting`: the book's figure helpers (a subpackage: a shared core in
  :mod:`posenc.plotting.core` and :mod:`posenc.plotting.panels`, one module per part of the book)
- :mod:`posenc.interactive`: figures that stay interactive on the static website (Plotly)
- :mod:`posenc.diagnostics`: checks that scores depend on positions only through offsets
- :mod:`posenc.measure`: the measurements the chapters make on tables, layers and trained models
  (a subpackage of one module per topic, imported as modules: ``from posenc.measure import
  longrange``)
- :mod:`posenc.utils`: seeding and machine description
- :mod:`posenc.claims`: the claims ledger, every measured fact of the prose checked against its value
- :mod:`posenc.benchmark`: timings of the RoPE implementations
- :mod:`posenc.experiments`: tasks, a tiny causal transformer, training and evaluation (Part V; a
  subpackage of one module each: ``config``, ``tasks``, ``model``, ``training``, ``evaluation``)
- :mod:`posenc.store`: the book's trained models, trained once by ``make train``, shipped as
  package data and loaded in seconds (``from posenc import store; store.load(name, seed)``; a
  subpackage: ``registry``, ``families``, ``files``, ``training``, ``provenance``, ``cli``)
- :mod:`posenc.stretch`: trained RoPE models given a context-extension rule, and their short
  fine-tunes (chapter 9)
- :mod:`posenc.corpus`: a fixed corpus of real text (CPython standard-library source, shipped
  with its hash and license) for character-level language models
- :mod:`posenc.exercises`: auto-checkers for the coding exercises, with diagnostic feedback
  (a subpackage: shared machinery in :mod:`posenc.exercises.checking`, one module per family)

Most public names are importable from ``posenc`` directly. The model store, the text corpus
and the stretch rules are used as modules (``from posenc import store``), and the checkers of
:mod:`posenc.exercises` are imported from that module.
"""

from . import exercises, plotting
from .absolute import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    one_hot_encoding,
    sinusoidal_encoding,
    sinusoidal_offset_matrix,
    sinusoidal_rows,
)
from .attention import attention_weights, causal_mask, scaled_dot_product_attention
from .benchmark import Timing, format_timings, median_time, rope_timings
from .claims import ClaimError, Ledger
from .diagnostics import relativity_gap, score_terms, similarity_by_distance, toeplitz_gap
from .experiments import (
    BEYOND_TABLE,
    IGNORE,
    SCHEDULES,
    TASKS,
    Evaluation,
    StopRule,
    TinyCausalLM,
    TrainConfig,
    TrainingRun,
    attention_entropy,
    build_model,
    cache_path,
    evaluate,
    evaluate_by_position,
    heldout_batch,
    make_batch,
    markov_transitions,
    sample_positions,
    train,
    train_or_load,
)
from .heads import merge_heads, split_heads
from .interactive import InteractiveFigure, glue_figure, grid_slider_figure, interactive_figure, slider_figure
from .multihead import POSITION_SCHEMES, MultiHeadSelfAttention
from .plotting import *  # noqa: F403  (every figure helper; the list is plotting.__all__)
from .relative import (
    RelativePositionEmbedding,
    T5RelativePositionBias,
    alibi_bias,
    alibi_slopes,
    clipped_relative_positions,
    relative_positions,
    shaw_attention,
    t5_relative_position_bucket,
)
from .rope2d import apply_rope_2d, rope_matrix_2d
from .rotary import (
    ROPE_LAYOUTS,
    RotaryEmbedding,
    apply_rope,
    apply_rope_complex,
    complex_pairs,
    half_to_interleaved,
    interleaved_to_half,
    rope_angles,
    rope_frequencies,
    rope_matrix,
    rotate_half,
    rotate_pairs,
)
from .scaling import (
    TransformersRope,
    dynamic_ntk_frequencies,
    full_turns,
    llama3_frequencies,
    ntk_frequencies,
    pi_frequencies,
    transformers_rope,
    yarn_frequencies,
)
from .utils import (
    SEED_OFFSET_VARIABLE,
    describe_machine,
    max_abs_diff,
    report,
    seed_everything,
    seed_offset,
    show_error,
)

__version__ = "0.1.0"

__all__ = [
    "ClaimError",
    "Ledger",
    "BEYOND_TABLE",
    "Evaluation",
    "IGNORE",
    "InteractiveFigure",
    "LearnedPositionalEmbedding",
    "MultiHeadSelfAttention",
    "POSITION_SCHEMES",
    "ROPE_LAYOUTS",
    "RelativePositionEmbedding",
    "RotaryEmbedding",
    "SCHEDULES",
    "SEED_OFFSET_VARIABLE",
    "SinusoidalPositionalEncoding",
    "StopRule",
    "T5RelativePositionBias",
    "TASKS",
    "Timing",
    "TinyCausalLM",
    "TrainConfig",
    "TrainingRun",
    "TransformersRope",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "apply_rope_2d",
    "apply_rope_complex",
    "attention_entropy",
    "attention_weights",
    "build_model",
    "cache_path",
    "causal_mask",
    "clipped_relative_positions",
    "complex_pairs",
    "describe_machine",
    "dynamic_ntk_frequencies",
    "evaluate",
    "evaluate_by_position",
    "exercises",
    "format_timings",
    "full_turns",
    "glue_figure",
    "grid_slider_figure",
    "half_to_interleaved",
    "heldout_batch",
    "interactive_figure",
    "interleaved_to_half",
    "llama3_frequencies",
    "make_batch",
    "markov_transitions",
    "max_abs_diff",
    "median_time",
    "merge_heads",
    "ntk_frequencies",
    "one_hot_encoding",
    "pi_frequencies",
    "relative_positions",
    "relativity_gap",
    "report",
    "rope_angles",
    "rope_frequencies",
    "rope_matrix",
    "rope_matrix_2d",
    "rope_timings",
    "rotate_half",
    "rotate_pairs",
    "sample_positions",
    "scaled_dot_product_attention",
    "score_terms",
    "seed_everything",
    "seed_offset",
    "show_error",
    "similarity_by_distance",
    "shaw_attention",
    "sinusoidal_encoding",
    "sinusoidal_offset_matrix",
    "sinusoidal_rows",
    "slider_figure",
    "split_heads",
    "t5_relative_position_bucket",
    "toeplitz_gap",
    "train",
    "train_or_load",
    "transformers_rope",
    "yarn_frequencies",
    *plotting.__all__,
]
