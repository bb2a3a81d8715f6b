r"""Auto-checkers for the coding exercises: run a student's function, diagnose its mistakes.

Each ``check_*`` function takes *your own* implementation of an exercise, runs it on hidden cases
(random inputs drawn from a private, seeded :class:`torch.Generator`, so the checker never touches
the global random state), compares it with the reference implementation of :mod:`posenc` and
tests properties the result must have. It returns a :class:`CheckResult`: true when everything
passed, and in every case a list of specific messages. A failed check says on which input your
function went wrong, what was expected and what it returned, and recognises the typical mistakes
(for instance sine and cosine swapped, a mask convention inverted or a rotation in the wrong
direction). The checker never raises because of your function: an exception inside it is
reported like a wrong answer.

In a notebook::

    from posenc.exercises import check_sinusoidal

    def my_encoding(seq_len, dim, base=10000.0):
        raise NotImplementedError  # replace this line with your code

    check_sinusoidal(my_encoding)        # displays the report
    assert check_sinusoidal(my_encoding)  # for autograding

Checkers:

- :func:`check_attention`: scaled dot-product attention with a boolean mask
- :func:`check_padded_positions`: RoBERTa-style position ids of a padded batch
- :func:`check_sinusoidal`: the sinusoidal encoding table
- :func:`check_shaw_index`: the rows of Shaw et al.'s table of clipped relative positions
- :func:`check_relative_shift`: Transformer-XL's relative shift ("skew"), with a memory
- :func:`check_t5_bucket`: T5's relative position buckets
- :func:`check_alibi_slopes`: ALiBi's per-head slopes
- :func:`check_apply_rope`: rotary position embedding
- :func:`check_repeat_kv`: key-value heads shared by query heads (grouped-query attention)
- :func:`check_apply_rope_2d`: axial two-dimensional RoPE on a grid of patches
- :func:`check_cross_attention` (ex-perm-2), :func:`check_position_recovery` (ex-perm-5),
  :func:`check_position_parameter_counts` (ex-abs-1), :func:`check_decayed_rows` (ex-abs-4),
  :func:`check_concatenated_sinusoidal` (ex-sin-6)
- :func:`check_alibi_bias_from_slopes` (ex-rel-4), :func:`check_reversal_gap` (ex-rel-8)
- :func:`check_unrotated_outputs` (ex-ropea-5), :func:`check_linear_rope_attention` (ex-ropea-6),
  :func:`check_decode_positions` (ex-ropeb-5), :func:`check_streaming_cache` (ex-ropeb-9),
  :func:`check_rope_matrix_2d_blocks` (ex-ropeb-10)
- :func:`check_slowest_wavelength`, :func:`check_expected_score`, :func:`check_score_asymmetry`,
  :func:`check_positional_head_query` (chapter 7)
- :func:`check_extended_rows`, :func:`check_alibi_bias_at_positions` (chapter 8)
- :func:`check_pi_frequencies`, :func:`check_ntk_frequencies`,
  :func:`check_dynamic_ntk_frequencies`, :func:`check_yarn_frequencies`,
  :func:`check_llama3_frequencies`: one per context-extension rule of Part V

The package is organised as two modules of shared machinery, :mod:`posenc.exercises.checking` (running the
student's function, collecting and reporting problems) and :mod:`posenc.exercises.comparing` (comparing with a
reference, naming the mistake that explains the wrong entries or the property they break, with the readings that
need no mistake model in a private module, ``posenc.exercises._readings``), the catalogue of generic readings
shared by every checker (the private module ``posenc.exercises._transforms``: the transformation of the right
answer that gives a wrong one, an argument one off, doubled, squared or inverted, the output scaled, shifted,
permuted or signed in part, a causal sum that sees later rows; each checker's docstring lists them), and one
module per family of checkers: :mod:`posenc.exercises.attention`, :mod:`posenc.exercises.foundations`,
:mod:`posenc.exercises.padded_positions`, :mod:`posenc.exercises.sinusoidal`, :mod:`posenc.exercises.relative`,
:mod:`posenc.exercises.t5_buckets`, :mod:`posenc.exercises.alibi_slopes`, :mod:`posenc.exercises.biases`,
:mod:`posenc.exercises.rotary`, :mod:`posenc.exercises.rotary_2d`, :mod:`posenc.exercises.rotations`,
:mod:`posenc.exercises.heads`, :mod:`posenc.exercises.longrange`, :mod:`posenc.exercises.extrapolation`,
:mod:`posenc.exercises.scaling` and :mod:`posenc.exercises.by_parts` (the last two share the machinery of
:mod:`posenc.exercises.frequency_rules`). The newer checkers compare with a reference and name the typical
mistake that explains every failed case, with the first input where the answer differs. Import the checkers from
here: the family modules are an implementation detail and may be reorganised.
"""


# In the book's order, which is the order of the API reference (autodoc_member_order: bysource).
from .checking import CheckResult  # noqa: I001
from .attention import check_attention
from .padded_positions import check_padded_positions
from .sinusoidal import check_sinusoidal
from .relative import check_shaw_index, check_relative_shift
from .t5_buckets import check_t5_bucket
from .alibi_slopes import check_alibi_slopes
from .rotary import check_apply_rope
from .heads import check_repeat_kv
from .rotary_2d import check_apply_rope_2d
from .foundations import (
    check_cross_attention,
    check_position_recovery,
    check_position_parameter_counts,
    check_decayed_rows,
    check_concatenated_sinusoidal,
)
from .biases import check_alibi_bias_from_slopes, check_reversal_gap, check_alibi_bias_at_positions
from .rotations import (
    check_unrotated_outputs,
    check_linear_rope_attention,
    check_decode_positions,
    check_streaming_cache,
    check_rope_matrix_2d_blocks,
)
from .longrange import (
    check_slowest_wavelength,
    check_expected_score,
    check_score_asymmetry,
    check_positional_head_query,
)
from .extrapolation import check_extended_rows
from .scaling import check_pi_frequencies, check_ntk_frequencies, check_dynamic_ntk_frequencies
from .by_parts import check_yarn_frequencies, check_llama3_frequencies

from ._transforms import _document_readings

# Each checker's docstring lists its generic readings, generated from one text so that the 33 lists agree.
for _checker in (check_attention, check_padded_positions, check_sinusoidal, check_shaw_index, check_relative_shift,
                 check_t5_bucket,
                 check_alibi_slopes, check_apply_rope, check_repeat_kv, check_apply_rope_2d, check_pi_frequencies,
                 check_ntk_frequencies, check_dynamic_ntk_frequencies, check_yarn_frequencies,
                 check_llama3_frequencies):
    _document_readings(_checker, "read on a few probe inputs chosen to separate mistakes")
for _checker in (check_cross_attention, check_position_recovery, check_position_parameter_counts, check_decayed_rows,
                 check_concatenated_sinusoidal, check_alibi_bias_from_slopes, check_reversal_gap,
                 check_alibi_bias_at_positions, check_unrotated_outputs, check_linear_rope_attention,
                 check_decode_positions, check_streaming_cache, check_rope_matrix_2d_blocks, check_slowest_wavelength,
                 check_expected_score, check_score_asymmetry, check_positional_head_query, check_extended_rows):
    _document_readings(_checker, "read on its hidden cases")
del _checker

__all__ = [
    "CheckResult",
    "check_alibi_bias_at_positions",
    "check_alibi_bias_from_slopes",
    "check_alibi_slopes",
    "check_apply_rope",
    "check_apply_rope_2d",
    "check_attention",
    "check_concatenated_sinusoidal",
    "check_cross_attention",
    "check_decayed_rows",
    "check_decode_positions",
    "check_dynamic_ntk_frequencies",
    "check_expected_score",
    "check_extended_rows",
    "check_linear_rope_attention",
    "check_llama3_frequencies",
    "check_ntk_frequencies",
    "check_padded_positions",
    "check_pi_frequencies",
    "check_position_parameter_counts",
    "check_position_recovery",
    "check_positional_head_query",
    "check_relative_shift",
    "check_repeat_kv",
    "check_reversal_gap",
    "check_rope_matrix_2d_blocks",
    "check_score_asymmetry",
    "check_shaw_index",
    "check_sinusoidal",
    "check_slowest_wavelength",
    "check_streaming_cache",
    "check_t5_bucket",
    "check_unrotated_outputs",
    "check_yarn_frequencies",
]
